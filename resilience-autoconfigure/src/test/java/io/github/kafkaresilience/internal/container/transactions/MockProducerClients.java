package io.github.kafkaresilience.internal.container.transactions;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.kafkaresilience.internal.support.ProducerClients;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.ProducerFactory;

/**
 * Producer clients for the unit tests of transaction mode: the application's factory
 * hands out a {@link MockProducer} (completing each send at once) in place of each
 * producer it creates, and its listeners note each producer's creation and closing. The
 * factory's name is {@code app}, so a producer's id is {@code app.<transactional id>}.
 */
final class MockProducerClients {

	/**
	 * What the factory's listeners were told, in order: {@code added <id>},
	 * {@code removed <id>}.
	 */
	final List<String> events = new CopyOnWriteArrayList<>();

	/** Failures of {@code initTransactions()} by the number of the creation (from 0). */
	final Map<Integer, RuntimeException> initFailures = new ConcurrentHashMap<>();

	final ProducerClients clients;

	/** The producers created for each id, oldest first. */
	private final Map<String, List<MockProducer<byte[], byte[]>>> created = new ConcurrentHashMap<>();

	private final AtomicInteger creations = new AtomicInteger();

	MockProducerClients() {
		DefaultKafkaProducerFactory<byte[], byte[]> factory = new DefaultKafkaProducerFactory<>(
				Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:1"));
		factory.addPostProcessor((real) -> {
			real.close(Duration.ZERO);
			MockProducer<byte[], byte[]> mock = new MockProducer<>(true, null, new ByteArraySerializer(),
					new ByteArraySerializer());
			mock.initTransactionException = this.initFailures.get(this.creations.getAndIncrement());
			return mock;
		});
		factory.addListener(new ProducerFactory.Listener<>() {

			@Override
			public void producerAdded(String id, Producer<byte[], byte[]> producer) {
				MockProducerClients.this.events.add("added " + id);
				MockProducerClients.this.created.computeIfAbsent(id, (ignored) -> new CopyOnWriteArrayList<>())
					.add((MockProducer<byte[], byte[]>) producer);
			}

			@Override
			public void producerRemoved(String id, Producer<byte[], byte[]> producer) {
				MockProducerClients.this.events.add("removed " + id);
			}

		});
		this.clients = new ProducerClients(factory, "app");
	}

	/** The producers created with a transactional id, oldest first. */
	List<MockProducer<byte[], byte[]>> created(String transactionalId) {
		return this.created.getOrDefault("app." + transactionalId, List.of());
	}

	/** Every producer created. */
	List<MockProducer<byte[], byte[]>> all() {
		return this.created.values().stream().flatMap(List::stream).toList();
	}

}
