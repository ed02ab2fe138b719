package io.github.kafkaresilience.internal.support;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serializer;

import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.core.ProducerPostProcessor;

/**
 * Creates the library's producers from the application's {@link ProducerFactory} (Boot's,
 * from {@code spring.kafka.producer.*}, or the application's own), so that the factory's
 * post-processors and listeners, Boot's client metrics among them, see them as they see
 * the application's own producers.
 * <p>
 * A producer is created as the factory creates its own ({@code createRawProducer} of a
 * {@link DefaultKafkaProducerFactory}: the factory's post-processors are applied), with
 * the settings the library derives from the factory's ({@link #configuration()}, then
 * {@link ProducerSettings}) and byte-array serializers whatever serializers the
 * application's factory has. The factory's listeners are told of it, with the id
 * {@code <bean name>.<client id>} the factory gives them, and of its closing through
 * {@link #close(Producer, Duration)}.
 * <p>
 * The library does not take the factory's shared or cached producers
 * ({@code createProducer}): those are wrappers that close themselves on some failures
 * (after which a producer the library holds would refuse every send), return a
 * transactional producer to a cache on {@code close()} and ignore an abort after a failed
 * commit, while the library keeps its producers for the life of the application, replaces
 * a fenced one itself and gives each transactional producer a fixed id.
 *
 * @since 0.1.0
 */
public final class ProducerClients {

	private static final Log logger = LogFactory.getLog(ProducerClients.class);

	private final ProducerFactory<?, ?> factory;

	private final String factoryName;

	/** The id each producer created and not closed yet was announced with. */
	private final Map<Producer<byte[], byte[]>, String> ids = new ConcurrentHashMap<>();

	/**
	 * @param factory the application's producer factory
	 * @param factoryName its bean name, the first part of the ids its listeners get
	 */
	public ProducerClients(ProducerFactory<?, ?> factory, String factoryName) {
		this.factory = factory;
		this.factoryName = factoryName;
	}

	/**
	 * Producers with these settings only, from a factory of their own without listeners
	 * or post-processors: for tests and tools.
	 * @param config the client settings
	 * @return the producer clients
	 */
	public static ProducerClients of(Map<String, Object> config) {
		return new ProducerClients(new DefaultKafkaProducerFactory<>(config), ConsumerClients.UNNAMED);
	}

	/**
	 * The settings the library's producer settings start from: the factory's (without a
	 * {@code transactional.id}; the factory keeps its prefix apart).
	 * @return a copy, to change
	 */
	public Map<String, Object> configuration() {
		return new HashMap<>(this.factory.getConfigurationProperties());
	}

	/**
	 * Creates a producer of byte arrays and tells the factory's listeners. Close it with
	 * {@link #close(Producer, Duration)}.
	 * @param config its settings, derived from {@link #configuration()}, with a
	 * {@code client.id}; the serializer settings are ignored
	 * @return the producer, as the factory's post-processors returned it
	 */
	@SuppressWarnings({ "unchecked", "rawtypes" })
	public Producer<byte[], byte[]> create(Map<String, Object> config) {
		RawProducers raw = new RawProducers();
		for (ProducerPostProcessor postProcessor : this.factory.getPostProcessors()) {
			raw.addPostProcessor(postProcessor);
		}
		Producer<byte[], byte[]> producer = raw.create(config);
		String id = this.factoryName + "." + config.get(ProducerConfig.CLIENT_ID_CONFIG);
		this.ids.put(producer, id);
		for (ProducerFactory.Listener listener : listeners()) {
			try {
				listener.producerAdded(id, producer);
			}
			catch (RuntimeException ex) {
				logger.warn("A listener of the producer factory failed on producer '" + id + "'", ex);
			}
		}
		return producer;
	}

	/**
	 * Closes a producer of {@link #create(Map)} and tells the factory's listeners, even
	 * when closing fails.
	 * @param producer the producer
	 * @param timeout how long to wait for its sends under way
	 */
	@SuppressWarnings({ "unchecked", "rawtypes" })
	public void close(Producer<byte[], byte[]> producer, Duration timeout) {
		try {
			producer.close(timeout);
		}
		finally {
			String id = this.ids.remove(producer);
			if (id != null) {
				for (ProducerFactory.Listener listener : listeners()) {
					try {
						listener.producerRemoved(id, producer);
					}
					catch (RuntimeException ex) {
						logger.warn("A listener of the producer factory failed on producer '" + id + "'", ex);
					}
				}
			}
		}
	}

	@SuppressWarnings("rawtypes")
	private List<ProducerFactory.Listener> listeners() {
		return List.copyOf(this.factory.getListeners());
	}

	private static Serializer<byte[]> bytes() {
		return new ByteArraySerializer();
	}

	/**
	 * Creates producers as a {@link DefaultKafkaProducerFactory} does, without its
	 * wrappers.
	 */
	private static final class RawProducers extends DefaultKafkaProducerFactory<byte[], byte[]> {

		RawProducers() {
			super(Map.of(), ProducerClients::bytes, ProducerClients::bytes);
		}

		Producer<byte[], byte[]> create(Map<String, Object> config) {
			return createRawProducer(new HashMap<>(config));
		}

	}

}
