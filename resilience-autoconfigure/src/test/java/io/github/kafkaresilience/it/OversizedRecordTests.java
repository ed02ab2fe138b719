package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.internal.actuate.ResilienceHealthIndicator;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static io.github.kafkaresilience.it.OrderedRetryLadderTests.headers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Records larger than a retry or dead-letter topic (or the library's producer) takes: the
 * library creates its topics to take what the main topic takes; a record a retry topic
 * refuses anyway is dead-lettered as permanent and its key moves on in order; a record
 * the dead-letter topic refuses too stops its partition, uncommitted, until the setting
 * is raised.
 * <p>
 * Values are {@code name:padding}; the handler sees the name only, so the journal reads
 * short.
 */
@UsesSharedBroker
class OversizedRecordTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	/** What the main topics of these tests take: twice Kafka's default. */
	private static final int TWO_MB = 2 * 1024 * 1024;

	private static final int BIG = 1_500_000;

	private static KafkaProducer<byte[], byte[]> producer;

	@AfterAll
	static void closeProducer() {
		if (producer != null) {
			producer.close();
		}
	}

	@Test
	void retryAndDeadLetterTopicsCreatedForAMainTopicTakingLargerRecordsTakeThemTooAndSuchARecordIsRetriedInOrder() {
		String topic = SharedBroker.newTopic(1);
		alter(topic, "max.message.bytes", Integer.toString(TWO_MB));
		Script script = Script.forTopic(topic).failTransiently("A", 1);
		try (ConfigurableApplicationContext context = start(topic, "kafka.resilience.retry.delays=1s")) {
			int allowed = TWO_MB + 16 * 1024;
			assertThat(maxMessageBytes(Names.retry(topic, "1s"))).isEqualTo(allowed);
			assertThat(maxMessageBytes(Names.dlq(topic))).isEqualTo(allowed);
			assertThat(maxMessageBytes(Names.locks(topic))).as("lock records stay small").isLessThan(TWO_MB);
			send(topic, "k", "A", BIG);
			send(topic, "k", "B", 10);
			await().atMost(WAIT).untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("A", "B"));
			assertThat(
					script.journal().stream().filter((a) -> a.value().equals("A")).map(Script.Attempt::topic).toList())
				.containsExactly(topic, Names.retry(topic, "1s"));
			assertThat(SharedBroker.readAll(Names.dlq(topic))).isEmpty();
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
		}
	}

	@Test
	void aRecordTooLargeForTheFirstRetryTopicIsDeadLetteredAsPermanentAndLaterRecordsOfItsKeyKeepTheirOrder() {
		String topic = SharedBroker.newTopic(1);
		alter(topic, "max.message.bytes", Integer.toString(TWO_MB));
		// created before the main topic took larger records: it keeps Kafka's default
		SharedBroker.createTopic(Names.retry(topic, "1s"), 1, Map.of());
		Script script = Script.forTopic(topic).failTransiently("A", Integer.MAX_VALUE).failTransiently("C", 2);
		try (ConfigurableApplicationContext context = start(topic, "kafka.resilience.retry.delays=1s,2s")) {
			send(topic, "k", "A", BIG); // fails on the main topic and cannot move to
										// stage 1
			send(topic, "k", "B", 10); // no lock left: runs at once
			send(topic, "j", "C", 10); // fails twice, so key j waits in the ladder for a
										// while
			send(topic, "j", "D", BIG); // a follower of C that stage 1 refuses
			send(topic, "j", "E", 10); // a follower of C, and runs after it
			await().atMost(WAIT).untilAsserted(() -> {
				assertThat(script.firstSuccesses("k")).containsExactly("B");
				assertThat(script.firstSuccesses("j")).containsExactly("C", "E");
			});
			assertThat(script.attempts("A")).isEqualTo(1);
			assertThat(script.attempts("D")).as("a follower that could not follow never runs").isZero();
			Map<String, Map<String, String>> dead = deadLetters(topic);
			assertThat(dead).containsOnlyKeys("A", "D");
			assertThat(dead.get("A")).containsEntry("dlq.reason", "permanent")
				.containsEntry("error.class", "permanent")
				.containsEntry("error.exception", RecordTooLargeException.class.getName())
				.containsEntry("retry.count", "1")
				.containsEntry("previous.topic", topic)
				.containsKey("lock.id");
			assertThat(dead.get("A").get("error.message"))
				.contains("could not be published to '" + Names.retry(topic, "1s") + "'")
				.contains("--entity-name " + Names.retry(topic, "1s") + " --add-config max.message.bytes=")
				.contains("Its last failure: java.lang.IllegalStateException: attempt 1 of A fails");
			assertThat(dead.get("D")).containsEntry("dlq.reason", "permanent")
				.containsEntry("error.exception", RecordTooLargeException.class.getName())
				.containsEntry("retry.count", "0");
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
			await().atMost(WAIT).until(() -> SharedBroker.committed("g-" + topic, topic, 0) == 5);
		}
	}

	@Test
	void aRetryTooLargeForTheNextRetryTopicIsDeadLetteredThereAndItsFollowerRunsAfterIt() {
		String topic = SharedBroker.newTopic(1);
		alter(topic, "max.message.bytes", Integer.toString(TWO_MB));
		SharedBroker.createTopic(Names.retry(topic, "2s"), 1, Map.of());
		Script script = Script.forTopic(topic).failTransiently("A", Integer.MAX_VALUE);
		try (ConfigurableApplicationContext context = start(topic, "kafka.resilience.retry.delays=1s,2s")) {
			send(topic, "k", "A", BIG);
			send(topic, "k", "B", 10);
			await().atMost(WAIT).untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("B"));
			assertThat(script.journal().stream().map(Script.Attempt::value).toList()).containsExactly("A", "A", "B");
			Map<String, String> dead = deadLetters(topic).get("A");
			assertThat(dead).containsEntry("dlq.reason", "permanent")
				.containsEntry("error.exception", RecordTooLargeException.class.getName())
				.containsEntry("retry.count", "2")
				.containsEntry("previous.topic", Names.retry(topic, "1s"));
			assertThat(dead.get("error.message"))
				.contains("could not be published to '" + Names.retry(topic, "2s") + "'");
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
		}
	}

	@Test
	void inTransactionModeARecordTooLargeForTheRetryTopicIsDeadLetteredInTheNextTransactionWithoutRunningAgain() {
		String topic = SharedBroker.newTopic(1);
		alter(topic, "max.message.bytes", Integer.toString(TWO_MB));
		SharedBroker.createTopic(Names.retry(topic, "1s"), 1, Map.of());
		Script script = Script.forTopic(topic).failTransiently("A", Integer.MAX_VALUE);
		try (ConfigurableApplicationContext context = start(topic, "kafka.resilience.retry.delays=1s",
				"kafka.resilience.dual-write=transaction",
				"spring.kafka.producer.properties.max.request.size=4194304")) {
			send(topic, "k", "A", BIG);
			send(topic, "k", "B", 10);
			await().atMost(WAIT).untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("B"));
			assertThat(script.attempts("A")).isEqualTo(1);
			List<ConsumerRecord<byte[], byte[]>> dead = SharedBroker.readAll(Names.dlq(topic), true);
			assertThat(dead).hasSize(1);
			assertThat(headers(dead.get(0))).containsEntry("dlq.reason", "permanent")
				.containsEntry("error.exception", RecordTooLargeException.class.getName());
			assertThat(SharedBroker.readAll(Names.retry(topic, "1s"), true)).isEmpty();
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
		}
	}

	@Test
	void aRecordNeitherRetryNorDeadLetterTopicTakesStopsItsPartitionUncommittedUntilTheProducerLimitIsRaised() {
		String topic = SharedBroker.newTopic(2);
		String key = SharedBroker.keyIn(0, 2, "k");
		String other = SharedBroker.keyIn(1, 2, "o");
		Script script = Script.forTopic(topic).failTransiently("A", 1);
		try (ConfigurableApplicationContext context = start(topic, "kafka.resilience.retry.delays=1s",
				"spring.kafka.producer.properties.max.request.size=102400")) {
			send(topic, key, "A", 300_000);
			send(topic, key, "B", 10);
			await().atMost(WAIT).until(() -> !container(context, topic).stoppedPartitions().isEmpty());
			assertThat(container(context, topic).stoppedPartitions()).containsOnlyKeys(new TopicPartition(topic, 0));
			assertThat(container(context, topic).stoppedPartitions().get(new TopicPartition(topic, 0)))
				.contains("Record " + topic + "/0/0 ")
				.contains("can be neither retried nor dead-lettered: '" + Names.dlq(topic) + "' refused it")
				.contains("Raise spring.kafka.producer.properties.max.request.size to ");
			Health health = context.getBean(ResilienceHealthIndicator.class).health(true);
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails().get("warnings")).asString().contains("stopped [" + topic + "-0]");
			send(topic, other, "X", 10);
			await().atMost(WAIT).untilAsserted(() -> assertThat(script.firstSuccesses(other)).containsExactly("X"));
			await().atMost(WAIT).until(() -> SharedBroker.committed("g-" + topic, topic, 1) == 1);
			assertThat(SharedBroker.committed("g-" + topic, topic, 0)).as("nothing committed past A")
				.isLessThanOrEqualTo(0);
			assertThat(script.firstSuccesses(key)).isEmpty();
			assertThat(SharedBroker.readAll(Names.retry(topic, "1s"))).isEmpty();
			assertThat(SharedBroker.readAll(Names.dlq(topic))).isEmpty();
		}
		try (ConfigurableApplicationContext context = start(topic, "kafka.resilience.retry.delays=1s")) {
			await().atMost(WAIT).untilAsserted(() -> assertThat(script.firstSuccesses(key)).containsExactly("A", "B"));
			// the move A started before the stop is finished: A is not run again on the
			// main topic
			assertThat(
					script.journal().stream().filter((a) -> a.value().equals("A")).map(Script.Attempt::topic).toList())
				.containsExactly(topic, Names.retry(topic, "1s"));
			await().atMost(WAIT).until(() -> SharedBroker.committed("g-" + topic, topic, 0) == 2);
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
		}
	}

	@Test
	void aDeadLetterTopicRefusingARecordStopsItsPartitionUntilItsMaxMessageBytesIsRaised() {
		String topic = SharedBroker.newTopic(1);
		alter(topic, "max.message.bytes", Integer.toString(TWO_MB));
		SharedBroker.createTopic(Names.dlq(topic), 1, Map.of());
		Script script = Script.forTopic(topic).failPermanently("A");
		try (ConfigurableApplicationContext context = start(topic, "kafka.resilience.retry.delays=1s")) {
			send(topic, "k", "A", BIG);
			send(topic, "k", "B", 10);
			await().atMost(WAIT).until(() -> !container(context, topic).stoppedPartitions().isEmpty());
			assertThat(container(context, topic).stoppedPartitions().get(new TopicPartition(topic, 0)))
				.contains("Record " + topic + "/0/0 ")
				.contains("'" + Names.dlq(topic) + "' refused it as too large")
				.contains("--entity-name " + Names.dlq(topic) + " --add-config max.message.bytes=");
			assertThat(script.firstSuccesses("k")).isEmpty();
			assertThat(SharedBroker.committed("g-" + topic, topic, 0)).isLessThanOrEqualTo(0);
		}
		alter(Names.dlq(topic), "max.message.bytes", Integer.toString(TWO_MB + 16 * 1024));
		try (ConfigurableApplicationContext context = start(topic, "kafka.resilience.retry.delays=1s")) {
			await().atMost(WAIT).untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("B"));
			assertThat(deadLetters(topic)).containsOnlyKeys("A");
			assertThat(deadLetters(topic).get("A")).containsEntry("dlq.reason", "permanent");
			await().atMost(WAIT).until(() -> SharedBroker.committed("g-" + topic, topic, 0) == 2);
		}
	}

	private static ConfigurableApplicationContext start(String topic, String... properties) {
		return TestApplication.start(LargeRecordApplication.class, topic, properties);
	}

	private static RetryContainer container(ConfigurableApplicationContext context, String topic) {
		return context.getBean(ListenerRegistry.class).container("it-" + topic);
	}

	/** Dead letters by the name their value starts with, with their headers. */
	private static Map<String, Map<String, String>> deadLetters(String topic) {
		return SharedBroker.readAll(Names.dlq(topic))
			.stream()
			.collect(Collectors.toMap((r) -> name(new String(r.value(), StandardCharsets.UTF_8)),
					OrderedRetryLadderTests::headers));
	}

	private static String name(String value) {
		int colon = value.indexOf(':');
		return (colon >= 0) ? value.substring(0, colon) : value;
	}

	/** Sends {@code name:} followed by padding up to {@code size} bytes. */
	private static synchronized void send(String topic, String key, String name, int size) {
		StringBuilder value = new StringBuilder(size).append(name).append(':');
		while (value.length() < size) {
			value.append('x');
		}
		try {
			producer()
				.send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8),
						value.toString().getBytes(StandardCharsets.UTF_8)))
				.get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static KafkaProducer<byte[], byte[]> producer() {
		if (producer == null) {
			producer = new KafkaProducer<>(
					Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers(),
							ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 4 * 1024 * 1024),
					new ByteArraySerializer(), new ByteArraySerializer());
		}
		return producer;
	}

	private static void alter(String topic, String name, String value) {
		ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
		Map<ConfigResource, Collection<AlterConfigOp>> change = Map.of(resource,
				List.of(new AlterConfigOp(new ConfigEntry(name, value), AlterConfigOp.OpType.SET)));
		try (Admin admin = admin()) {
			admin.incrementalAlterConfigs(change).all().get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static int maxMessageBytes(String topic) {
		ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
		try (Admin admin = admin()) {
			Config config = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource);
			return Integer.parseInt(config.get("max.message.bytes").value());
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static Admin admin() {
		return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers()));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(NamingListener.class)
	static class LargeRecordApplication {

	}

	/**
	 * Hands the script each record with its value cut down to the name before the colon.
	 */
	static class NamingListener {

		@OrderedRetryListener(id = "it-${test.topic}", topics = "${test.topic}")
		void handle(ConsumerRecord<String, String> record) {
			ConsumerRecord<String, String> named = new ConsumerRecord<>(record.topic(), record.partition(),
					record.offset(), record.timestamp(), record.timestampType(), -1, -1, record.key(),
					name(record.value()), record.headers(), Optional.empty());
			String original = (record.headers().lastHeader("original.topic") != null)
					? new String(record.headers().lastHeader("original.topic").value(), StandardCharsets.UTF_8)
					: record.topic();
			Script.forTopic(original).handle(named);
		}

	}

}
