package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Listeners whose results complete later, in JVMs of their own: two instances share a
 * topic, one is killed with SIGKILL while keys wait in the ladder and results are
 * pending, then restarted. A {@code CompletableFuture}, a {@code Mono} and a Kotlin
 * {@code suspend} function.
 */
@UsesSharedBroker
class AsyncInstancesTests {

	private static final Duration WAIT = Duration.ofSeconds(120);

	/**
	 * Whichever instance runs a key's records, and although results were pending when one
	 * instance died, the first successes of each key come in the order sent, exactly the
	 * records that fail for good are dead-lettered, and no lock is left.
	 */
	@ParameterizedTest(name = "{0}, {1} protocol")
	@CsvSource({ "future, classic", "mono, consumer", "suspend, classic" })
	void twoInstancesOneKilledAndRestartedKeepEveryKeysOrderAndDeadLetterExactlyWhatFailsForGood(String kind,
			String protocol) {
		String topic = SharedBroker.newTopic(4);
		SharedBroker.createTopic(AuditedApplication.auditTopic(topic), 1, Map.of());
		String[] properties = { "test.async=" + kind, "kafka.resilience.retry.delays=2s,3s",
				"kafka.resilience.retry.max-attempts=3",
				"spring.kafka.consumer.properties.group.protocol=" + protocol };
		List<String[]> records = BatchInstancesTests.records(12, 6);
		try (InstanceProcess second = InstanceProcess.start(topic, "second", properties)) {
			try (InstanceProcess first = InstanceProcess.start(topic, "first", properties)) {
				await().atMost(WAIT).until(() -> MultiInstanceTests.joined(first) && MultiInstanceTests.joined(second));
				SharedBroker.sendAll(topic, records);
				// keys wait in the ladder (a t2 record is there for 5 s at least) when
				// the instance dies
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

	/**
	 * A read-process-write listener ({@code @SendTo}) in {@code transaction} mode, two
	 * instances, one killed with SIGKILL while it runs records (records then run again):
	 * every record that succeeded, on the main topic or on a retry topic, has exactly one
	 * reply among the committed ones, and a record that failed for good none.
	 */
	@Test
	void inTransactionModeEveryRecordThatSucceededHasExactlyOneCommittedReplyThroughASigkill() {
		String topic = SharedBroker.newTopic(4);
		SharedBroker.createTopic(AuditedApplication.auditTopic(topic), 1, Map.of());
		SharedBroker.createTopic(topic + ".replies", 4, Map.of());
		// the killed instance's open transactions hold read-committed readers back until
		// they time out
		String[] properties = { "test.async=reply", "kafka.resilience.dual-write=transaction",
				"kafka.resilience.retry.delays=2s,3s", "kafka.resilience.retry.max-attempts=3",
				"test.max-latency-ms=40", "spring.kafka.producer.properties.transaction.timeout.ms=10000" };
		// keys k0 to k11 have records that fail; keys c0 to c11 only records that succeed
		// at once
		List<String[]> records = new ArrayList<>(BatchInstancesTests.records(12, 10));
		for (int seq = 0; seq < 10; seq++) {
			for (int k = 0; k < 12; k++) {
				records.add(new String[] { "c" + k, "c" + k + ":" + seq + ":ok" });
			}
		}
		try (InstanceProcess second = InstanceProcess.start(topic, "second", properties)) {
			try (InstanceProcess first = InstanceProcess.start(topic, "first", properties)) {
				await().atMost(WAIT).until(() -> MultiInstanceTests.joined(first) && MultiInstanceTests.joined(second));
				SharedBroker.sendAll(topic, records);
				// killed while it runs records, some of them replied to in transactions
				// not committed yet
				await().atMost(WAIT)
					.until(() -> MultiInstanceTests.audits(topic)
						.stream()
						.filter((audit) -> audit.instance().equals("first"))
						.count() >= 40);
				first.kill();
			}
			try (InstanceProcess restarted = InstanceProcess.start(topic, "first", properties)) {
				BatchInstancesTests.assertOutcome(topic, records);
				Map<String, Long> replies = SharedBroker.readAll(topic + ".replies", true)
					.stream()
					.collect(Collectors.groupingBy((r) -> new String(r.value(), StandardCharsets.UTF_8),
							Collectors.counting()));
				for (String[] record : records) {
					String value = record[1];
					Long count = replies.get("re:" + value);
					if (value.endsWith(":p") || value.endsWith(":t9")) {
						assertThat(count).as("committed replies to %s, which failed for good", value).isNull();
					}
					else {
						assertThat(count).as("committed replies to %s", value).isEqualTo(1L);
					}
				}
				assertThat(replies.keySet())
					.allMatch((reply) -> records.stream().anyMatch((r) -> reply.equals("re:" + r[1])));
				assertThat(MultiInstanceTests.audits(topic).stream().filter(AuditedApplication.Audit::ok).count())
					.as("successful attempts: some records ran again after the SIGKILL")
					.isGreaterThan(replies.size());
			}
		}
	}

}
