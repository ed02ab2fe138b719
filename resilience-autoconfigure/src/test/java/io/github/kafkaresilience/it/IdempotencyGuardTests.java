package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.dlq.ReplayRequest;
import io.github.kafkaresilience.idempotency.JdbcIdempotencyStore;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The idempotency guard on a real broker, with the JDBC store on an embedded H2 database
 * and a handler that charges payments in that database: a failed attempt leaves no
 * charge, a redelivery and a second replay are skipped and counted, a business key runs
 * once, and a claim held elsewhere is waited out through the retry stages.
 */
@UsesSharedBroker
class IdempotencyGuardTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	@Test
	void aFailingAttemptLeavesNoChargeAndItsRetryChargesOnceUnderTheBirthplaceKey() {
		String topic = SharedBroker.newTopic(2);
		Script script = Script.forTopic(topic).failTransiently("p-2", 2);
		try (ConfigurableApplicationContext context = start(topic)) {
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			for (int i = 1; i <= 4; i++) {
				SharedBroker.send(topic, "customer-" + i, "p-" + i);
			}

			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(charges(jdbc)).containsOnlyKeys("p-1", "p-2", "p-3", "p-4"));
			await().atMost(WAIT).until(() -> completedKeys(jdbc).size() == 4);

			// the two failed attempts ran the handler, which charged; their transactions
			// rolled back
			assertThat(script.attempts("p-2")).isEqualTo(3);
			assertThat(charges(jdbc)).allSatisfy((payment, count) -> assertThat(count).as(payment).isOne());
			ConsumerRecord<byte[], byte[]> p2 = SharedBroker.readAll(topic)
				.stream()
				.filter((record) -> new String(record.value()).equals("p-2"))
				.findFirst()
				.orElseThrow();
			// the retry that succeeded read the record from a retry topic, but completed
			// the key of its birthplace
			assertThat(completedKeys(jdbc)).contains(topic + "/" + p2.partition() + "/" + p2.offset());
			assertThat(SharedBroker.readAll(Names.dlq(topic))).isEmpty();
		}
	}

	@Test
	void recordsRedeliveredAfterTheGroupWentBackAreSkippedAndCounted() throws Exception {
		String topic = SharedBroker.newTopic(2);
		Script script = Script.forTopic(topic);
		String database = "spring.datasource.url=jdbc:h2:mem:" + topic + ";DB_CLOSE_DELAY=-1";
		try (ConfigurableApplicationContext context = start(topic, database)) {
			for (int i = 1; i <= 6; i++) {
				SharedBroker.send(topic, "customer-" + i, "p-" + i);
			}
			await().atMost(WAIT).until(() -> completedKeys(context.getBean(JdbcTemplate.class)).size() == 6);
			await().atMost(WAIT).until(() -> committed(topic) == 6);
		}
		// as after a crash before a commit: the group reads every record again
		try (Admin admin = Admin
			.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers()))) {
			admin
				.alterConsumerGroupOffsets("g-" + topic, Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(0),
						new TopicPartition(topic, 1), new OffsetAndMetadata(0)))
				.all()
				.get();
		}
		assertThat(committed(topic)).isZero();
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		try (ConfigurableApplicationContext context = start(topic, database)) {
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(meters));

			await().atMost(WAIT).until(() -> committed(topic) == 6);

			assertThat(skipped(meters, topic)).isEqualTo(6);
			assertThat(script.journal()).hasSize(6);
			assertThat(charges(context.getBean(JdbcTemplate.class))).hasSize(6)
				.allSatisfy((payment, count) -> assertThat(count).as(payment).isOne());
		}
	}

	@Test
	void aDeadLetterReplayedTwiceIsHandledOnceAndTheSecondReplayIsSkipped() {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic).failTransiently("p-1", 1);
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		try (ConfigurableApplicationContext context = start(topic, "kafka.resilience.retry.max-attempts=1")) {
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(meters));
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			SharedBroker.send(topic, "customer-1", "p-1");
			await().atMost(WAIT).until(() -> SharedBroker.readAll(Names.dlq(topic)).size() == 1);
			assertThat(charges(jdbc)).isEmpty();
			DlqReplayer replayer = context.getBean(DlqReplayer.class);

			assertThat(replayer.replay(ReplayRequest.of(Names.dlq(topic), topic).withDryRun(false)).published())
				.isOne();
			await().atMost(WAIT).untilAsserted(() -> assertThat(charges(jdbc)).containsEntry("p-1", 1));
			assertThat(replayer.replay(ReplayRequest.of(Names.dlq(topic), topic).withDryRun(false)).published())
				.isOne();
			// both replays entered the group's first retry topic (each an entry and the
			// copy its
			// admission moved to the end of the stage), and both are done there
			await().atMost(WAIT).until(() -> SharedBroker.committed("g-" + topic, Names.retry(topic, "1s"), 0) == 4);

			assertThat(skipped(meters, topic)).isOne();
			assertThat(script.attempts("p-1")).isEqualTo(2);
			assertThat(charges(jdbc)).containsExactly(Map.entry("p-1", 1));
			assertThat(completedKeys(jdbc)).containsExactly(topic + "/0/0");
			assertThat(SharedBroker.readAll(Names.dlq(topic))).hasSize(1);
		}
	}

	@Test
	void aBusinessKeyExpressionRunsTheHandlerOncePerBusinessId() {
		String topic = SharedBroker.newTopic(2);
		Script script = Script.forTopic(topic);
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		try (ConfigurableApplicationContext context = start(topic, "test.idempotency-key=value")) {
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(meters));
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			SharedBroker.send(topic, "web", "p-1");
			SharedBroker.send(topic, "mobile", "p-1"); // the same payment, sent twice by
														// two clients
			SharedBroker.send(topic, "web", "p-2");

			// the two copies of p-1 may run at once on two workers: the second then finds
			// the key
			// held, takes a retry stage (and p-2 of its key follows it) and is skipped
			// there
			await().atMost(WAIT).untilAsserted(() -> assertThat(skipped(meters, topic)).isOne());
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(charges(jdbc)).containsOnly(Map.entry("p-1", 1), Map.entry("p-2", 1)));
			await().atMost(WAIT).until(() -> committed(topic) == 3 && liveLocks(context, topic) == 0);

			assertThat(completedKeys(jdbc)).containsExactlyInAnyOrder("p-1", "p-2");
			assertThat(skipped(meters, topic)).isOne();
			assertThat(script.journal()).hasSize(2);
		}
	}

	@Test
	void aKeyHeldByAnotherAttemptIsRetriedUntilTheClaimsLeaseRunsOut() {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic);
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		try (ConfigurableApplicationContext context = start(topic, "kafka.resilience.idempotency.lease=3s",
				"kafka.resilience.retry.delays=2s", "kafka.resilience.retry.max-attempts=6")) {
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(meters));
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			// an instance that crashed while it handled the first record of the topic
			// left its claim
			jdbc.update("INSERT INTO " + JdbcIdempotencyStore.TABLE
					+ " (scope, idempotency_key, state, token, updated_at) VALUES (?, ?, 'CLAIMED', 'crashed', ?)",
					"charge-" + topic, topic + "/0/0", System.currentTimeMillis());

			SharedBroker.send(topic, "customer-1", "p-1");

			await().atMost(WAIT).untilAsserted(() -> assertThat(charges(jdbc)).containsExactly(Map.entry("p-1", 1)));
			assertThat(counter(meters, "kafka.resilience.idempotency.held", topic)).isGreaterThanOrEqualTo(1);
			assertThat(script.journal()).singleElement()
				.satisfies((attempt) -> assertThat(attempt.topic()).isEqualTo(Names.retry(topic, "2s")));
			assertThat(completedKeys(jdbc)).containsExactly(topic + "/0/0");
			assertThat(SharedBroker.readAll(Names.dlq(topic))).isEmpty();
		}
	}

	private static ConfigurableApplicationContext start(String topic, String... properties) {
		String[] all = new String[properties.length + 2];
		all[0] = "spring.datasource.url=jdbc:h2:mem:" + topic + "-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1";
		all[1] = "kafka.resilience.idempotency.lease=1m";
		System.arraycopy(properties, 0, all, 2, properties.length);
		return TestApplication.start(ChargingApplication.class, topic, all);
	}

	private static Map<String, Integer> charges(JdbcTemplate jdbc) {
		return jdbc.queryForList("SELECT payment FROM charges", String.class)
			.stream()
			.collect(Collectors.toMap((payment) -> payment, (payment) -> 1, Integer::sum));
	}

	private static List<String> completedKeys(JdbcTemplate jdbc) {
		return jdbc.queryForList(
				"SELECT idempotency_key FROM " + JdbcIdempotencyStore.TABLE + " WHERE state = 'COMPLETED'",
				String.class);
	}

	private static long committed(String topic) {
		// a partition without a committed offset counts as 0 (committed gives -1 for it,
		// or for no partition)
		return Math.max(0, SharedBroker.committed("g-" + topic, topic, 0))
				+ Math.max(0, SharedBroker.committed("g-" + topic, topic, 1));
	}

	private static double skipped(SimpleMeterRegistry meters, String topic) {
		return counter(meters, "kafka.resilience.idempotency.skipped", topic);
	}

	private static double counter(SimpleMeterRegistry meters, String name, String topic) {
		return meters.find(name).tag("topic", topic).counters().stream().mapToDouble(Counter::count).sum();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(ChargingListener.class)
	static class ChargingApplication {

	}

	/** Charges a payment in the database, then does what the topic's script says. */
	static class ChargingListener {

		private final JdbcTemplate jdbc;

		ChargingListener(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
			jdbc.execute(
					"CREATE TABLE IF NOT EXISTS charges (payment VARCHAR(100) NOT NULL, topic VARCHAR(200) NOT NULL)");
		}

		@OrderedRetryListener(id = "charge-${test.topic}", topics = "${test.topic}", idempotent = "true",
				idempotencyKey = "${test.idempotency-key:}")
		void charge(ConsumerRecord<String, String> record) {
			this.jdbc.update("INSERT INTO charges (payment, topic) VALUES (?, ?)", record.value(), record.topic());
			String origin = ProtocolHeaders.text(record.headers(), ProtocolHeaders.ORIGINAL_TOPIC);
			Script.forTopic((origin != null) ? origin : record.topic()).handle(record);
		}

	}

}
