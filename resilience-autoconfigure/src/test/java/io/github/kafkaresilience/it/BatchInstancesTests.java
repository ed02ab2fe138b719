package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Batch listeners in JVMs of their own: two instances sharing a topic, one of them killed
 * with SIGKILL while keys are mid-ladder, then restarted. Both failure styles: the method
 * names its failed record by index, or fails as a whole and is bisected.
 */
@UsesSharedBroker
class BatchInstancesTests {

	private static final Duration WAIT = Duration.ofSeconds(120);

	/**
	 * Two instances share a topic; one is killed with SIGKILL while keys wait in the
	 * ladder and is restarted. Whichever instance runs a key's records, they run in
	 * order, and exactly the records that fail for good are dead-lettered. One style runs
	 * on the classic group protocol, the other on the {@code consumer} one.
	 */
	@ParameterizedTest(name = "{0} failures, {1} protocol")
	@CsvSource({ "index, classic", "whole, consumer" })
	void twoInstancesOneKilledAndRestartedKeepEveryKeysOrderAndDeadLetterExactlyWhatFailsForGood(String style,
			String protocol) {
		String topic = SharedBroker.newTopic(4);
		SharedBroker.createTopic(AuditedApplication.auditTopic(topic), 1, Map.of());
		String[] properties = properties(style, "spring.kafka.consumer.properties.group.protocol=" + protocol);
		List<String[]> records = records(12, 6);
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
				assertOutcome(topic, records);
				assertThat(MultiInstanceTests.audits(topic)).extracting(AuditedApplication.Audit::instance)
					.as("both instances ran records")
					.contains("first", "second");
			}
		}
	}

	private static String[] properties(String style, String... more) {
		List<String> properties = new ArrayList<>(
				List.of("test.batch=true", "test.batch-style=" + style, "kafka.resilience.retry.delays=2s,3s",
						"kafka.resilience.retry.max-attempts=3", "kafka.resilience.consumer.batch-size=8"));
		properties.addAll(List.of(more));
		return properties.toArray(String[]::new);
	}

	/**
	 * {@code keys} keys with {@code perKey} records each: one in seven fails until its
	 * second retry (t2), one in eleven fails permanently (p), every key's last record
	 * fails on every attempt of key 0 (t9: exhausted after three attempts).
	 */
	static List<String[]> records(int keys, int perKey) {
		List<String[]> records = new ArrayList<>();
		int n = 0;
		for (int seq = 0; seq < perKey; seq++) {
			for (int k = 0; k < keys; k++) {
				n++;
				String rule = (k == 0 && seq == perKey - 1) ? "t9" : (n % 11 == 0) ? "p" : (n % 7 == 0) ? "t2" : "ok";
				records.add(new String[] { "k" + k, "k" + k + ":" + seq + ":" + rule });
			}
		}
		return records;
	}

	/**
	 * Every record that does not fail for good succeeded, the first successes of each key
	 * in the order sent; the dead-letter topic holds exactly the records that failed for
	 * good (a record dead-lettered but not committed when its partition moved or its
	 * instance died is dead-lettered again by the next owner: at least once); no lock is
	 * left.
	 */
	static void assertOutcome(String topic, List<String[]> records) {
		Map<String, List<String>> expected = new LinkedHashMap<>();
		List<String> dead = new ArrayList<>();
		for (String[] record : records) {
			if (record[1].endsWith(":p") || record[1].endsWith(":t9")) {
				dead.add(record[1]);
			}
			else {
				expected.computeIfAbsent(record[0], (k) -> new ArrayList<>()).add(record[1]);
			}
		}
		await().atMost(WAIT).untilAsserted(() -> assertThat(firstSuccessesByKey(topic)).isEqualTo(expected));
		await().atMost(WAIT)
			.untilAsserted(() -> assertThat(
					SharedBroker.readAll(Names.dlq(topic)).stream().map((r) -> new String(r.value())).distinct())
				.containsExactlyInAnyOrderElementsOf(dead));
		assertThat(SharedBroker.readAll(Names.dlq(topic)))
			.allSatisfy((r) -> assertThat(OrderedRetryLadderTests.headers(r)).containsEntry("dlq.reason",
					new String(r.value()).endsWith(":p") ? "permanent" : "exhausted"));
		await().atMost(Duration.ofSeconds(30)).until(() -> ChaosRun.liveLocks(topic) == 0);
	}

	private static Map<String, List<String>> firstSuccessesByKey(String topic) {
		return MultiInstanceTests.audits(topic)
			.stream()
			.filter(AuditedApplication.Audit::ok)
			.collect(Collectors.groupingBy(AuditedApplication.Audit::key, LinkedHashMap::new, Collectors.mapping(
					AuditedApplication.Audit::value,
					Collectors.collectingAndThen(Collectors.toList(), (list) -> list.stream().distinct().toList()))));
	}

}
