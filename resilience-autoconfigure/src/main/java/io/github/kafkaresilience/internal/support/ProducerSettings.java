package io.github.kafkaresilience.internal.support;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.jspecify.annotations.Nullable;

/**
 * The settings of the producers the library writes with. Every protocol write (a lock, a
 * publish to a stage or the dead-letter topic) is confirmed before the next step, so
 * these producers are durable ({@code acks=all}, idempotent) and, unless the application
 * set {@code linger.ms}, send at once: lingering would add its full length to every step.
 *
 * @since 0.1.0
 */
public final class ProducerSettings {

	/** Kafka's default {@code max.request.size}. */
	public static final int DEFAULT_MAX_REQUEST_SIZE = 1024 * 1024;

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

	/**
	 * The settings of a library producer whose writes are given up after
	 * {@code giveUpAfter}: as {@link #forAwaitedWrites(Map, String, String)}, with the
	 * producer's own {@code delivery.timeout.ms} (two minutes by default) bounded by it,
	 * and {@code request.timeout.ms} lowered to fit. Otherwise a write the library has
	 * given up on, and undone, would still be retried by the producer and could land
	 * after its undo.
	 * @param base the application's producer settings
	 * @param clientId the client id of the producer
	 * @param transactionalId the transactional id, or {@code null}
	 * @param giveUpAfter how long the library waits for one write
	 * @return the settings of a library producer sending byte arrays
	 */
	public static Map<String, Object> forAwaitedWrites(Map<String, Object> base, String clientId,
			@Nullable String transactionalId, Duration giveUpAfter) {
		Map<String, Object> config = forAwaitedWrites(base, clientId, transactionalId);
		long deliveryTimeout = Math.min(number(config.get(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG), 120_000),
				Math.max(giveUpAfter.toMillis(), 1));
		long linger = number(config.get(ProducerConfig.LINGER_MS_CONFIG), 0);
		long requestTimeout = Math.min(number(config.get(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG), 30_000),
				deliveryTimeout - linger);
		if (requestTimeout < 1) {
			// a linger as long as the timeout leaves no time to send: keep the write
			// within it anyway
			config.put(ProducerConfig.LINGER_MS_CONFIG, 0);
			requestTimeout = deliveryTimeout;
		}
		config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) Math.min(Integer.MAX_VALUE, deliveryTimeout));
		config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.min(Integer.MAX_VALUE, requestTimeout));
		return config;
	}

	/**
	 * A numeric client setting as given, or {@code otherwise} when unset or unreadable.
	 */
	private static long number(@Nullable Object configured, long otherwise) {
		if (configured instanceof Number number) {
			return number.longValue();
		}
		if (configured != null) {
			try {
				return Long.parseLong(configured.toString().trim());
			}
			catch (NumberFormatException ex) {
				// the producer itself refuses it when it is created
			}
		}
		return otherwise;
	}

	/**
	 * The largest record a producer with these settings sends: its
	 * {@code max.request.size}, or Kafka's default (1 MiB) when not set.
	 * @param config producer settings
	 * @return the limit in bytes
	 */
	public static int maxRequestSize(Map<String, Object> config) {
		long configured = number(config.get(ProducerConfig.MAX_REQUEST_SIZE_CONFIG), DEFAULT_MAX_REQUEST_SIZE);
		return (configured > Integer.MAX_VALUE) ? DEFAULT_MAX_REQUEST_SIZE : (int) configured;
	}

	/**
	 * Settings that let a producer send records of {@code bytes}: its
	 * {@code max.request.size} is raised to that when the application did not set it, and
	 * kept when it did.
	 * @param config producer settings
	 * @param bytes the size of the largest record to send
	 * @return the settings to create the producer with
	 */
	public static Map<String, Object> sending(Map<String, Object> config, int bytes) {
		if (config.containsKey(ProducerConfig.MAX_REQUEST_SIZE_CONFIG) || bytes <= DEFAULT_MAX_REQUEST_SIZE) {
			return config;
		}
		Map<String, Object> raised = new HashMap<>(config);
		raised.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, bytes);
		return raised;
	}

}
