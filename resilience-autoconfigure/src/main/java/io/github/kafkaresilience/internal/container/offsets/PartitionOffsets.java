package io.github.kafkaresilience.internal.container.offsets;

import java.util.Set;

/**
 * The offsets of one partition that were handed out but are not done yet, and the offset
 * that can be committed: the highest one below which every record is done (the contiguous
 * boundary). Some pending records may be <em>parked</em>: not held in memory, to be read
 * again from the broker when they can run. Both sets are kept as runs of offsets, so a
 * partition with a hundred thousand parked records costs a few runs, not a hundred
 * thousand entries. Not thread-safe; callers synchronize.
 *
 * @since 0.1.0
 */
public final class PartitionOffsets {

	private final OffsetRuns pending = new OffsetRuns();

	private final OffsetRuns parked = new OffsetRuns();

	private long next = -1;

	public void add(long offset) {
		this.pending.add(offset);
		this.next = Math.max(this.next, offset + 1);
	}

	public void done(long offset) {
		this.pending.remove(offset);
		this.parked.remove(offset);
	}

	/** Records pending and held in memory: what the in-flight bound counts. */
	public int inFlight() {
		return (int) (this.pending.size() - this.parked.size());
	}

	/**
	 * Marks a pending record as parked: it is dropped from memory and read again later.
	 */
	public void park(long offset) {
		if (this.pending.contains(offset)) {
			this.parked.add(offset);
		}
	}

	/** Takes a record read again out of the parked set; returns whether it was parked. */
	public boolean unpark(long offset) {
		return this.parked.remove(offset);
	}

	public boolean isParked(long offset) {
		return this.parked.contains(offset);
	}

	/** The smallest parked offset not below {@code offset}, or -1. */
	public long nextParked(long offset) {
		return this.parked.ceiling(offset);
	}

	public long parkedCount() {
		return this.parked.size();
	}

	/** Runs of consecutive parked offsets: what parking costs in memory. */
	public int parkedRuns() {
		return this.parked.runs();
	}

	/** The offset to commit once the pending record at {@code offset} is done too. */
	public long committableOnceDone(long offset) {
		return committableOnceDone(Set.of(offset));
	}

	/** The offset to commit once the pending records at {@code offsets} are done too. */
	public long committableOnceDone(Set<Long> offsets) {
		if (this.pending.isEmpty()) {
			return this.next;
		}
		long at = this.pending.first();
		while (offsets.contains(at)) {
			long above = this.pending.ceiling(at + 1);
			if (above < 0) {
				return this.next;
			}
			at = above;
		}
		return at;
	}

	/** The offset to commit, or -1 when no record was seen yet. */
	public long committable() {
		return this.pending.isEmpty() ? this.next : this.pending.first();
	}

}
