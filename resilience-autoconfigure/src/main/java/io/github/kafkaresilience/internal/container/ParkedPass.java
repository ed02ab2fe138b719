package io.github.kafkaresilience.internal.container;

import java.util.HashSet;
import java.util.Set;
import java.util.function.LongSupplier;

import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * What one pass of the re-reader takes back of a partition's parked records, which it
 * reads in offset order from the first one. Two kinds of pass:
 * <ul>
 * <li>a pass for due records takes back each record that is nearly due and stops at the
 * first one that is not (a later retry of the same stage is due later still), unless an
 * earlier record of its key was taken back in the same pass;</li>
 * <li>a pass for operators' commands (docs/PROTOCOL.md, rule 11) takes back every parked
 * record of the keys whose records the commands name, whatever their due time, and leaves
 * every other key's records parked, whatever theirs.</li>
 * </ul>
 * Either way a pass takes back a key's parked records from its first one on, in offset
 * order, and no record while an earlier one of its key stays parked: taken back, it would
 * queue ahead of that record in its key's queue, where records run in offset order, and
 * wait for it for ever if that record's lock comes before its own (a follower parked
 * behind its head; a head re-appended to the last stage behind its own followers). A pass
 * the partition cuts short (no room in its in-flight bound) keeps that order too: nothing
 * after the refused record is taken.
 */
final class ParkedPass {

	/** What becomes of one parked record read in the pass. */
	enum Verdict {

		/**
		 * To be taken back: handed to its partition; the pass ends if the partition
		 * refuses it.
		 */
		TAKE,

		/** Left parked; the pass goes on. */
		LEAVE,

		/** Left parked, and the pass ends here. */
		STOP

	}

	private final Set<Bytes> commandedKeys;

	private final long lead;

	/** The keys of the records taken back so far by a pass for due records. */
	private final Set<Bytes> taken = new HashSet<>();

	private long resumeAt = Long.MAX_VALUE;

	private ParkedPass(Set<Bytes> commandedKeys, long lead) {
		this.commandedKeys = commandedKeys;
		this.lead = lead;
	}

	/**
	 * A pass for due records.
	 * @param lead how long before its due time a record is taken back, in millis
	 */
	static ParkedPass forDueRecords(long lead) {
		return new ParkedPass(Set.of(), lead);
	}

	/** A pass for the keys of the records that operators' commands name. */
	static ParkedPass forCommands(Set<Bytes> keys) {
		if (keys.isEmpty()) {
			throw new IllegalArgumentException("A pass for commands needs the keys of the records they name");
		}
		return new ParkedPass(Set.copyOf(keys), 0);
	}

	/**
	 * Decides for the next parked record read.
	 * @param key its business key, or {@code null}
	 * @param due when it may run, epoch millis; asked only of a pass for due records
	 * @param now the time now, epoch millis
	 */
	Verdict next(@Nullable Bytes key, LongSupplier due, long now) {
		if (!this.commandedKeys.isEmpty()) {
			return (key != null && this.commandedKeys.contains(key)) ? Verdict.TAKE : Verdict.LEAVE;
		}
		if (key == null || !this.taken.contains(key)) {
			long lookAt = due.getAsLong() - this.lead;
			if (lookAt > now) {
				this.resumeAt = lookAt;
				return Verdict.STOP;
			}
		}
		if (key != null) {
			this.taken.add(key);
		}
		return Verdict.TAKE;
	}

	/**
	 * When the next pass for due records should look, once this one stopped; epoch
	 * millis.
	 */
	long resumeAt() {
		return this.resumeAt;
	}

}
