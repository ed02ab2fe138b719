package io.github.kafkaresilience.internal.container;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.kafkaresilience.internal.container.offsets.CommittableOffsets;
import io.github.kafkaresilience.ladder.Delivery;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The offsets of a container's assigned partitions: what may be committed (never below
 * what was committed in this assignment) and what was; a view may be narrowed to some
 * partitions.
 */
final class ContainerOffsets implements CommittableOffsets {

	private final String id;

	private final Partitions partitions;

	private final Collection<TopicPartition> scope;

	private final ContainerOffsets root;

	/**
	 * The group metadata of the consumer of each topic as of its last poll, in
	 * {@code transaction} mode: an offset goes into a transaction with its consumer's.
	 */
	private final Map<String, ConsumerGroupMetadata> groups = new ConcurrentHashMap<>();

	ContainerOffsets(String id, Partitions partitions) {
		this(id, partitions, List.of(), null);
	}

	private ContainerOffsets(String id, Partitions partitions, Collection<TopicPartition> scope,
			@Nullable ContainerOffsets root) {
		this.id = id;
		this.partitions = partitions;
		this.scope = scope;
		this.root = (root != null) ? root : this;
	}

	/** A view of the offsets of some partitions only, for {@link #committable()}. */
	ContainerOffsets of(Collection<TopicPartition> which) {
		return new ContainerOffsets(this.id, this.partitions, which, this.root);
	}

	/**
	 * Notes a consumer's group metadata, read on its poll thread, for the topics it
	 * reads.
	 */
	void noteGroup(ConsumerGroupMetadata group, Collection<String> topics) {
		for (String topic : topics) {
			this.root.groups.put(topic, group);
		}
	}

	@Override
	public Map<TopicPartition, OffsetAndMetadata> committable() {
		Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
		for (TopicPartition tp : this.scope) {
			PartitionWork work = this.partitions.get(tp);
			if (work != null) {
				put(offsets, tp, work.committable());
			}
		}
		return offsets;
	}

	@Override
	public Map<TopicPartition, OffsetAndMetadata> afterDone(Collection<Delivery> records) {
		Map<TopicPartition, Set<Long>> byPartition = new HashMap<>();
		for (Delivery record : records) {
			byPartition.computeIfAbsent(new TopicPartition(record.topic(), record.partition()), (tp) -> new HashSet<>())
				.add(record.offset());
		}
		Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
		byPartition.forEach((tp, done) -> {
			PartitionWork work = this.partitions.get(tp);
			if (work != null) {
				put(offsets, tp, work.committableOnceDone(done));
			}
		});
		return offsets;
	}

	private static void put(Map<TopicPartition, OffsetAndMetadata> offsets, TopicPartition tp, OptionalLong offset) {
		if (offset.isPresent()) {
			offsets.put(tp, new OffsetAndMetadata(offset.getAsLong()));
		}
	}

	@Override
	public void committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
		offsets.forEach((tp, offset) -> {
			PartitionWork work = this.partitions.get(tp);
			if (work != null) {
				work.committed(offset.offset());
			}
		});
	}

	@Override
	public Map<ConsumerGroupMetadata, Map<TopicPartition, OffsetAndMetadata>> byGroup(
			Map<TopicPartition, OffsetAndMetadata> offsets) {
		Map<ConsumerGroupMetadata, Map<TopicPartition, OffsetAndMetadata>> byGroup = new LinkedHashMap<>();
		offsets.forEach((tp, offset) -> {
			ConsumerGroupMetadata group = this.root.groups.get(tp.topic());
			if (group == null) {
				throw new IllegalStateException("Listener '" + this.id + "' has not joined its group yet with the "
						+ "consumer of '" + tp.topic() + "'");
			}
			byGroup.computeIfAbsent(group, (g) -> new HashMap<>()).put(tp, offset);
		});
		return byGroup;
	}

}
