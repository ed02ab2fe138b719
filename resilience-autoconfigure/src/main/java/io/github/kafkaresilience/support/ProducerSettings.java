package io.github.kafkaresilience.support;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.jspecify.annotations.Nullable;

/**
 * The settings of the producers the library writes with. Every protocol write (a lock, a
 * publish to a stage or the dead-letter topic) is awaited before the next step, so these
 * producers are durable ({@code acks=all}, idempotent) and, unless the application set
 * {@code linger.ms}, send at once: lingering would add its full length to every step.
 *
 * @since 0.1.0
 */
public final class ProducerSettings {

	private ProducerSettings() {
	}

	/**
	 * @param base the application's producer settings ({@code spring.kafka.producer.*})
	 * @param clientId the client id of the producer
	 * @param transactionalId the transactional id, or {@code null} for a producer without
	 * transactions
	 * @return the settings of a library producer sending byte arrays
	 */
	public static Map<String, Object> forAwaitedWrites(Map<String, Object> base, String clientId,
			@Nullable String transactionalId) {
		Map<String, Object> config = new HashMap<>(base);
		config.remove(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG);
		config.remove(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG);
		config.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
		if (transactionalId != null) {
			config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
		}
		config.put(ProducerConfig.ACKS_CONFIG, "all");
		config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
		config.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
		config.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 0);
		return config;
	}

}
