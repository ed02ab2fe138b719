package io.github.kafkaresilience.internal.dlq;

import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Where a read of a dead-letter topic starts, shared by the replay and the browser: the
 * topic's partitions, and the first record of each written at or after a time.
 */
public final class TopicReads {

	private TopicReads() {
	}

	/**
	 * The partitions of {@code topic}.
	 * @param missing the message when it does not exist, with {@code %s} for the topic
	 * @throws IllegalArgumentException when it does not exist
	 */
	public static List<TopicPartition> partitionsOf(Consumer<byte[], byte[]> consumer, String topic, String missing) {
		List<PartitionInfo> partitions = consumer.partitionsFor(topic);
		if (partitions == null || partitions.isEmpty()) {
			throw new IllegalArgumentException(missing.formatted(topic));
		}
		return partitions.stream().map((info) -> new TopicPartition(topic, info.partition())).toList();
	}

	/**
	 * Seeks each partition to its first record written at or after {@code since} (its
	 * beginning when {@code since} is {@code null}); returns those with anything to read.
	 */
	public static Set<TopicPartition> seekSince(Consumer<byte[], byte[]> consumer, List<TopicPartition> partitions,
			@Nullable Instant since) {
		Set<TopicPartition> reading = new HashSet<>(partitions);
		if (since == null) {
			consumer.seekToBeginning(partitions);
			return reading;
		}
		Map<TopicPartition, Long> query = new HashMap<>();
		partitions.forEach((partition) -> query.put(partition, since.toEpochMilli()));
		Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(query);
		for (TopicPartition partition : partitions) {
			OffsetAndTimestamp start = found.get(partition);
			if (start != null) {
				consumer.seek(partition, start.offset());
			}
			else {
				reading.remove(partition); // nothing written since then
			}
		}
		return reading;
	}

}
