package io.github.kafkaresilience.internal.container.offsets;

import java.util.Collection;
import java.util.Map;

import io.github.kafkaresilience.ladder.Delivery;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The offsets a listener commits, asked for while commits take turns so that a commit
 * never goes below one made before it.
 */
public interface CommittableOffsets {

	/**
	 * The offsets to commit once {@code records} are done: only those above the committed
	 * ones.
	 */
	Map<TopicPartition, OffsetAndMetadata> afterDone(Collection<Delivery> records);

	/** The offsets that can be committed now: only those above the committed ones. */
	Map<TopicPartition, OffsetAndMetadata> committable();

	/** Notes offsets as committed. */
	void committed(Map<TopicPartition, OffsetAndMetadata> offsets);

	/**
	 * Offsets by the group metadata, as of its last poll, of the consumer that reads
	 * their partitions: what a transaction sends them with.
	 */
	Map<ConsumerGroupMetadata, Map<TopicPartition, OffsetAndMetadata>> byGroup(
			Map<TopicPartition, OffsetAndMetadata> offsets);

}
