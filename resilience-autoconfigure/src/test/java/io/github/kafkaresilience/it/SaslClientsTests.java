package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.github.kafkaresilience.internal.actuate.KafkaResilienceEndpoint;
import io.github.kafkaresilience.internal.actuate.ResilienceHealthIndicator;
import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.dlq.ReplayRequest;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.Position;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ApplicationContextException;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.test.EmbeddedKafkaBroker;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The application's SASL settings ({@code spring.kafka.security.protocol},
 * {@code spring.kafka.properties.sasl.*}) reach every client the library creates. The
 * broker has a single listener for clients, {@code SASL_PLAINTEXT} with {@code PLAIN},
 * and an authorizer that denies what no ACL allows; the application's user holds only the
 * ACLs listed in {@code docs/SECURITY.md}. A client that missed the settings could not
 * connect, and one that needed an ACL not listed there would be denied: either way the
 * application would not get through the scenario.
 */
class SaslClientsTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final String ADMIN = "admin";

	private static final String APP = "app";

	private static final Map<String, String> PASSWORDS = Map.of(ADMIN, "admin-secret", APP, "app-secret");

	private static EmbeddedKafkaKraftBroker broker;

	private static Admin admin;

	private static KafkaProducer<String, String> producer;

	@BeforeAll
	static void startBroker() {
		// the test kit publishes the broker's address in system properties, by default in
		// spring.kafka.bootstrap-servers: keep it to one, and restore that one
		// afterwards, so
		// that the JVM's other tests stay on their broker
		String embeddedBrokers = System.getProperty(EmbeddedKafkaBroker.SPRING_EMBEDDED_KAFKA_BROKERS);
		broker = new EmbeddedKafkaKraftBroker(1, 3);
		broker.brokerListProperty(EmbeddedKafkaBroker.SPRING_EMBEDDED_KAFKA_BROKERS);
		// clients reach the broker only through the SASL listener (named EXTERNAL by the
		// test
		// kit); the controller listener stays PLAINTEXT and serves no client requests
		broker.brokerProperty("listener.security.protocol.map", "EXTERNAL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT");
		broker.brokerProperty("sasl.enabled.mechanisms", "PLAIN");
		broker.brokerProperty("sasl.mechanism.inter.broker.protocol", "PLAIN");
		broker.brokerProperty("listener.name.external.plain.sasl.jaas.config", jaas(ADMIN) + " user_" + ADMIN + "=\""
				+ PASSWORDS.get(ADMIN) + "\" user_" + APP + "=\"" + PASSWORDS.get(APP) + "\";");
		broker.brokerProperty("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
		broker.brokerProperty("allow.everyone.if.no.acl.found", "false");
		// the broker itself, and the node's own controller connections (PLAINTEXT:
		// ANONYMOUS)
		broker.brokerProperty("super.users", "User:" + ADMIN + ";User:ANONYMOUS");
		broker.brokerProperty("group.initial.rebalance.delay.ms",
				SharedBroker.BROKER_SETTINGS.get("group.initial.rebalance.delay.ms"));
		broker.brokerProperty("transaction.state.log.replication.factor", "1");
		broker.brokerProperty("transaction.state.log.min.isr", "1");
		broker.brokerProperty("transaction.state.log.num.partitions", "3");
		try {
			broker.afterPropertiesSet();
		}
		finally {
			restore(EmbeddedKafkaBroker.SPRING_EMBEDDED_KAFKA_BROKERS, embeddedBrokers);
		}
		admin = Admin.create(sasl(ADMIN, Map.of()));
		producer = new KafkaProducer<>(sasl(ADMIN, Map.of(ProducerConfig.LINGER_MS_CONFIG, 0)), new StringSerializer(),
				new StringSerializer());
	}

	@AfterAll
	static void stopBroker() {
		producer.close(Duration.ofSeconds(5));
		admin.close(Duration.ofSeconds(5));
		broker.destroy();
	}

	@Test
	void clientsWithoutTheSaslSettingsOrWithWrongCredentialsCannotConnect() {
		Map<String, Object> noSasl = Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString(),
				AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 3000, AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
				3000);
		try (Admin plain = Admin.create(noSasl)) {
			// the broker drops a client that does not authenticate: it never gets an
			// answer
			assertThatExceptionOfType(ExecutionException.class)
				.isThrownBy(() -> plain.describeCluster().nodes().get(30, TimeUnit.SECONDS))
				.withCauseInstanceOf(TimeoutException.class);
		}
		Map<String, Object> wrongPassword = new HashMap<>(sasl(APP, noSasl));
		wrongPassword.put(SaslConfigs.SASL_JAAS_CONFIG, jaas(APP).replace(PASSWORDS.get(APP), "wrong") + ";");
		try (Admin wrong = Admin.create(wrongPassword)) {
			assertThatExceptionOfType(ExecutionException.class)
				.isThrownBy(() -> wrong.describeCluster().nodes().get(30, TimeUnit.SECONDS))
				.withCauseInstanceOf(SaslAuthenticationException.class);
		}
	}

	@Test
	void everyLibraryClientAuthenticatesAndNeedsNoMoreThanTheDocumentedAcls() throws Exception {
		String topic = "t" + UUID.randomUUID().toString().substring(0, 8);
		String group = "g-" + topic;
		String instance = "it-" + topic;
		admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
		allow(prefixedAcls(topic, group));
		Script script = Script.forTopic(topic)
			.failTransiently("a-0", 1)
			.failPermanently("b-0")
			.failTransiently("d-0", 1);

		try (ConfigurableApplicationContext app = start(topic, group, instance)) {
			// the first start creates the retry, dead-letter and lock topics
			send(topic, "a", "a-0");
			send(topic, "a", "a-1");
			send(topic, "b", "b-0");
			send(topic, "c", "c-0");
			// a-0 waits for its retry longer than park-after: parked, then read again by
			// the re-reader
			RetryContainer container = app.getBean(ListenerRegistry.class).container(instance);
			await().atMost(WAIT).pollInterval(Duration.ofMillis(20)).until(() -> container.load().parked() > 0);
			await().atMost(WAIT).until(() -> script.succeeded("a-1") && script.succeeded("c-0"));
			assertThat(script.firstSuccesses("a")).containsExactly("a-0", "a-1");
			// through the retry topic, not retried in place: the lock was written and the
			// record published
			assertThat(attempts(script, "a-0")).containsExactly(topic + "/0 failed",
					Names.retry(topic, "3s") + "/1 succeeded");
			assertThat(attempts(script, "a-1")).containsExactly(Names.retry(topic, "3s") + "/0 succeeded");
			assertThat(attempts(script, "b-0")).containsExactly(topic + "/0 failed");
			assertThat(readAll(Names.dlq(topic))).singleElement().satisfies((record) -> {
				assertThat(new String(record.value(), StandardCharsets.UTF_8)).isEqualTo("b-0");
				assertThat(ProtocolHeaders.text(record.headers(), ProtocolHeaders.DLQ_REASON)).isEqualTo("permanent");
			});
			// the dead-letter handler's consumer read the dead letter and committed in
			// its group
			await().atMost(WAIT).until(() -> committed(group + ".dlq-handler", Names.dlq(topic)) == 1);

			// the reaper's admin client finds a lock left by a move from a committed
			// record
			LockRegistry registry = app.getBean(LockCoordinator.class).registries().iterator().next();
			await().atMost(WAIT).until(() -> registry.size() == 0);
			ConsumerRecord<byte[], byte[]> c0 = readAll(topic).stream()
				.filter((record) -> new String(record.value(), StandardCharsets.UTF_8).equals("c-0"))
				.findFirst()
				.orElseThrow();
			await().atMost(WAIT).until(() -> committed(group, topic, c0.partition()) > c0.offset());
			registry.write(Lock.moving(UUID.randomUUID().toString(), Bytes.wrap("c".getBytes(StandardCharsets.UTF_8)),
					c0.partition(), c0.offset(), 1, new Position(0, c0.offset()), 0, null, Instant.now()));
			assertThat(registry.size()).isOne();
			await().atMost(WAIT).until(() -> registry.size() == 0);

			ResilienceHealthIndicator health = app.getBean(ResilienceHealthIndicator.class);
			await().atMost(WAIT).until(() -> health.health(true).getStatus().equals(Status.UP));
			// the endpoint's admin client counts the dead letters
			KafkaResilienceEndpoint endpoint = app.getBean(KafkaResilienceEndpoint.class);
			KafkaResilienceEndpoint.DlqDescriptor deadLetters = endpoint.resilience()
				.listeners()
				.get(0)
				.topics()
				.get(0)
				.deadLetters();
			assertThat(deadLetters.error()).isNull();
			assertThat(deadLetters.written()).isOne();

			// a replay writes to the group's own first retry topic, never to the main
			// topic: no
			// ACL more than the listener's
			DlqReplayer replayer = app.getBean(DlqReplayer.class);
			ReplayRequest replay = ReplayRequest.of(Names.dlq(topic), topic).withDryRun(false);
			assertThat(replayer.replay(replay.withDryRun(true)).matched()).isOne();
			assertThat(replayer.replay(replay).published()).isOne();
			await().atMost(WAIT).until(() -> readAll(Names.dlq(topic)).size() == 2);
			assertThat(script.attempts("b-0")).isEqualTo(2);
		}

		// transactions need the transactional ids of the instance; a restart checks the
		// configuration of the lock topic created before and reads the lock records
		// written so far
		assertThat(readAll(Names.locks(topic))).isNotEmpty();
		allow(new ResourcePattern(ResourceType.TRANSACTIONAL_ID, "kafka-resilience-" + instance + "-",
				PatternType.PREFIXED), AclOperation.WRITE);
		try (ConfigurableApplicationContext app = start(topic, group, instance,
				"kafka.resilience.dual-write=transaction")) {
			ResilienceHealthIndicator health = app.getBean(ResilienceHealthIndicator.class);
			await().atMost(WAIT).until(() -> health.health(true).getStatus().equals(Status.UP));
			send(topic, "d", "d-0");
			send(topic, "d", "d-1");
			await().atMost(WAIT).until(() -> script.succeeded("d-1"));
			assertThat(script.firstSuccesses("d")).containsExactly("d-0", "d-1");
			assertThat(attempts(script, "d-0")).containsExactly(topic + "/0 failed",
					Names.retry(topic, "3s") + "/1 succeeded");
			assertThat(attempts(script, "d-1")).containsExactly(Names.retry(topic, "3s") + "/0 succeeded");
			LockRegistry registry = app.getBean(LockCoordinator.class).registries().iterator().next();
			await().atMost(WAIT).until(() -> registry.size() == 0);
			assertThat(health.health(true).getStatus()).isEqualTo(Status.UP);
		}
	}

	@Test
	void startupFailsNamingTheTopicWhenAnAclOfTheListIsMissing() throws Exception {
		// no CREATE on the dead-letter topic: the first start cannot create it
		String first = "t" + UUID.randomUUID().toString().substring(0, 8);
		admin.createTopics(List.of(new NewTopic(first, 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
		allow(documentedAcls(first, "g-" + first).stream()
			.filter((acl) -> !(acl.pattern().name().equals(Names.dlq(first))
					&& acl.entry().operation() == AclOperation.CREATE))
			.toList());
		assertThatExceptionOfType(ApplicationContextException.class)
			.isThrownBy(() -> start(first, "g-" + first, "it-" + first).close())
			.withStackTraceContaining("Could not create topic '" + Names.dlq(first) + "'")
			.havingRootCause()
			.isInstanceOf(TopicAuthorizationException.class);

		// an existing lock topic whose configuration the user may not read: the
		// compaction check
		// fails (the configuration of the other topics only serves checks that are then
		// skipped)
		String second = "t" + UUID.randomUUID().toString().substring(0, 8);
		admin.createTopics(List.of(new NewTopic(second, 3, (short) 1),
				new NewTopic(Names.retry(second, "3s"), 3, (short) 1), new NewTopic(Names.dlq(second), 3, (short) 1),
				new NewTopic(Names.locks(second), 3, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
			.all()
			.get(30, TimeUnit.SECONDS);
		allow(documentedAcls(second, "g-" + second).stream()
			.filter((acl) -> !(acl.pattern().name().equals(Names.locks(second))
					&& acl.entry().operation() == AclOperation.DESCRIBE_CONFIGS))
			.toList());
		assertThatExceptionOfType(ApplicationContextException.class)
			.isThrownBy(() -> start(second, "g-" + second, "it-" + second).close())
			.withStackTraceContaining("Could not read the configuration of '" + Names.locks(second) + "'")
			.havingRootCause()
			.isInstanceOf(TopicAuthorizationException.class);
	}

	/**
	 * The ACLs of {@code docs/SECURITY.md} for one listener on {@code topic} with the
	 * single delay 3s, in group {@code group}, with topic creation on: literal names, no
	 * cluster ACL. The short form with one prefixed ACL is {@link #prefixedAcls}.
	 */
	private static List<AclBinding> documentedAcls(String topic, String group) {
		List<AclBinding> acls = new ArrayList<>();
		acls.addAll(acls(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL), AclOperation.READ,
				AclOperation.DESCRIBE_CONFIGS));
		acls.addAll(acls(new ResourcePattern(ResourceType.TOPIC, Names.retry(topic, "3s"), PatternType.LITERAL),
				AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE_CONFIGS));
		acls.addAll(acls(new ResourcePattern(ResourceType.TOPIC, Names.dlq(topic), PatternType.LITERAL),
				AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE_CONFIGS));
		acls.addAll(acls(new ResourcePattern(ResourceType.TOPIC, Names.locks(topic), PatternType.LITERAL),
				AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE_CONFIGS));
		acls.addAll(acls(new ResourcePattern(ResourceType.GROUP, group, PatternType.LITERAL), AclOperation.READ));
		acls.addAll(acls(new ResourcePattern(ResourceType.GROUP, group + ".dlq-handler", PatternType.LITERAL),
				AclOperation.READ));
		return acls;
	}

	/**
	 * The ACLs of {@code docs/SECURITY.md} in their short form: the group's whole ladder
	 * on {@code topic} under one prefixed ACL, {@code <group>.<topic>.}.
	 */
	private static List<AclBinding> prefixedAcls(String topic, String group) {
		List<AclBinding> acls = new ArrayList<>();
		acls.addAll(acls(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL), AclOperation.READ,
				AclOperation.DESCRIBE_CONFIGS));
		acls.addAll(acls(new ResourcePattern(ResourceType.TOPIC, group + "." + topic + ".", PatternType.PREFIXED),
				AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE_CONFIGS));
		acls.addAll(acls(new ResourcePattern(ResourceType.GROUP, group, PatternType.LITERAL), AclOperation.READ));
		acls.addAll(acls(new ResourcePattern(ResourceType.GROUP, group + ".dlq-handler", PatternType.LITERAL),
				AclOperation.READ));
		return acls;
	}

	private static List<AclBinding> acls(ResourcePattern resource, AclOperation... operations) {
		List<AclBinding> bindings = new ArrayList<>();
		for (AclOperation operation : operations) {
			bindings.add(new AclBinding(resource,
					new AccessControlEntry("User:" + APP, "*", operation, AclPermissionType.ALLOW)));
		}
		return bindings;
	}

	private static void allow(ResourcePattern resource, AclOperation... operations) throws Exception {
		allow(acls(resource, operations));
	}

	private static void allow(List<AclBinding> acls) throws Exception {
		admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
	}

	/**
	 * Every attempt at a value: the topic it was read from, its {@code retry.count} and
	 * the outcome.
	 */
	private static List<String> attempts(Script script, String value) {
		return script.journal()
			.stream()
			.filter((attempt) -> attempt.value().equals(value))
			.map((attempt) -> attempt.topic() + "/" + attempt.retryCount()
					+ (attempt.succeeded() ? " succeeded" : " failed"))
			.toList();
	}

	private static ConfigurableApplicationContext start(String topic, String group, String instance, String... more) {
		return new SpringApplicationBuilder(TestApplication.class).web(WebApplicationType.NONE)
			.properties(
					// the only security settings: what an application sets for its own
					// clients
					"spring.kafka.security.protocol=SASL_PLAINTEXT", "spring.kafka.properties.sasl.mechanism=PLAIN",
					"spring.kafka.properties.sasl.jaas.config=" + jaas(APP) + ";", "test.topic=" + topic,
					"spring.kafka.consumer.group-id=" + group, "spring.kafka.consumer.auto-offset-reset=earliest",
					"kafka.resilience.instance-id=" + instance, "kafka.resilience.retry.delays=3s",
					"kafka.resilience.consumer.park-after=1s", "kafka.resilience.consumer.commit-interval=200ms",
					"kafka.resilience.reaper.interval=500ms", "kafka.resilience.reaper.grace=3s",
					"management.endpoints.web.exposure.include=kafkaresilience", "spring.main.banner-mode=off")
			.properties(more)
			// an argument: it wins over a spring.kafka.bootstrap-servers system property
			.run("--spring.kafka.bootstrap-servers=" + broker.getBrokersAsString());
	}

	private static String jaas(String user) {
		return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + user + "\" password=\""
				+ PASSWORDS.get(user) + "\"";
	}

	/** Client settings of {@code user} over SASL/PLAIN, with {@code more}. */
	private static Map<String, Object> sasl(String user, Map<String, Object> more) {
		Map<String, Object> config = new HashMap<>(more);
		config.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString());
		config.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
		config.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
		config.put(SaslConfigs.SASL_JAAS_CONFIG, jaas(user) + ";");
		return config;
	}

	private static void send(String topic, String key, String value) throws Exception {
		producer.send(new ProducerRecord<>(topic, key, value)).get(30, TimeUnit.SECONDS);
	}

	/**
	 * Every record of a topic, read as the broker's user from the beginning to the
	 * current end.
	 */
	private static List<ConsumerRecord<byte[], byte[]>> readAll(String topic) {
		Map<String, Object> config = sasl(ADMIN, Map.of(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false));
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer())) {
			List<TopicPartition> partitions = consumer.partitionsFor(topic, WAIT)
				.stream()
				.map((info) -> new TopicPartition(topic, info.partition()))
				.toList();
			consumer.assign(partitions);
			consumer.seekToBeginning(partitions);
			Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, WAIT);
			List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
			while (partitions.stream().anyMatch((tp) -> consumer.position(tp, WAIT) < ends.get(tp))) {
				consumer.poll(Duration.ofMillis(200)).forEach(records::add);
			}
			return records;
		}
	}

	private static long committed(String group, String topic) throws Exception {
		long sum = 0;
		for (int p = 0; p < 3; p++) {
			sum += Math.max(0, committed(group, topic, p));
		}
		return sum;
	}

	/** The offset a group committed on a partition, or -1 when it has committed none. */
	private static long committed(String group, String topic, int partition) throws Exception {
		OffsetAndMetadata offset = admin.listConsumerGroupOffsets(group)
			.partitionsToOffsetAndMetadata()
			.get(30, TimeUnit.SECONDS)
			.get(new TopicPartition(topic, partition));
		return (offset != null) ? offset.offset() : -1;
	}

	private static void restore(String property, @Nullable String value) {
		if (value != null) {
			System.setProperty(property, value);
		}
		else {
			System.clearProperty(property);
		}
	}

}
