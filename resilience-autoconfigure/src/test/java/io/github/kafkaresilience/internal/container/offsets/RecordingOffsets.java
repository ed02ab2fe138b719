package io.github.kafkaresilience.internal.container.offsets;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.kafkaresilience.ladder.Delivery;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The offsets of a listener as the tests set them: the committable ones are whatever the
 * test puts in {@link #committable}, the offsets after some records are done are the next
 * offset of each, and every commit is noted in {@link #noted}.
 */
public final class RecordingOffsets implements CommittableOffsets {

	public final Map<TopicPartition, OffsetAndMetadata> committable = new HashMap<>();

	public final List<Map<TopicPartition, OffsetAndMetadata>> noted = new CopyOnWriteArrayList<>();

	public RecordingOffsets() {
	}

	public RecordingOffsets(Map<TopicPartition, OffsetAndMetadata> committable) {
		this.committable.putAll(committable);
	}

	@Override
	public Map<TopicPartition, OffsetAndMetadata> afterDone(Collection<Delivery> records) {
		Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
		for (Delivery record : records) {
			offsets.put(new TopicPartition(record.topic(), record.partition()),
					new OffsetAndMetadata(record.offset() + 1));
		}
		return offsets;
	}

	@Override
	public Map<TopicPartition, OffsetAndMetadata> committable() {
		return Map.copyOf(this.committable);
	}

	@Override
	public void committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
		this.noted.add(offsets);
	}

	@Override
	public Map<ConsumerGroupMetadata, Map<TopicPartition, OffsetAndMetadata>> byGroup(
			Map<TopicPartition, OffsetAndMetadata> offsets) {
		return Map.of(new ConsumerGroupMetadata("g"), offsets);
	}

}
