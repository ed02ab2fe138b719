package io.github.kafkaresilience.internal.container;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The partitions assigned to a container's consumers, and where each dropped one was when
 * it was let go: a partition assigned back before its commit restarts there. Each
 * consumer sees its own partitions through a {@link #side side}, kept as they change, so
 * that its poll loop goes through them without filtering at every turn.
 */
public final class Partitions {

	private final Map<TopicPartition, PartitionWork> assigned = new ConcurrentHashMap<>();

	private final Map<TopicPartition, Long> droppedAt = new ConcurrentHashMap<>();

	private final List<Side> sides = new CopyOnWriteArrayList<>();

	/**
	 * The partitions of the topics {@code topics} accepts, as they are assigned and
	 * dropped: what one consumer of the container holds.
	 */
	Side side(Predicate<String> topics) {
		Side side = new Side(topics);
		this.assigned.values().forEach(side::add);
		this.sides.add(side);
		return side;
	}

	void add(PartitionWork work) {
		this.assigned.put(work.partition, work);
		for (Side side : this.sides) {
			side.add(work);
		}
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

	/**
	 * Revokes and forgets partitions, noting where each was. On the poll thread of their
	 * consumer.
	 */
	void drop(Collection<TopicPartition> partitions) {
		for (TopicPartition tp : partitions) {
			PartitionWork work = this.assigned.remove(tp);
			if (work != null) {
				for (Side side : this.sides) {
					side.remove(work);
				}
				this.droppedAt.put(tp, work.revoke());
			}
		}
	}

	/** Where a dropped partition was (its first offset not done), or -1; forgets it. */
	long takeDroppedAt(TopicPartition partition) {
		Long at = this.droppedAt.remove(partition);
		return (at != null) ? at : -1;
	}

	/** Revokes and forgets every partition, and the sides, as on stop. */
	void clear() {
		this.assigned.values().forEach(PartitionWork::revoke);
		this.assigned.clear();
		this.sides.forEach(Side::clear);
		this.sides.clear();
	}

	/** The partitions of some topics: those one consumer of the container holds. */
	static final class Side {

		private final Predicate<String> topics;

		private final Map<TopicPartition, PartitionWork> works = new ConcurrentHashMap<>();

		private Side(Predicate<String> topics) {
			this.topics = topics;
		}

		Collection<PartitionWork> all() {
			return this.works.values();
		}

		@Nullable PartitionWork get(TopicPartition partition) {
			return this.works.get(partition);
		}

		Set<TopicPartition> topicPartitions() {
			return this.works.keySet();
		}

		private void add(PartitionWork work) {
			if (this.topics.test(work.partition.topic())) {
				this.works.put(work.partition, work);
			}
		}

		private void remove(PartitionWork work) {
			this.works.remove(work.partition, work);
		}

		private void clear() {
			this.works.clear();
		}

	}

}
