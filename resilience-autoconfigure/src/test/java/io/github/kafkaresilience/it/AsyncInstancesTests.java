package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Listeners whose results complete later, in JVMs of their own: two instances share a topic,
 * one is killed with SIGKILL while keys wait in the ladder and results are pending, then
 * restarted. A {@code CompletableFuture}, a {@code Mono} and a Kotlin {@code suspend} function.
 */
@UsesSharedBroker
class AsyncInstancesTests {

	private static final Duration WAIT = Duration.ofSeconds(120);

	/**
	 * Whichever instance runs a key's records, and although results were pending when one
	 * instance died, the first successes of each key come in the order sent, exactly the records
	 * that fail for good are dead-lettered, and no lock is left.
	 */
	@ParameterizedTest(name = "{0}, {1} protocol")
	@CsvSource({ "future, classic", "mono, consumer", "suspend, classic" })
	void twoInstancesOneKilledAndRestartedKeepEveryKeysOrderAndDeadLetterExactlyWhatFailsForGood(String kind,
			String protocol) {
		String topic = SharedBroker.newTopic(4);
		SharedBroker.createTopic(AuditedApplication.auditTopic(topic), 1, Map.of());
		String[] properties = { "test.async=" + kind, "kafka.resilience.retry.delays=2s,3s",
				"kafka.resilience.retry.max-attempts=3", "spring.kafka.consumer.properties.group.protocol=" + protocol };
		List<String[]> records = BatchInstancesTests.records(12, 6);
		try (InstanceProcess second = InstanceProcess.start(topic, "second", properties)) {
			try (InstanceProcess first = InstanceProcess.start(topic, "first", properties)) {
				await().atMost(WAIT).until(() -> MultiInstanceTests.joined(first) && MultiInstanceTests.joined(second));
				SharedBroker.sendAll(topic, records);
				// keys wait in the ladder (a t2 record is there for 5 s at least) when the instance dies
				await().atMost(WAIT).until(() -> ChaosRun.liveLocks(topic) > 0);
				first.kill();
			}
			try (InstanceProcess restarted = InstanceProcess.start(topic, "first", properties)) {
				BatchInstancesTests.assertOutcome(topic, records);
				assertThat(MultiInstanceTests.audits(topic)).extracting(AuditedApplication.Audit::instance)
					.as("both instances ran records")
					.contains("first", "second");
			}
		}
	}

}
