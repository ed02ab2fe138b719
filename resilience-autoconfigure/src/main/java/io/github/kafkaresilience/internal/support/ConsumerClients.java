package io.github.kafkaresilience.internal.support;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;

import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.ConsumerPostProcessor;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;

/**
 * Creates the library's consumers from the application's {@link ConsumerFactory} (Boot's,
 * from {@code spring.kafka.consumer.*}), so that the factory's listeners and
 * post-processors, Boot's client metrics among them, see them as they see the
 * application's own consumers.
 * <p>
 * Each consumer is created by a {@link DefaultKafkaConsumerFactory} made for it: with the
 * settings the library derives from the factory's ({@link #configuration()}, then
 * {@link ConsumerSettings} or the caller's own), byte-array deserializers whatever
 * deserializers the application's factory has, and that factory's listeners,
 * post-processors and bean name, so the listeners get the id
 * {@code <bean name>.<client id>}. A settings override cannot remove a setting (a
 * consumer outside any group has none of the group's), nor replace deserializer instances
 * the factory was given, hence a factory per consumer rather than the application's
 * {@code createConsumer} with overrides. Its post-processors get consumers of byte
 * arrays.
 *
 * @since 0.1.0
 */
public final class ConsumerClients {

	/** The name the listeners see when the factory is not a bean (tests, tools). */
	public static final String UNNAMED = "kafka-resilience";

	private final ConsumerFactory<?, ?> factory;

	private final String factoryName;

	private final Map<String, Object> overrides;

	/**
	 * @param factory the application's consumer factory
	 * @param factoryName its bean name, the first part of the ids its listeners get
	 */
	public ConsumerClients(ConsumerFactory<?, ?> factory, String factoryName) {
		this(factory, factoryName, Map.of());
	}

	private ConsumerClients(ConsumerFactory<?, ?> factory, String factoryName, Map<String, Object> overrides) {
		this.factory = factory;
		this.factoryName = factoryName;
		this.overrides = Map.copyOf(overrides);
	}

	/**
	 * Consumers with these settings only, from a factory of their own without listeners
	 * or post-processors: for tests and tools.
	 * @param config the client settings
	 * @return the consumer clients
	 */
	public static ConsumerClients of(Map<String, Object> config) {
		return new ConsumerClients(new DefaultKafkaConsumerFactory<>(config), UNNAMED);
	}

	/**
	 * These clients with settings of the library's on top of the factory's, in
	 * {@link #configuration()} (the isolation level in transaction mode, for instance).
	 * @param settings the settings
	 * @return the consumer clients
	 */
	public ConsumerClients with(Map<String, Object> settings) {
		Map<String, Object> combined = new HashMap<>(this.overrides);
		combined.putAll(settings);
		return new ConsumerClients(this.factory, this.factoryName, combined);
	}

	/**
	 * The settings the library's consumer settings start from: the factory's, with those
	 * given to {@link #with(Map)}.
	 * @return a copy, to change
	 */
	public Map<String, Object> configuration() {
		Map<String, Object> config = new HashMap<>(this.factory.getConfigurationProperties());
		config.putAll(this.overrides);
		return config;
	}

	/**
	 * Creates a consumer of byte arrays, which the factory's listeners hear of (and of
	 * its closing, with {@code close()} or {@code close(CloseOptions)}).
	 * @param config its settings, derived from {@link #configuration()}; the deserializer
	 * settings are ignored
	 * @return the consumer
	 */
	@SuppressWarnings({ "unchecked", "rawtypes" })
	public Consumer<byte[], byte[]> create(Map<String, Object> config) {
		DefaultKafkaConsumerFactory<byte[], byte[]> bytes = new DefaultKafkaConsumerFactory<>(config,
				ConsumerClients::bytes, ConsumerClients::bytes);
		bytes.setBeanName(this.factoryName);
		for (ConsumerFactory.Listener listener : this.factory.getListeners()) {
			bytes.addListener(listener);
		}
		for (ConsumerPostProcessor postProcessor : this.factory.getPostProcessors()) {
			bytes.addPostProcessor(postProcessor);
		}
		return bytes.createConsumer();
	}

	/**
	 * @param config the settings of every consumer it creates
	 * @return creates a consumer with {@link #create(Map)} on each call
	 */
	public Supplier<Consumer<byte[], byte[]>> supplier(Map<String, Object> config) {
		Map<String, Object> settings = Map.copyOf(config);
		return () -> create(settings);
	}

	private static Deserializer<byte[]> bytes() {
		return new ByteArrayDeserializer();
	}

}
