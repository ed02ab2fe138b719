package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A retried record runs again no earlier than its due time (the stage record's timestamp
 * plus the stage delay), and not much later.
 */
@UsesSharedBroker
class DelayPrecisionTests {

	@Test
	void aRetryRunsNoEarlierThanItsDueTimeAndWithinTwoSecondsOfIt() {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic);
		int keys = 50;
		List<String[]> records = new ArrayList<>();
		for (int i = 0; i < keys; i++) {
			script.failTransiently("v" + i, 1);
			records.add(new String[] { "key" + i, "v" + i });
		}
		try (ConfigurableApplicationContext context = TestApplication.start(topic, "kafka.resilience.retry.delays=2s",
				"kafka.resilience.retry.max-attempts=2")) {
			SharedBroker.sendAll(topic, records);
			await().atMost(Duration.ofSeconds(60))
				.until(() -> script.journal().stream().filter(Script.Attempt::succeeded).count() == keys);
		}
		List<Long> lateness = script.journal()
			.stream()
			.filter((a) -> a.topic().equals(Names.retry(topic, "2s")))
			.map((a) -> a.at().toEpochMilli() - (a.recordTimestamp() + 2000))
			.sorted()
			.toList();
		assertThat(lateness).hasSize(keys);
		long p50 = lateness.get(lateness.size() / 2);
		long p99 = lateness.get((int) Math.ceil(lateness.size() * 0.99) - 1);
		System.out.printf("Retry lateness with 2 s stages over %d retries: p50=%d ms, p99=%d ms, max=%d ms%n", keys,
				p50, p99, lateness.get(lateness.size() - 1));
		assertThat(lateness.get(0)).as("no retry runs before its due time").isGreaterThanOrEqualTo(0);
		assertThat(lateness.get(lateness.size() - 1)).isLessThan(2000);
	}

}
