package io.github.kafkaresilience.container;

import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;

import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * What one pass of the re-reader takes back of a partition's parked records, which it reads in
 * offset order. Two kinds of pass:
 * <ul>
 * <li>a pass for due records takes back each record that is nearly due and stops at the first
 * one that is not (a later retry of the same stage is due later still);</li>
 * <li>a pass for operators' commands (docs/PROTOCOL.md, rule 11) takes back the records the
 * commands name, whatever their due time, and leaves every other key's records parked, whatever
 * theirs.</li>
 * </ul>
 * In both, a record behind one of its key taken back in the same pass is taken back too. And in
 * both, no record is taken back while an earlier record of its key stays parked: it would queue
 * ahead of that record, which runs first, and wait for it for ever. That is why a command pass
 * leaves a key's follower parked even when it may run at once: its head stays parked.
 */
final class ParkedPass {

	/** What becomes of one parked record read in the pass. */
	enum Verdict {

		/** Taken back: handed to its partition. */
		TAKE,

		/** Left parked; the pass goes on. */
		LEAVE,

		/** Left parked, and the pass ends here. */
		STOP

	}

	private final Set<Long> commanded;

	/** The commanded offsets not taken back yet. */
	private final TreeSet<Long> left;

	private final long lead;

	/** The keys of the records taken back so far. */
	private final Set<Bytes> taken = new HashSet<>();

	/** The keys of the records left parked so far. */
	private final Set<Bytes> leftParked = new HashSet<>();

	private long resumeAt = Long.MAX_VALUE;

	private ParkedPass(Set<Long> commanded, long lead) {
		this.commanded = commanded;
		this.left = new TreeSet<>(commanded);
		this.lead = lead;
	}

	/**
	 * A pass for due records.
	 * @param lead how long before its due time a record is taken back, in millis
	 */
	static ParkedPass forDueRecords(long lead) {
		return new ParkedPass(Set.of(), lead);
	}

	/** A pass for the records at {@code offsets}, which operators' commands name. */
	static ParkedPass forCommands(Set<Long> offsets) {
		if (offsets.isEmpty()) {
			throw new IllegalArgumentException("A pass for commands needs the offsets they name");
		}
		return new ParkedPass(Set.copyOf(offsets), 0);
	}

	/** The offset the pass reads from: the first commanded record, or {@code firstParked}. */
	long from(long firstParked) {
		return this.commanded.isEmpty() ? firstParked : this.left.first();
	}

	/**
	 * Decides for the next parked record read.
	 * @param offset its offset
	 * @param key its business key, or {@code null}
	 * @param due when it may run, epoch millis; asked only of a pass for due records
	 * @param now the time now, epoch millis
	 */
	Verdict next(long offset, @Nullable Bytes key, LongSupplier due, long now) {
		boolean behindTaken = key != null && this.taken.contains(key);
		if (!this.commanded.isEmpty()) {
			if (key != null && this.leftParked.contains(key)) {
				this.left.remove(offset); // behind a record of its key left parked: it runs in its key's turn
				return Verdict.LEAVE;
			}
			if (!behindTaken && !this.commanded.contains(offset)) {
				if (key != null) {
					this.leftParked.add(key);
				}
				return Verdict.LEAVE;
			}
		}
		else if (!behindTaken) {
			long lookAt = due.getAsLong() - this.lead;
			if (lookAt > now) {
				this.resumeAt = lookAt;
				return Verdict.STOP;
			}
		}
		if (key != null) {
			this.taken.add(key);
		}
		this.left.remove(offset);
		return Verdict.TAKE;
	}

	/** When the next pass for due records should look, once this one stopped; epoch millis. */
	long resumeAt() {
		return this.resumeAt;
	}

	/** The commanded offsets not taken back (yet): a pass cut short leaves some. */
	Set<Long> commandedLeft() {
		return Set.copyOf(this.left);
	}

}
