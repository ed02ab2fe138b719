package io.github.kafkaresilience.internal.support;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;

/**
 * The settings of the consumers the library reads its own topics with outside any
 * consumer group (lock tailers, re-readers, replays): assigned partitions, no commits,
 * raw bytes, committed records only (in {@code transaction} mode an aborted write was
 * never made; in {@code compensate} mode nothing is written in transactions, so they read
 * the same).
 *
 * @since 0.1.0
 */
public final class ConsumerSettings {

	private ConsumerSettings() {
	}

	/**
	 * @param base the application's consumer settings ({@code spring.kafka.consumer.*})
	 * @param clientId the client id of the consumer
	 * @return the settings of a consumer without a group that never commits and starts at
	 * the earliest record when it has no position, reading committed records only; the
	 * caller passes byte-array deserializers
	 */
	public static Map<String, Object> groupless(Map<String, Object> base, String clientId) {
		Map<String, Object> config = new HashMap<>(base);
		config.remove(ConsumerConfig.GROUP_ID_CONFIG);
		config.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
		config.remove(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG);
		config.remove(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
		config.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		return config;
	}

}
