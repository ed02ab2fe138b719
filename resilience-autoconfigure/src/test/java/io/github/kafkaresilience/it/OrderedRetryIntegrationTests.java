package io.github.kafkaresilience.it;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Ordered non-blocking retries end to end on a real broker.
 */
@UsesSharedBroker
class OrderedRetryIntegrationTests {

	@Test
	void followersOfAFailedRecordRunAfterItWhileOtherKeysDoNotWait() {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic).failTransiently("k-0", 1);
		try (ConfigurableApplicationContext context = TestApplication.start(topic,
				"kafka.resilience.retry.delays=10s,20s")) {
			List<String[]> records = new ArrayList<>();
			IntStream.range(0, 5).forEach((i) -> records.add(new String[] { "k", "k-" + i }));
			List<String> others = new ArrayList<>();
			for (int i = 0; i < 1000; i++) {
				String key = "o" + (i % 100);
				String value = key + "-" + (i / 100);
				others.add(value);
				records.add(new String[] { key, value });
			}
			SharedBroker.sendAll(topic, records);
			await().atMost(Duration.ofSeconds(60))
				.untilAsserted(() -> assertThat(script.firstSuccesses("k")).hasSize(5));
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(script.journal()).hasSize(1006));
			Script.Attempt failed = script.journal()
				.stream()
				.filter((a) -> a.value().equals("k-0"))
				.findFirst()
				.orElseThrow();
			Script.Attempt retry = script.journal()
				.stream()
				.filter((a) -> a.value().equals("k-0") && a.succeeded())
				.findFirst()
				.orElseThrow();
			Instant retried = retry.at();
			assertThat(failed.succeeded()).isFalse();
			assertThat(retry.topic()).isEqualTo(Names.retry(topic, "10s"));
			assertThat(retried).isAfterOrEqualTo(Instant.ofEpochMilli(retry.recordTimestamp() + 10_000));
			Instant lastOther = script.journal()
				.stream()
				.filter((a) -> !a.key().equals("k"))
				.map(Script.Attempt::at)
				.max(Instant::compareTo)
				.orElseThrow();
			assertThat(script.firstSuccesses("k")).containsExactly("k-0", "k-1", "k-2", "k-3", "k-4");
			assertThat(script.journal().stream().filter((a) -> !a.key().equals("k")).map(Script.Attempt::value))
				.containsExactlyInAnyOrderElementsOf(others);
			assertThat(lastOther).as("other keys finished before the failed record's retry was due").isBefore(retried);
			Map<String, List<String>> byKey = script.firstSuccessesByKey();
			for (int k = 0; k < 100; k++) {
				int key = k;
				assertThat(byKey.get("o" + k))
					.containsExactlyElementsOf(IntStream.range(0, 10).mapToObj((i) -> "o" + key + "-" + i).toList());
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> liveLocks(context, topic) == 0);
		}
	}

	static int liveLocks(ConfigurableApplicationContext context, String topic) {
		return context.getBean(LockCoordinator.class)
			.registries()
			.stream()
			.filter((registry) -> registry.mainTopic().equals(topic))
			.mapToInt((registry) -> registry.size())
			.sum();
	}

}
