package io.github.kafkaresilience.internal.container.offsets;

import java.util.Map;
import java.util.TreeMap;

/**
 * A set of offsets kept as runs of consecutive offsets, so that its memory grows with the
 * number of runs and not with the number of offsets: a partition's pending offsets are
 * mostly one long run with a few holes. Not thread-safe; callers synchronize.
 *
 * @since 0.1.0
 */
public final class OffsetRuns {

	/** First offset of each run to its last offset. */
	private final TreeMap<Long, Long> runs = new TreeMap<>();

	private long size;

	/** Adds an offset; returns whether it was absent. */
	public boolean add(long offset) {
		Map.Entry<Long, Long> lastRun = this.runs.lastEntry();
		if (lastRun != null && lastRun.getValue() == offset - 1) {
			// the common case: the next offset of a partition, read in order
			this.runs.put(lastRun.getKey(), offset);
			this.size++;
			return true;
		}
		Map.Entry<Long, Long> below = this.runs.floorEntry(offset);
		if (below != null && below.getValue() >= offset) {
			return false;
		}
		long first = offset;
		long last = offset;
		if (below != null && below.getValue() == offset - 1) {
			first = below.getKey();
		}
		Long after = this.runs.get(offset + 1);
		if (after != null) {
			this.runs.remove(offset + 1);
			last = after;
		}
		this.runs.put(first, last);
		this.size++;
		return true;
	}

	/** Removes an offset; returns whether it was present. */
	public boolean remove(long offset) {
		Map.Entry<Long, Long> run = this.runs.floorEntry(offset);
		if (run == null || run.getValue() < offset) {
			return false;
		}
		long first = run.getKey();
		long last = run.getValue();
		if (first == offset) {
			this.runs.remove(first);
		}
		else {
			this.runs.put(first, offset - 1);
		}
		if (last > offset) {
			this.runs.put(offset + 1, last);
		}
		this.size--;
		return true;
	}

	public boolean contains(long offset) {
		Map.Entry<Long, Long> run = this.runs.floorEntry(offset);
		return run != null && run.getValue() >= offset;
	}

	/** The smallest offset not below {@code offset}, or -1 when there is none. */
	public long ceiling(long offset) {
		Map.Entry<Long, Long> run = this.runs.floorEntry(offset);
		if (run != null && run.getValue() >= offset) {
			return offset;
		}
		Long next = this.runs.higherKey(offset);
		return (next != null) ? next : -1;
	}

	/** The smallest offset, or -1 when the set is empty. */
	public long first() {
		return this.runs.isEmpty() ? -1 : this.runs.firstKey();
	}

	/** The largest offset, or -1 when the set is empty. */
	public long last() {
		return this.runs.isEmpty() ? -1 : this.runs.lastEntry().getValue();
	}

	public boolean isEmpty() {
		return this.runs.isEmpty();
	}

	public long size() {
		return this.size;
	}

	/** How many runs of consecutive offsets the set holds: what its memory grows with. */
	public int runs() {
		return this.runs.size();
	}

}
