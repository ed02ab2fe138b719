package io.github.kafkaresilience.listener;

import java.util.TreeSet;

/**
 * The offsets of one partition that were handed out but are not done yet, and the offset that
 * can be committed: the highest one below which every record is done (the contiguous
 * boundary). Not thread-safe; callers synchronize.
 *
 * @since 0.1.0
 */
final class OffsetTracker {

	private final TreeSet<Long> pending = new TreeSet<>();

	private long next = -1;

	void add(long offset) {
		this.pending.add(offset);
		this.next = Math.max(this.next, offset + 1);
	}

	void done(long offset) {
		this.pending.remove(offset);
	}

	int inFlight() {
		return this.pending.size();
	}

	/** The offset to commit once the pending record at {@code offset} is done too. */
	long committableOnceDone(long offset) {
		if (this.pending.isEmpty() || this.pending.first() != offset) {
			return committable();
		}
		Long above = this.pending.higher(offset);
		return (above != null) ? above : this.next;
	}

	/** The offset to commit, or -1 when no record was seen yet. */
	long committable() {
		return this.pending.isEmpty() ? this.next : this.pending.first();
	}

}
