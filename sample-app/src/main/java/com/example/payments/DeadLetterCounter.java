package com.example.payments;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads the dead-letter topic with a plain consumer (no group, nothing committed) and
 * keeps the payment id and {@code dlq.reason} of each record that arrived after
 * {@link #markStart()}, so that records left by earlier runs against the same cluster are
 * not counted.
 * <p>
 * Not thread-safe: use it from one thread at a time.
 */
class DeadLetterCounter implements AutoCloseable {

	private final KafkaConsumer<String, String> consumer;

	private final String topic;

	private final Map<String, String> reasons = new LinkedHashMap<>();

	private boolean assigned;

	DeadLetterCounter(Map<String, Object> clientProperties, String topic) {
		Map<String, Object> properties = new HashMap<>(clientProperties);
		properties.remove(ConsumerConfig.GROUP_ID_CONFIG);
		properties.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
		properties.put(ConsumerConfig.CLIENT_ID_CONFIG, "payments-sample-dlq-counter");
		properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		properties.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
		properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
		properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
		properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
		this.consumer = new KafkaConsumer<>(properties);
		this.topic = topic;
	}

	/**
	 * Skips what is already on the topic. If the topic does not exist yet, everything
	 * that ends up on it counts.
	 */
	void markStart() {
		List<TopicPartition> partitions = partitions();
		if (!partitions.isEmpty()) {
			this.consumer.assign(partitions);
			this.consumer.endOffsets(partitions, Duration.ofSeconds(10)).forEach(this.consumer::seek);
			this.assigned = true;
		}
	}

	/**
	 * Reads what has arrived since the last call.
	 * @param timeout how long to wait for records
	 */
	void poll(Duration timeout) {
		if (!this.assigned) {
			List<TopicPartition> partitions = partitions();
			if (partitions.isEmpty()) {
				sleep(timeout);
				return;
			}
			this.consumer.assign(partitions);
			this.consumer.seekToBeginning(partitions);
			this.assigned = true;
		}
		for (ConsumerRecord<String, String> record : this.consumer.poll(timeout)) {
			Header reason = record.headers().lastHeader("dlq.reason");
			this.reasons.put(DemoTracker.paymentId(String.valueOf(record.value())),
					(reason != null) ? new String(reason.value(), StandardCharsets.UTF_8) : "?");
		}
	}

	/**
	 * The dead-lettered payments seen so far, with their {@code dlq.reason}, in arrival
	 * order.
	 */
	Map<String, String> reasons() {
		return new LinkedHashMap<>(this.reasons);
	}

	int count() {
		return this.reasons.size();
	}

	private List<TopicPartition> partitions() {
		List<PartitionInfo> infos = this.consumer.partitionsFor(this.topic, Duration.ofSeconds(10));
		if (infos == null) {
			return List.of();
		}
		return infos.stream().map((info) -> new TopicPartition(info.topic(), info.partition())).toList();
	}

	private static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() {
		this.consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
	}

}
