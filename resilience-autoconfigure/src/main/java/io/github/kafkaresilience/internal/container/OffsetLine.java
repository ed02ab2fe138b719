package io.github.kafkaresilience.internal.container;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Records whose step waits until every earlier record of their partition is done: the
 * step of a successful {@code @SendTo} attempt in {@code transaction} mode. Its
 * transaction commits the reply together with the partition's committable offset; were
 * the record's offset not committable yet (an earlier record still running), a crash or a
 * rebalance would hand the record to an owner that runs it again and commits a second
 * reply. Once the record is the first pending of its partition, its step runs and the
 * offset it commits passes it.
 * <p>
 * A record is handed on when it is first pending as it arrives, or when a record of its
 * partition is done ({@link #released}); one whose partition was revoked meanwhile is
 * dropped, and its next owner runs it.
 */
final class OffsetLine {

	private final Map<PartitionWork, TreeMap<Long, Runnable>> waiting = new HashMap<>();

	/**
	 * Runs {@code step} once the record at {@code offset} is the first pending record of
	 * its partition: now, or when the records before it are done.
	 */
	void await(PartitionWork work, long offset, Runnable step) {
		synchronized (this) {
			this.waiting.computeIfAbsent(work, (w) -> new TreeMap<>()).put(offset, step);
		}
		released(work);
	}

	/**
	 * A record of {@code work} is done, or a record joined the line: runs the step that
	 * may run now.
	 */
	void released(PartitionWork work) {
		Runnable step;
		synchronized (this) {
			TreeMap<Long, Runnable> line = this.waiting.get(work);
			if (line == null) {
				return;
			}
			if (work.isRevoked()) {
				this.waiting.remove(work);
				return;
			}
			step = line.remove(work.firstPending());
			if (line.isEmpty()) {
				this.waiting.remove(work);
			}
		}
		if (step != null) {
			step.run();
		}
	}

	/** How many records wait for the records before them. */
	synchronized int size() {
		return this.waiting.values().stream().mapToInt(Map::size).sum();
	}

}
