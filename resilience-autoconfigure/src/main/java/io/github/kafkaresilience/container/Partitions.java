package io.github.kafkaresilience.container;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The partitions assigned to a container's consumer, and where each dropped one was when it
 * was let go: a partition assigned back before its commit restarts there.
 */
final class Partitions {

	private final Map<TopicPartition, PartitionWork> assigned = new ConcurrentHashMap<>();

	/** Poll thread only. */
	private final Map<TopicPartition, Long> droppedAt = new HashMap<>();

	void add(PartitionWork work) {
		this.assigned.put(work.partition, work);
	}

	@Nullable PartitionWork get(TopicPartition partition) {
		return this.assigned.get(partition);
	}

	/** Whether {@code work} is still the assignment of its partition. */
	boolean isCurrent(PartitionWork work) {
		return this.assigned.get(work.partition) == work;
	}

	Collection<PartitionWork> all() {
		return this.assigned.values();
	}

	Set<TopicPartition> topicPartitions() {
		return this.assigned.keySet();
	}

	/** Revokes and forgets partitions, noting where each was. Poll thread only. */
	void drop(Collection<TopicPartition> partitions) {
		for (TopicPartition tp : partitions) {
			PartitionWork work = this.assigned.remove(tp);
			if (work != null) {
				this.droppedAt.put(tp, work.revoke());
			}
		}
	}

	/** Where a dropped partition was (its first offset not done), or -1; forgets it. */
	long takeDroppedAt(TopicPartition partition) {
		Long at = this.droppedAt.remove(partition);
		return (at != null) ? at : -1;
	}

	/** Revokes and forgets every partition, as on stop. */
	void clear() {
		this.assigned.values().forEach(PartitionWork::revoke);
		this.assigned.clear();
	}

}
