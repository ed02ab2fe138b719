package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * The figures of a container that its meters and the actuator endpoint read: depth and
 * lag of each partition, records held and parked, the busiest key, closed barriers and
 * stopped partitions. Computed from the partitions on each call.
 */
final class ContainerStats {

	private final Partitions partitions;

	ContainerStats(Partitions partitions) {
		this.partitions = partitions;
	}

	/**
	 * Notes the end offset of each partition assigned to a consumer as of its last fetch
	 * (no request: the fetch responses carry it), for {@link #lag}. On that consumer's
	 * poll thread.
	 */
	void noteEndOffsets(Consumer<?, ?> consumer, Collection<PartitionWork> assigned) {
		for (PartitionWork work : assigned) {
			try {
				OptionalLong behind = consumer.currentLag(work.partition);
				if (behind.isPresent()) {
					work.endOffset = consumer.position(work.partition, Duration.ZERO) + behind.getAsLong();
					work.fetchLag = behind.getAsLong();
				}
			}
			catch (RuntimeException ex) {
				// no position yet: the partition has not been fetched from
			}
		}
	}

	/** See {@link RetryContainer#lag(TopicPartition)}. */
	OptionalLong lag(TopicPartition partition) {
		PartitionWork work = this.partitions.get(partition);
		if (work == null || work.endOffset < 0) {
			return OptionalLong.empty();
		}
		long from = work.firstPending();
		// nothing read since the assignment: the consumer's own lag is the partition's
		return OptionalLong.of((from < 0) ? work.fetchLag : Math.max(0, work.endOffset - from));
	}

	/** See {@link RetryContainer#closedBarriers()}. */
	Map<TopicPartition, Duration> closedBarriers() {
		long now = System.nanoTime();
		Map<TopicPartition, Duration> closed = new HashMap<>();
		for (PartitionWork work : this.partitions.all()) {
			if (!work.barrierOpen) {
				closed.put(work.partition, Duration.ofNanos(now - work.assignedNanos));
			}
		}
		return closed;
	}

	/** See {@link RetryContainer#stoppedPartitions()}. */
	Map<TopicPartition, String> stoppedPartitions() {
		Map<TopicPartition, String> stopped = new HashMap<>();
		for (PartitionWork work : this.partitions.all()) {
			String reason = work.stopped;
			if (reason != null) {
				stopped.put(work.partition, reason);
			}
		}
		return stopped;
	}

	/** See {@link RetryContainer#load()}. */
	RetryContainer.Load load() {
		long inFlight = 0;
		long parked = 0;
		int busiestPartition = 0;
		int busiestKey = 0;
		for (PartitionWork work : this.partitions.all()) {
			int held = work.inFlight();
			inFlight += held;
			busiestPartition = Math.max(busiestPartition, held);
			parked += work.parked.count();
			busiestKey = Math.max(busiestKey, work.busiestKeyDepth());
		}
		return new RetryContainer.Load(inFlight, parked, busiestPartition, busiestKey);
	}

}
