package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads a topic (all its partitions) from the beginning, in steps: each
 * {@link #readNew()} returns the records written since the previous one, up to the end as
 * of that call. A checker that looks again and again at a growing topic thus reads each
 * record once.
 */
final class TopicTail implements AutoCloseable {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private final String topic;

	private final KafkaConsumer<byte[], byte[]> consumer;

	private List<TopicPartition> partitions = List.of();

	/**
	 * @param bootstrapServers where the brokers are
	 * @param topic the topic; one that does not exist yet reads as empty until it does
	 * @param committedOnly whether to read as a read-committed consumer: records of
	 * aborted and still open transactions are left out, as the library's own consumers
	 * leave them out
	 */
	TopicTail(String bootstrapServers, String topic, boolean committedOnly) {
		Map<String, Object> config = new HashMap<>();
		config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, committedOnly ? "read_committed" : "read_uncommitted");
		// reading must not create the topic: a checker that runs before the application
		// provisioned it would leave it with the broker's defaults (not compacted)
		config.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
		this.topic = topic;
		this.consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
	}

	/** Every record of a topic, read from the beginning to the current end. */
	static List<ConsumerRecord<byte[], byte[]>> readAll(String bootstrapServers, String topic, boolean committedOnly) {
		try (TopicTail tail = new TopicTail(bootstrapServers, topic, committedOnly)) {
			return tail.readNew();
		}
	}

	/** The records after those read before, up to the end of each partition as of now. */
	List<ConsumerRecord<byte[], byte[]>> readNew() {
		if (this.partitions.isEmpty()) {
			this.partitions = this.consumer.partitionsFor(this.topic, TIMEOUT)
				.stream()
				.map((info) -> new TopicPartition(this.topic, info.partition()))
				.toList();
			if (this.partitions.isEmpty()) {
				return List.of(); // not created yet
			}
			this.consumer.assign(this.partitions);
			this.consumer.seekToBeginning(this.partitions);
		}
		Map<TopicPartition, Long> ends = this.consumer.endOffsets(this.partitions, TIMEOUT);
		List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (this.partitions.stream().anyMatch((tp) -> this.consumer.position(tp, TIMEOUT) < ends.get(tp))) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Could not read " + this.topic + " to its end within " + TIMEOUT);
			}
			this.consumer.poll(Duration.ofMillis(200)).forEach(records::add);
		}
		return records;
	}

	@Override
	public void close() {
		this.consumer.close();
	}

}
