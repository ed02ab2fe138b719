package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The ladder end to end on a real broker: repeated failures, exhaustion, permanent
 * failures, poison records, restarts and misconfigured topics.
 */
@UsesSharedBroker
class OrderedRetryLadderTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	@Test
	void aRecordFailingOnMainAndTwoStagesStillRunsBeforeItsFollowersIncludingOnesProducedMeanwhile() {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic).failTransiently("A", 3);
		try (ConfigurableApplicationContext context = TestApplication.start(topic,
				"kafka.resilience.retry.delays=1s,2s,3s")) {
			SharedBroker.send(topic, "k", "A");
			SharedBroker.send(topic, "k", "B");
			await().atMost(WAIT).until(() -> script.attempts("A") == 2);
			SharedBroker.send(topic, "k", "C"); // A now waits in stage 2
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("A", "B", "C"));
			List<String> attemptsOfA = script.journal()
				.stream()
				.filter((a) -> a.value().equals("A"))
				.map(Script.Attempt::topic)
				.toList();
			assertThat(attemptsOfA).containsExactly(topic, Names.retry(topic, "1s"), Names.retry(topic, "2s"),
					Names.retry(topic, "3s"));
			assertThat(script.attempts("B")).isEqualTo(1);
			assertThat(script.attempts("C")).isEqualTo(1);
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
		}
	}

	@Test
	void anExhaustedRecordGoesToTheDeadLetterTopicWithEveryHeaderAndReleasesItsKey() {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic).failTransiently("A", Integer.MAX_VALUE);
		try (ConfigurableApplicationContext context = TestApplication.start(topic,
				"kafka.resilience.retry.delays=1s,2s", "kafka.resilience.retry.max-attempts=3")) {
			RecordHeaders userHeaders = new RecordHeaders();
			userHeaders.add("trace-id", "abc".getBytes(StandardCharsets.UTF_8));
			userHeaders.add("retry.count", "7".getBytes(StandardCharsets.UTF_8)); // forged:
																					// ignored
																					// on
																					// the
																					// main
																					// topic
			SharedBroker.send(new ProducerRecord<>(topic, null, "k".getBytes(), "A".getBytes(), userHeaders));
			SharedBroker.send(topic, "k", "B");
			SharedBroker.send(topic, "k", "C");
			await().atMost(WAIT).untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("B", "C"));
			assertThat(script.attempts("A")).isEqualTo(3);
			assertThat(script.journal().stream().map(Script.Attempt::value).toList()).containsSubsequence("A", "A", "A",
					"B", "C");
			List<ConsumerRecord<byte[], byte[]>> dlq = SharedBroker.readAll(Names.dlq(topic));
			assertThat(dlq).hasSize(1);
			ConsumerRecord<byte[], byte[]> dead = dlq.get(0);
			assertThat(new String(dead.key())).isEqualTo("k");
			assertThat(new String(dead.value())).isEqualTo("A");
			Map<String, String> headers = headers(dead);
			assertThat(headers).containsEntry("trace-id", "abc")
				.containsEntry("retry.count", "3")
				.containsEntry("error.class", "transient")
				.containsEntry("error.exception", IllegalStateException.class.getName())
				.containsEntry("error.message", "attempt 3 of A fails")
				.containsEntry("previous.topic", Names.retry(topic, "2s"))
				.containsEntry("original.topic", topic)
				.containsEntry("original.offset", "0")
				.containsEntry("dlq.reason", "exhausted")
				.containsKeys("original.partition", "lock.id");
			assertThat(headers.get("error.timestamp")).matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{9}Z");
			assertThat(Integer.parseInt(headers.get("original.partition"))).isEqualTo(dead.partition());
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
		}
	}

	@Test
	void permanentFailuresAndPoisonRecordsGoStraightToTheDeadLetterTopicWithoutBlockingTheirKey() {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic).failPermanently("P-1");
		try (ConfigurableApplicationContext context = TestApplication.start(topic, "kafka.resilience.retry.delays=5s",
				"spring.kafka.consumer.value-deserializer=" + StrictStringDeserializer.class.getName())) {
			SharedBroker.send(topic, "p", "P-1");
			SharedBroker.send(topic, "p", "P-2");
			SharedBroker.send(topic, "q", "POISON-1");
			SharedBroker.send(topic, "q", "Q-2");
			await().atMost(WAIT).untilAsserted(() -> {
				assertThat(script.firstSuccesses("p")).containsExactly("P-2");
				assertThat(script.firstSuccesses("q")).containsExactly("Q-2");
			});
			await().atMost(WAIT).untilAsserted(() -> assertThat(SharedBroker.readAll(Names.dlq(topic))).hasSize(2));
			Map<String, Map<String, String>> dead = SharedBroker.readAll(Names.dlq(topic))
				.stream()
				.collect(Collectors.toMap((r) -> new String(r.value()), OrderedRetryLadderTests::headers));
			assertThat(dead.get("P-1")).containsEntry("dlq.reason", "permanent")
				.containsEntry("error.class", "permanent")
				.containsEntry("retry.count", "1")
				.containsEntry("previous.topic", topic)
				.doesNotContainKey("lock.id");
			assertThat(dead.get("POISON-1")).containsEntry("dlq.reason", "poison")
				.containsEntry("previous.topic", topic)
				.containsEntry("error.exception", "org.apache.kafka.common.errors.SerializationException");
			assertThat(SharedBroker.readAll(Names.retry(topic, "5s"))).as("no stage visited").isEmpty();
			assertThat(liveLocks(context, topic)).isZero();
		}
	}

	@Test
	void aRestartedInstanceRebuildsItsLocksFromTheLockTopicAndKeepsTheKeysOrder() {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic).failTransiently("A", 2);
		String[] properties = { "kafka.resilience.retry.delays=3s,4s",
				"kafka.resilience.instance-id=restart-" + topic };
		try (ConfigurableApplicationContext first = TestApplication.start(topic, properties)) {
			SharedBroker.send(topic, "k", "A");
			SharedBroker.send(topic, "k", "B");
			await().atMost(WAIT).until(() -> script.attempts("A") == 1 && liveLocks(first, topic) == 2);
		}
		assertThat(script.firstSuccesses("k")).isEmpty();
		SharedBroker.send(topic, "k", "C");
		try (ConfigurableApplicationContext second = TestApplication.start(topic, properties)) {
			await().atMost(WAIT).until(() -> liveLocks(second, topic) >= 2);
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("A", "B", "C"));
			assertThat(script.attempts("A")).isEqualTo(3);
			await().atMost(WAIT).until(() -> liveLocks(second, topic) == 0);
		}
	}

	@Test
	void anExistingRetryTopicWithAnotherPartitionCountFailsStartup() {
		String topic = SharedBroker.newTopic(3);
		SharedBroker.createTopic(Names.retry(topic, "1s"), 1, Map.of());
		assertThatThrownBy(() -> TestApplication.start(topic, "kafka.resilience.retry.delays=1s,2s").close())
			.rootCause()
			.hasMessageContaining(
					"Topic '" + Names.retry(topic, "1s") + "' has 1 partitions but '" + topic + "' has 3");
	}

	@Test
	void anExistingLockTopicThatIsNotCompactedFailsStartup() {
		String topic = SharedBroker.newTopic(3);
		SharedBroker.createTopic(Names.locks(topic), 3, Map.of("cleanup.policy", "delete"));
		assertThatThrownBy(() -> TestApplication.start(topic).close()).rootCause()
			.hasMessageContaining(
					"Lock topic '" + Names.locks(topic) + "' has cleanup.policy=delete but must be compacted");
	}

	static Map<String, String> headers(ConsumerRecord<byte[], byte[]> record) {
		Map<String, String> headers = new HashMap<>();
		for (Header header : record.headers()) {
			headers.put(header.key(), new String(header.value(), StandardCharsets.UTF_8));
		}
		return headers;
	}

}
