package io.github.kafkaresilience.internal.dlq;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;

import io.github.kafkaresilience.dlq.ScanPosition;

/**
 * How far a read of a dead-letter topic got, for the browser and the replay alike: the
 * records scanned, whether the limit of a request is reached, and the next offset of each
 * partition, so that a scan that stops early can say where.
 */
public final class ScanProgress {

	private final long limit;

	private final Map<TopicPartition, Long> next = new HashMap<>();

	private long scanned;

	/**
	 * @param limit the most records to scan; {@link Long#MAX_VALUE} for no limit
	 */
	public ScanProgress(long limit) {
		if (limit < 1) {
			throw new IllegalArgumentException("A scan reads at least 1 record, not " + limit);
		}
		this.limit = limit;
	}

	/** Notes where each partition being read starts (after its seek). */
	public void start(Consumer<byte[], byte[]> consumer, Set<TopicPartition> reading) {
		for (TopicPartition partition : reading) {
			this.next.put(partition, consumer.position(partition));
		}
	}

	/** Whether the limit is reached: the scan must stop before the next record. */
	public boolean isFull() {
		return this.scanned >= this.limit;
	}

	/** Counts a record read. */
	public void scanned(TopicPartition partition, long offset) {
		this.scanned++;
		this.next.put(partition, offset + 1);
	}

	public long scanned() {
		return this.scanned;
	}

	/**
	 * Where the scan stopped in each partition of {@code reading} it did not read to its
	 * end; empty when it read everything.
	 */
	public List<ScanPosition> stoppedAt(Set<TopicPartition> reading, Map<TopicPartition, Long> ends) {
		List<ScanPosition> stopped = new ArrayList<>();
		for (TopicPartition partition : reading) {
			long offset = this.next.getOrDefault(partition, 0L);
			if (offset < Objects.requireNonNull(ends.get(partition))) {
				stopped.add(new ScanPosition(partition.partition(), offset));
			}
		}
		stopped.sort(Comparator.comparingInt(ScanPosition::partition));
		return List.copyOf(stopped);
	}

}
