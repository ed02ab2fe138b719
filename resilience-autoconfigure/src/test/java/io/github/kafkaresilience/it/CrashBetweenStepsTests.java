package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.internal.ladder.FaultInjection.Point;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An instance halts between two steps of a move, on a real broker: the JVM stops at once
 * (no shutdown hook, no commit, no undo) right after the lock write, right after the
 * publish, or right before the transaction commits. The test first looks at what the
 * crash left behind, then restarts the same instance and shows the key completing in
 * order with no lock left. Each mode crashes once on the classic group protocol and once
 * on the {@code consumer} one.
 */
@UsesSharedBroker
class CrashBetweenStepsTests {

	private static final String FAILING = "k:0:t1";

	@ParameterizedTest(name = "{0} mode, crash at {1}, {2} protocol")
	@CsvSource({ "compensate, LOCK_WRITTEN, classic", "compensate, PUBLISHED, consumer",
			"transaction, PUBLISHED, consumer", "transaction, COMMITTING, classic" })
	void aCrashBetweenTwoStepsOfAMoveIsHealedByTheRestart(String mode, Point point, String protocol) {
		String topic = SharedBroker.newTopic(3);
		SharedBroker.createTopic(AuditedApplication.auditTopic(topic), 1, Map.of());
		// a transaction the crash left open holds read-committed readers back until the
		// broker aborts it: after transaction.timeout.ms, 60 s unless set
		List<String> properties = List.of("kafka.resilience.retry.delays=1s", "kafka.resilience.dual-write=" + mode,
				"spring.kafka.consumer.properties.group.protocol=" + protocol,
				"spring.kafka.producer.properties.transaction.timeout.ms=10000");
		boolean transaction = mode.equals("transaction");
		try (InstanceProcess crashing = InstanceProcess.start(SharedBroker.bootstrapServers(), topic, "crash-" + topic,
				with(properties, "test.crash-at=" + point, "test.crash-value=" + FAILING))) {
			SharedBroker.sendAll(topic, List.of(new String[] { "k", FAILING }, new String[] { "k", "k:1:ok" },
					new String[] { "k", "k:2:ok" }));
			await().atMost(Duration.ofSeconds(90)).until(() -> !crashing.isAlive());
		}
		int published = (point == Point.LOCK_WRITTEN) ? 0 : 1;
		assertThat(SharedBroker.readAll(Names.retry(topic, "1s"), false))
			.as("written to the retry topic before the crash")
			.hasSize(published);
		if (transaction) {
			assertThat(SharedBroker.readAll(Names.retry(topic, "1s"), true)).as("visible to read-committed consumers")
				.isEmpty();
			assertThat(SharedBroker.readAll(Names.locks(topic), true)).as("locks visible to read-committed tailers")
				.isEmpty();
		}
		else {
			assertThat(ChaosRun.liveLocks(topic)).as("the lock in flight the crash left").isEqualTo(1);
		}
		assertThat(firstSuccesses(topic)).as("nothing of the key succeeded before the crash").isEmpty();

		try (InstanceProcess restarted = InstanceProcess.start(SharedBroker.bootstrapServers(), topic, "crash-" + topic,
				properties)) {
			await().atMost(Duration.ofSeconds(90))
				.untilAsserted(() -> assertThat(firstSuccesses(topic)).containsExactly(FAILING, "k:1:ok", "k:2:ok"));
			await().atMost(Duration.ofSeconds(30)).until(() -> ChaosRun.liveLocks(topic) == 0);
		}
	}

	/**
	 * Values of key k in the order of their first successful handling, from the audit
	 * topic.
	 */
	private static List<String> firstSuccesses(String topic) {
		return SharedBroker.readAll(AuditedApplication.auditTopic(topic))
			.stream()
			.map(AuditedApplication.Audit::parse)
			.filter(AuditedApplication.Audit::ok)
			.map(AuditedApplication.Audit::value)
			.distinct()
			.toList();
	}

	private static List<String> with(List<String> properties, String... more) {
		List<String> all = new ArrayList<>(properties);
		all.addAll(List.of(more));
		return all;
	}

}
