package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.dlq.ReplayRequest;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.DefaultKafkaConsumerFactoryCustomizer;
import org.springframework.boot.kafka.autoconfigure.DefaultKafkaProducerFactoryCustomizer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.MicrometerConsumerListener;
import org.springframework.kafka.core.MicrometerProducerListener;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.support.serializer.JacksonJsonDeserializer;
import org.springframework.kafka.support.serializer.JacksonJsonSerializer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every Kafka client the library creates comes from the application's factories: the
 * listeners of Boot's consumer and producer factories (Boot's client metrics are such
 * listeners) hear of each consumer and producer and of its closing, and the factories'
 * post-processors are applied to each, while the library's own settings still win over
 * the application's (byte arrays whatever the application deserializes and serializes
 * with, no auto commit, durable idempotent writes, committed reads in transaction mode).
 * <p>
 * What each client was really created with is read from an interceptor the application
 * configures for all its clients: Kafka configures it with the client's settings.
 */
@UsesSharedBroker
class ClientsFromFactoriesTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final String[] APPLICATION_SETTINGS = {
			// what the application reads and writes with, which the library's clients
			// must not take
			"spring.kafka.consumer.value-deserializer=" + JacksonJsonDeserializer.class.getName(),
			"spring.kafka.producer.value-serializer=" + JacksonJsonSerializer.class.getName(),
			"spring.kafka.consumer.enable-auto-commit=true", "spring.kafka.producer.acks=1",
			// settings the library's clients take from the application
			"spring.kafka.consumer.max-poll-records=123", "spring.kafka.producer.compression-type=gzip",
			"spring.kafka.consumer.properties[interceptor.classes]=" + RecordingConsumerInterceptor.class.getName(),
			"spring.kafka.producer.properties[interceptor.classes]=" + RecordingProducerInterceptor.class.getName(),
			"kafka.resilience.retry.delays=1s" };

	/**
	 * What each consumer was configured with, by client id, as its interceptor was told;
	 * values as text.
	 */
	static final Map<String, Map<String, String>> consumerSettings = new ConcurrentHashMap<>();

	/**
	 * What each producer was configured with, by client id, as its interceptor was told;
	 * values as text.
	 */
	static final Map<String, Map<String, String>> producerSettings = new ConcurrentHashMap<>();

	@Test
	void everyClientOfTheLibraryComesFromTheApplicationsFactoriesWithTheLibrarysSettings() {
		String topic = SharedBroker.newTopic(1);
		Clients seen = run(topic, "kafka.resilience.dual-write=compensate");
		String id = "it-" + topic;

		assertThat(seen.consumers).containsExactlyInAnyOrder("kafka-resilience-" + id + "-" + id,
				"kafka-resilience-" + id + "-" + id + "-retries", "kafka-resilience-" + id + "-" + id + "-rereader",
				"kafka-resilience-" + id + "-" + id + "-ownership-check",
				"kafka-resilience-" + id + "-" + id + "-dlq-handler", "kafka-resilience-tailer-" + id + "-1",
				"kafka-resilience-tailer-" + id + "-1-ends", "kafka-resilience-replay");
		assertThat(seen.producers).containsExactlyInAnyOrder("kafka-resilience-locks-" + id,
				"kafka-resilience-ladder-" + id, "kafka-resilience-replay");
		assertThat(consumerSettings.get("kafka-resilience-" + id + "-" + id)).as("the application's isolation level")
			.containsEntry(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
	}

	@Test
	void inTransactionModeTheTransactionalProducersComeFromTheProducerFactoryToo() {
		String topic = SharedBroker.newTopic(1);
		Clients seen = run(topic, "kafka.resilience.dual-write=transaction",
				"spring.kafka.consumer.isolation-level=read-uncommitted");
		String id = "it-" + topic;

		assertThat(seen.consumers).containsExactlyInAnyOrder("kafka-resilience-" + id + "-" + id,
				"kafka-resilience-" + id + "-" + id + "-retries", "kafka-resilience-" + id + "-" + id + "-rereader",
				"kafka-resilience-" + id + "-" + id + "-ownership-check",
				"kafka-resilience-" + id + "-" + id + "-dlq-handler", "kafka-resilience-tailer-" + id + "-1",
				"kafka-resilience-tailer-" + id + "-1-ends", "kafka-resilience-replay");
		// a transactional producer per worker (4) and one more; no retry publisher, as
		// every
		// publish goes in a transaction; the lock writer admits the replay
		Set<String> transactional = IntStream.rangeClosed(0, 4)
			.mapToObj((slot) -> "kafka-resilience-" + id + "-" + id + "-" + slot)
			.collect(Collectors.toSet());
		assertThat(seen.producers).containsAll(transactional)
			.contains("kafka-resilience-locks-" + id, "kafka-resilience-replay")
			.hasSize(transactional.size() + 2);
		transactional.forEach((client) -> assertThat(producerSettings.get(client)).as(client)
			.containsEntry(ProducerConfig.TRANSACTIONAL_ID_CONFIG, client));
		// every consumer that reads records reads committed ones; the tailer's second
		// consumer
		// reads none, it only asks for the high watermarks of the lock partitions
		String ends = "kafka-resilience-tailer-" + id + "-1-ends";
		seen.consumers.stream()
			.filter((client) -> !client.equals(ends))
			.forEach((client) -> assertThat(consumerSettings.get(client)).as(client)
				.containsEntry(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
		assertThat(consumerSettings.get(ends)).containsEntry(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
	}

	/**
	 * Starts the application, sends a record through a retry stage and one to the
	 * dead-letter topic, replays that one, and checks what every mode shares: the
	 * factories' listeners and post-processors saw every client the interceptors saw,
	 * each with the library's settings on top of the application's, the client metrics
	 * showed each, and each was closed at the end.
	 * @return the client ids of the library's consumers and producers
	 */
	private static Clients run(String topic, String... properties) {
		Script script = Script.forTopic(topic).failTransiently("retried", 1).failPermanently("dead");
		Observed observed;
		SimpleMeterRegistry meters;
		Clients clients;
		String[] settings = Stream.concat(Stream.of(APPLICATION_SETTINGS), Stream.of(properties))
			.toArray(String[]::new);
		try (ConfigurableApplicationContext context = TestApplication.start(ObservedApplication.class, topic,
				settings)) {
			observed = context.getBean(Observed.class);
			meters = context.getBean(SimpleMeterRegistry.class);
			SharedBroker.send(topic, "k1", "retried");
			SharedBroker.send(topic, "k2", "dead");
			await().atMost(WAIT).until(() -> script.succeeded("retried"));
			await().atMost(WAIT).until(() -> SharedBroker.readAll(Names.dlq(topic), true).size() == 1);
			script.succeedFromNowOn("dead");
			context.getBean(DlqReplayer.class).replay(ReplayRequest.of(Names.dlq(topic), topic));
			await().atMost(WAIT).until(() -> script.succeeded("dead"));

			// the application's string deserializers never reached the library's
			// consumers, nor its
			// JSON serializer the library's producers: the record kept its value on its
			// retry
			assertThat(script.journal()).extracting(Script.Attempt::value)
				.containsExactlyInAnyOrder("retried", "dead", "retried", "dead");

			clients = new Clients(ofTest(clientIds(observed.consumersAdded), topic),
					ofTest(clientIds(observed.producersAdded), topic));
			assertThat(clients.consumers).as("the consumer factory's listener heard of every consumer Kafka configured")
				.containsAll(ofTest(consumerSettings.keySet(), topic));
			assertThat(clients.producers).as("the producer factory's listener heard of every producer Kafka configured")
				.containsAll(ofTest(producerSettings.keySet(), topic));
			assertThat(observed.consumersAdded).allMatch((id) -> id.startsWith("kafkaConsumerFactory."));
			assertThat(observed.producersAdded).allMatch((id) -> id.startsWith("kafkaProducerFactory."));
			assertThat(observed.consumersPostProcessed).containsAll(clients.consumers);
			assertThat(observed.producersPostProcessed).containsAll(clients.producers);

			clients.consumers.forEach((client) -> assertThat(consumerSettings.get(client)).as(client)
				.containsEntry(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName())
				.containsEntry(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName())
				.containsEntry(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false")
				.containsEntry(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "123"));
			clients.producers.forEach((client) -> assertThat(producerSettings.get(client)).as(client)
				.containsEntry(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName())
				.containsEntry(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName())
				.containsEntry(ProducerConfig.ACKS_CONFIG, "all")
				.containsEntry(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true")
				.containsEntry(ProducerConfig.COMPRESSION_TYPE_CONFIG, "gzip"));

			assertThat(clientMetrics(meters, "kafka.consumer.")).as("client metrics of the open consumers")
				.containsExactlyInAnyOrderElementsOf(open(observed.consumersAdded, observed.consumersRemoved));
			assertThat(clientMetrics(meters, "kafka.producer.")).as("client metrics of the open producers")
				.containsExactlyInAnyOrderElementsOf(open(observed.producersAdded, observed.producersRemoved));
		}
		await().atMost(WAIT).untilAsserted(() -> {
			assertThat(observed.consumersRemoved).as("consumers closed").containsAll(observed.consumersAdded);
			assertThat(observed.producersRemoved).as("producers closed").containsAll(observed.producersAdded);
		});
		assertThat(clientMetrics(meters, "kafka.")).as("no client metrics left of a closed client")
			.doesNotContainAnyElementsOf(observed.consumersAdded)
			.doesNotContainAnyElementsOf(observed.producersAdded);
		return clients;
	}

	/**
	 * The client ids in the ids a factory gives its listeners:
	 * {@code <bean name>.<client id>}.
	 */
	private static List<String> clientIds(List<String> listenerIds) {
		return listenerIds.stream().map((id) -> id.substring(id.indexOf('.') + 1)).toList();
	}

	/**
	 * The client ids of the library's clients in the test of {@code topic}, each once.
	 */
	private static List<String> ofTest(Collection<String> clientIds, String topic) {
		return clientIds.stream()
			.filter((id) -> id.contains("-it-" + topic) || id.equals("kafka-resilience-replay"))
			.collect(Collectors.toCollection(TreeSet::new))
			.stream()
			.toList();
	}

	/** The ids of the clients added and not removed since. */
	private static Set<String> open(List<String> added, List<String> removed) {
		Map<String, Integer> open = new HashMap<>();
		added.forEach((id) -> open.merge(id, 1, Integer::sum));
		removed.forEach((id) -> open.merge(id, -1, Integer::sum));
		return open.entrySet()
			.stream()
			.filter((entry) -> entry.getValue() > 0)
			.map(Map.Entry::getKey)
			.collect(Collectors.toSet());
	}

	/**
	 * The {@code spring.id} of every meter of Kafka's client metrics named with
	 * {@code prefix}.
	 */
	private static Set<String> clientMetrics(SimpleMeterRegistry meters, String prefix) {
		return meters.getMeters()
			.stream()
			.map(Meter::getId)
			.filter((meter) -> meter.getName().startsWith(prefix))
			.map((meter) -> meter.getTag("spring.id"))
			.filter((springId) -> springId != null)
			.collect(Collectors.toSet());
	}

	/** The client id a Kafka client reports in its metrics, as spring-kafka reads it. */
	private static String clientId(Map<MetricName, ? extends Metric> metrics) {
		return metrics.keySet()
			.stream()
			.map((name) -> name.tags().get("client-id"))
			.filter((id) -> id != null)
			.findFirst()
			.orElse("unknown");
	}

	/** Client settings as text: a class by its name. */
	private static Map<String, String> text(Map<String, ?> configs) {
		Map<String, String> text = new HashMap<>();
		configs.forEach((key, value) -> text.put(key,
				(value instanceof Class<?> type) ? type.getName() : String.valueOf(value)));
		return text;
	}

	/** The client ids of the library's consumers and producers. */
	record Clients(List<String> consumers, List<String> producers) {
	}

	/** What the factories' listeners and post-processors were told, in order. */
	static final class Observed {

		final List<String> consumersAdded = new CopyOnWriteArrayList<>();

		final List<String> consumersRemoved = new CopyOnWriteArrayList<>();

		final List<String> producersAdded = new CopyOnWriteArrayList<>();

		final List<String> producersRemoved = new CopyOnWriteArrayList<>();

		final List<String> consumersPostProcessed = new CopyOnWriteArrayList<>();

		final List<String> producersPostProcessed = new CopyOnWriteArrayList<>();

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TestApplication.ScriptedListener.class)
	static class ObservedApplication {

		@Bean
		Observed observed() {
			return new Observed();
		}

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		ConsumerFactory.Listener<Object, Object> recordingConsumerListener(Observed observed) {
			return new ConsumerFactory.Listener<>() {

				@Override
				public void consumerAdded(String id, Consumer<Object, Object> consumer) {
					observed.consumersAdded.add(id);
				}

				@Override
				public void consumerRemoved(String id, Consumer<Object, Object> consumer) {
					observed.consumersRemoved.add(id);
				}

			};
		}

		@Bean
		ProducerFactory.Listener<Object, Object> recordingProducerListener(Observed observed) {
			return new ProducerFactory.Listener<>() {

				@Override
				public void producerAdded(String id, Producer<Object, Object> producer) {
					observed.producersAdded.add(id);
				}

				@Override
				public void producerRemoved(String id, Producer<Object, Object> producer) {
					observed.producersRemoved.add(id);
				}

			};
		}

		/**
		 * Registers the listener beans on Boot's consumer factory with a post-processor
		 * and Boot's client metrics, and gives it deserializer instances of its own.
		 */
		@Bean
		@SuppressWarnings("unchecked")
		DefaultKafkaConsumerFactoryCustomizer observedConsumers(ConsumerFactory.Listener<Object, Object> listener,
				Observed observed, SimpleMeterRegistry meters) {
			return (factory) -> {
				DefaultKafkaConsumerFactory<Object, Object> consumers = (DefaultKafkaConsumerFactory<Object, Object>) factory;
				consumers.addListener(listener);
				consumers.addListener(new MicrometerConsumerListener<>(meters));
				consumers.addPostProcessor((consumer) -> {
					observed.consumersPostProcessed.add(clientId(consumer.metrics()));
					return consumer;
				});
				consumers.setKeyDeserializer((Deserializer<Object>) (Deserializer<?>) new StringDeserializer());
				consumers.setValueDeserializer((Deserializer<Object>) (Deserializer<?>) new StringDeserializer());
			};
		}

		/**
		 * Registers the listener bean on Boot's producer factory with a post-processor
		 * and Boot's client metrics.
		 */
		@Bean
		@SuppressWarnings("unchecked")
		DefaultKafkaProducerFactoryCustomizer observedProducers(ProducerFactory.Listener<Object, Object> listener,
				Observed observed, SimpleMeterRegistry meters) {
			return (factory) -> {
				DefaultKafkaProducerFactory<Object, Object> producers = (DefaultKafkaProducerFactory<Object, Object>) factory;
				producers.addListener(listener);
				producers.addListener(new MicrometerProducerListener<>(meters));
				producers.addPostProcessor((producer) -> {
					observed.producersPostProcessed.add(clientId(producer.metrics()));
					return producer;
				});
				producers.setValueSerializer(new JacksonJsonSerializer<>());
			};
		}

	}

	/** Keeps what Kafka configured a consumer with. */
	public static class RecordingConsumerInterceptor implements ConsumerInterceptor<Object, Object> {

		@Override
		public void configure(Map<String, ?> configs) {
			consumerSettings.put(String.valueOf(configs.get(ConsumerConfig.CLIENT_ID_CONFIG)), text(configs));
		}

		@Override
		public ConsumerRecords<Object, Object> onConsume(ConsumerRecords<Object, Object> records) {
			return records;
		}

		@Override
		public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
		}

		@Override
		public void close() {
		}

	}

	/** Keeps what Kafka configured a producer with. */
	public static class RecordingProducerInterceptor implements ProducerInterceptor<Object, Object> {

		@Override
		public void configure(Map<String, ?> configs) {
			producerSettings.put(String.valueOf(configs.get(ProducerConfig.CLIENT_ID_CONFIG)), text(configs));
		}

		@Override
		public ProducerRecord<Object, Object> onSend(ProducerRecord<Object, Object> record) {
			return record;
		}

		@Override
		public void onAcknowledgement(RecordMetadata metadata, Exception exception) {
		}

		@Override
		public void close() {
		}

	}

}
