package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The limit: a bare {@link KafkaConsumer} in a poll loop on the calling thread, with the
 * client's defaults (auto commit included) and the workload called inline.
 */
final class RawConsumerLoop {

	private RawConsumerLoop() {
	}

	/**
	 * Consumes {@code topic} in a new group until the tally is complete or the timeout
	 * passes.
	 * @param bootstrapServers the broker
	 * @param topic the topic
	 * @param group the consumer group
	 * @param workload what to do with each record
	 * @param tally the tally the workload fills
	 * @param timeout how long to keep going at most
	 */
	static void run(String bootstrapServers, String topic, String group, Workload workload, Tally tally,
			Duration timeout) throws Exception {
		Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
				ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
				ConsumerConfig.CLIENT_ID_CONFIG, group);
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer())) {
			consumer.subscribe(List.of(topic));
			long deadline = System.nanoTime() + timeout.toNanos();
			while (!tally.isComplete() && System.nanoTime() - deadline < 0) {
				for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
					workload.handle(record);
				}
			}
		}
	}

}
