package io.github.kafkaresilience.internal.support;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;

/**
 * The client settings of the consumers the library creates for a listener, one per role:
 * the listener's own consumers in its group (one of its main topics, one of their retry
 * topics), the consumer of its dead-letter topics for the {@code DlqHandler}, the
 * re-reader of parked retries and the startup check of its ladder's owners. Each starts
 * from the application's consumer settings ({@link ConsumerClients}) and reads raw bytes
 * (the handler deserializes), with a client id naming the listener, the instance and the
 * role, and never auto-commits.
 *
 * @since 0.1.0
 */
public final class ListenerConsumers {

	/**
	 * The {@code fetch.max.wait.ms} of the listener's consumers unless configured. A
	 * consumer keeps one fetch in flight per broker, and a fetch holding only empty
	 * partitions (the others paused at their in-flight bound) waits
	 * {@code fetch.max.wait.ms} at the broker while the records of a partition resumed
	 * meanwhile wait behind it. The benchmark suite's P1 (1M records, against a plain
	 * listener) when this value was chosen: 500 ms (the client's default) 0.1-0.3x, 100
	 * ms 0.3-0.9x, 50 ms 0.84x, 20 ms 0.93x. The price: an idle consumer sends up to 50
	 * empty fetches a second to each broker.
	 */
	public static final int FETCH_MAX_WAIT_MS = 20;

	/**
	 * Consumer settings a listener may not override: the group is the listener's
	 * {@code groupId}, the library commits, and records reach the handler as bytes that
	 * the application's consumer factory deserializes.
	 */
	public static final Set<String> FIXED = Set.of(ConsumerConfig.GROUP_ID_CONFIG,
			ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
			ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);

	/**
	 * What the retry-topic consumer's client id, and group instance id, add to the main
	 * one's.
	 */
	public static final String RETRIES = "-retries";

	private final ConsumerClients clients;

	private final String listenerId;

	private final String groupId;

	private final String instanceId;

	private final Map<String, Object> listenerSettings;

	/**
	 * @param clients creates the consumers from the application's settings
	 * @param listenerId the listener's id
	 * @param groupId the listener's consumer group
	 * @param instanceId this instance's id
	 * @param listenerSettings settings of the listener's own consumer on top of the
	 * application's: the dual-write mode's, then the listener's {@code properties}
	 * @throws IllegalArgumentException when they set one of the {@link #FIXED} settings
	 */
	public ListenerConsumers(ConsumerClients clients, String listenerId, String groupId, String instanceId,
			Map<String, Object> listenerSettings) {
		Set<String> fixed = new TreeSet<>(listenerSettings.keySet());
		fixed.retainAll(FIXED);
		if (!fixed.isEmpty()) {
			throw new IllegalArgumentException("Listener '" + listenerId + "' sets " + fixed
					+ " in its consumer properties; the library sets them (the group is the listener's groupId, "
					+ "the library commits, and the application's consumer factory deserializes)");
		}
		this.clients = clients;
		this.listenerId = listenerId;
		this.groupId = groupId;
		this.instanceId = instanceId;
		this.listenerSettings = Map.copyOf(listenerSettings);
	}

	/** The listener's consumer of its main topics, in its group. */
	public Supplier<Consumer<byte[], byte[]>> listener() {
		return this.clients.supplier(listenerConfiguration());
	}

	/**
	 * The listener's consumer of its retry topics, in its group: with a client id of its
	 * own and, under static membership, the group instance id of the main topics'
	 * consumer with {@value #RETRIES} after it, so that the two never fence each other.
	 */
	public Supplier<Consumer<byte[], byte[]>> retries() {
		return this.clients.supplier(retriesConfiguration());
	}

	/** The settings of the listener's consumer of its retry topics. */
	public Map<String, Object> retriesConfiguration() {
		Map<String, Object> config = listenerConfiguration(RETRIES);
		Object instance = config.get(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
		if (instance != null && !instance.toString().isBlank()) {
			config.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instance + RETRIES);
		}
		return config;
	}

	/** The settings of the listener's consumer of its main topics. */
	public Map<String, Object> listenerConfiguration() {
		return listenerConfiguration("");
	}

	private Map<String, Object> listenerConfiguration(String role) {
		Map<String, Object> config = byteConsumerConfig(role);
		config.putIfAbsent(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, FETCH_MAX_WAIT_MS);
		config.putAll(this.listenerSettings);
		config.put(ConsumerConfig.GROUP_ID_CONFIG, this.groupId);
		return config;
	}

	/**
	 * Consumers of the listener's dead-letter topics for the {@code DlqHandler}: a group
	 * of their own, so each dead letter is handled by one instance, from the earliest
	 * dead letter the first time, committed ones only (a dead letter of an aborted
	 * transaction was never one).
	 */
	public Supplier<Consumer<byte[], byte[]>> dlqHandler() {
		Map<String, Object> config = byteConsumerConfig("-dlq-handler");
		config.put(ConsumerConfig.GROUP_ID_CONFIG, this.groupId + ".dlq-handler");
		config.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
		config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		return this.clients.supplier(config);
	}

	/**
	 * Consumers that read parked retries again: assigned to one partition at a time,
	 * outside the listener's group, never committing.
	 */
	public Supplier<Consumer<byte[], byte[]>> rereader() {
		return groupless("-rereader");
	}

	/**
	 * Consumers outside the group that read the latest records of the ladder's topics at
	 * startup.
	 */
	public Supplier<Consumer<byte[], byte[]>> ownershipCheck() {
		return groupless("-ownership-check");
	}

	private Supplier<Consumer<byte[], byte[]>> groupless(String role) {
		return this.clients.supplier(ConsumerSettings.groupless(this.clients.configuration(), clientId(role)));
	}

	private Map<String, Object> byteConsumerConfig(String role) {
		Map<String, Object> config = this.clients.configuration();
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		config.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId(role));
		config.remove(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG);
		config.remove(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
		return config;
	}

	private String clientId(String role) {
		return "kafka-resilience-" + this.listenerId + "-" + this.instanceId + role;
	}

}
