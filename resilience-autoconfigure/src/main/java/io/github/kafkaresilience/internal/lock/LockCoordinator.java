package io.github.kafkaresilience.internal.lock;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.kafkaresilience.internal.support.ConsumerClients;
import io.github.kafkaresilience.internal.support.ConsumerSettings;
import io.github.kafkaresilience.internal.support.ProducerClients;
import io.github.kafkaresilience.internal.support.ProducerSettings;
import io.github.kafkaresilience.internal.support.Sends;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.Producer;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;

/**
 * Owns the lock registries of this instance, one per ladder (consumer group and main
 * topic): each has its lock table, its tailer and shares one idempotent producer for lock
 * writes. Lock records carry this instance's stable coordinator id.
 *
 * @since 0.1.0
 */
public class LockCoordinator implements DisposableBean {

	private final String instanceId;

	private final ConsumerClients consumers;

	private final ProducerClients producers;

	private final Map<String, Object> consumerConfig;

	private final Map<String, Object> producerConfig;

	private final Duration tailerPollTimeout;

	private final Duration writeTimeout;

	private final Map<String, LockRegistry> registries = new ConcurrentHashMap<>();

	private final List<java.util.function.Consumer<LockRegistry>> registryListeners = new CopyOnWriteArrayList<>();

	private final AtomicInteger tailers = new AtomicInteger();

	private volatile @Nullable Producer<byte[], byte[]> producer;

	/** Completes the lock writes of moves, which no thread waits for. */
	private final Sends sends;

	/**
	 * @param instanceId the stable id of this instance, written with every lock record
	 * @param consumers creates the tailers (the group settings are dropped)
	 * @param producers creates the lock writer
	 * @param tailerPollTimeout how long a tailer poll waits for records
	 * @param writeTimeout how long a lock write may take before it fails
	 */
	public LockCoordinator(String instanceId, ConsumerClients consumers, ProducerClients producers,
			Duration tailerPollTimeout, Duration writeTimeout) {
		this.instanceId = instanceId;
		this.writeTimeout = writeTimeout;
		this.consumers = consumers;
		this.producers = producers;
		this.consumerConfig = tailerConfig(consumers.configuration());
		this.producerConfig = writerConfig(producers.configuration());
		this.tailerPollTimeout = tailerPollTimeout;
		this.sends = new Sends("kafka-resilience-locks-" + instanceId);
	}

	public String instanceId() {
		return this.instanceId;
	}

	/**
	 * The registry of a ladder, its tailer started on first use.
	 * @param mainTopic the main topic
	 * @param lockTopic the ladder's lock topic
	 * @param partitions the partition count of both
	 * @param ownership the group that owns the ladder
	 * @return the started registry
	 */
	public LockRegistry registry(String mainTopic, String lockTopic, int partitions, Ownership ownership) {
		boolean[] created = new boolean[1];
		LockRegistry registry = this.registries.computeIfAbsent(lockTopic, (topic) -> {
			LockTable table = new LockTable();
			LockTailer tailer = new LockTailer(lockTopic, partitions, table, this::createConsumer,
					this::createEndOffsetsConsumer, this.tailerPollTimeout, ownership);
			tailer.start();
			created[0] = true;
			return new LockRegistry(mainTopic, lockTopic, table, tailer, producer(), this.sends, this.instanceId,
					this.writeTimeout, ownership);
		});
		if (created[0]) {
			this.registryListeners.forEach((listener) -> listener.accept(registry));
		}
		return registry;
	}

	/**
	 * Calls {@code listener} with every registry, those started so far and those started
	 * later.
	 */
	public void onRegistry(java.util.function.Consumer<LockRegistry> listener) {
		this.registryListeners.add(listener);
		this.registries.values().forEach(listener);
	}

	/** The registry of a lock topic, or {@code null} before its listener started. */
	public @Nullable LockRegistry registryOf(String lockTopic) {
		return this.registries.get(lockTopic);
	}

	/** The registries started so far. */
	public Collection<LockRegistry> registries() {
		return List.copyOf(this.registries.values());
	}

	@Override
	public void destroy() {
		this.registries.values().forEach((registry) -> registry.tailer().stop());
		this.registries.clear();
		this.sends.close();
		Producer<byte[], byte[]> current = this.producer;
		if (current != null) {
			this.producers.close(current, Duration.ofSeconds(5));
		}
	}

	private Consumer<byte[], byte[]> createConsumer() {
		Map<String, Object> config = new HashMap<>(this.consumerConfig);
		config.put(ConsumerConfig.CLIENT_ID_CONFIG,
				config.get(ConsumerConfig.CLIENT_ID_CONFIG) + "-" + this.tailers.incrementAndGet());
		return this.consumers.create(config);
	}

	/** A consumer that reads nothing, for the high watermarks of the lock partitions. */
	private Consumer<byte[], byte[]> createEndOffsetsConsumer() {
		Map<String, Object> config = new HashMap<>(this.consumerConfig);
		config.put(ConsumerConfig.CLIENT_ID_CONFIG,
				config.get(ConsumerConfig.CLIENT_ID_CONFIG) + "-" + this.tailers.get() + "-ends");
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
		return this.consumers.create(config);
	}

	private synchronized Producer<byte[], byte[]> producer() {
		if (this.producer == null) {
			this.producer = this.producers.create(this.producerConfig);
		}
		return this.producer;
	}

	private Map<String, Object> tailerConfig(Map<String, Object> base) {
		return ConsumerSettings.groupless(base, "kafka-resilience-tailer-" + this.instanceId);
	}

	private Map<String, Object> writerConfig(Map<String, Object> base) {
		return ProducerSettings.forAwaitedWrites(base, "kafka-resilience-locks-" + this.instanceId, null,
				this.writeTimeout);
	}

}
