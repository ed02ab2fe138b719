package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.stream.Collectors;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.support.serializer.DeserializationException;
import org.springframework.kafka.support.serializer.ErrorHandlingDeserializer;
import org.springframework.kafka.support.serializer.SerializationUtils;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static io.github.kafkaresilience.it.OrderedRetryLadderTests.headers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Records that {@link ErrorHandlingDeserializer} cannot read (it returns {@code null} and
 * reports the failure in a header instead of throwing) are dead-lettered as poison and
 * never reach the method; the later records of their key are handled, in order.
 */
@UsesSharedBroker
class PoisonRecordsTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	/** What the method got, per main topic: the key and value of every handling. */
	static final Map<String, List<String>> handled = new ConcurrentHashMap<>();

	@Test
	void aValueTheDeserializerCannotReadIsDeadLetteredAsPoisonAndItsKeyMovesOn() {
		String topic = SharedBroker.newTopic(3);
		String free = SharedBroker.keyIn(0, 3, "free-");
		String locked = SharedBroker.keyIn(1, 3, "locked-");
		try (ConfigurableApplicationContext context = start(topic)) {
			send(topic, free, "A1");
			send(topic, free, "POISON-A"); // its key is free: dead-lettered from the main
											// topic
			send(topic, free, "A2");
			send(topic, locked, "B1-FAILS-ONCE"); // takes a lock
			send(topic, locked, "POISON-B"); // a follower: dead-lettered from its retry
												// stage
			send(topic, locked, "B2");

			await().atMost(WAIT).untilAsserted(() -> assertThat(handled(topic)).contains(free + "=A2", locked + "=B2"));
			assertThat(handled(topic)).filteredOn((entry) -> entry.startsWith(free + "="))
				.containsExactly(free + "=A1", free + "=A2");
			assertThat(handled(topic)).filteredOn((entry) -> entry.startsWith(locked + "="))
				.containsExactly(locked + "=B1-FAILS-ONCE", locked + "=B1-FAILS-ONCE", locked + "=B2");

			Map<String, ConsumerRecord<byte[], byte[]>> dead = await().atMost(WAIT)
				.until(() -> byValue(SharedBroker.readAll(Names.dlq(topic))), (letters) -> letters.size() == 2);
			assertThat(dead).containsOnlyKeys("POISON-A", "POISON-B");
			assertThat(headers(dead.get("POISON-A"))).containsEntry("dlq.reason", "poison")
				.containsEntry("retry.count", "0")
				.containsEntry("error.class", "permanent")
				.containsEntry("error.exception", DeserializationException.class.getName())
				.containsEntry("error.message",
						"failed to deserialize the value: " + SerializationException.class.getName()
								+ ": not a valid record: POISON-A")
				.containsEntry("previous.topic", topic)
				.containsEntry("original.offset", "1")
				.containsEntry("trace-id", "POISON-A")
				.doesNotContainKeys("lock.id", SerializationUtils.VALUE_DESERIALIZER_EXCEPTION_HEADER);
			assertThat(headers(dead.get("POISON-B"))).containsEntry("dlq.reason", "poison")
				.containsEntry("retry.count", "0")
				.containsEntry("error.exception", DeserializationException.class.getName())
				.containsEntry("previous.topic", Names.retry(topic, "1s"))
				.containsEntry("original.offset", "1")
				.containsEntry("trace-id", "POISON-B")
				.containsKey("lock.id")
				.doesNotContainKey(SerializationUtils.VALUE_DESERIALIZER_EXCEPTION_HEADER);
			assertThat(SharedBroker.readAll(Names.retry(topic, "1s")))
				.allSatisfy((record) -> assertThat(headers(record))
					.doesNotContainKey(SerializationUtils.VALUE_DESERIALIZER_EXCEPTION_HEADER));
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
		}
	}

	@Test
	void aKeyTheDeserializerCannotReadIsDeadLetteredAsPoison() {
		String topic = SharedBroker.newTopic(1);
		try (ConfigurableApplicationContext context = start(topic)) {
			send(topic, "POISON-KEY", "K1");
			send(topic, "fine", "F1");

			await().atMost(WAIT).untilAsserted(() -> assertThat(handled(topic)).containsExactly("fine=F1"));
			Map<String, ConsumerRecord<byte[], byte[]>> dead = await().atMost(WAIT)
				.until(() -> byValue(SharedBroker.readAll(Names.dlq(topic))), (letters) -> letters.size() == 1);
			assertThat(headers(dead.get("K1"))).containsEntry("dlq.reason", "poison")
				.containsEntry("retry.count", "0")
				.containsEntry("error.exception", DeserializationException.class.getName())
				.containsEntry("error.message",
						"failed to deserialize the key: " + SerializationException.class.getName()
								+ ": not a valid record: POISON-KEY")
				.doesNotContainKeys("lock.id", SerializationUtils.KEY_DESERIALIZER_EXCEPTION_HEADER);
			assertThat(new String(dead.get("K1").key(), StandardCharsets.UTF_8)).isEqualTo("POISON-KEY");
			assertThat(handled(topic)).containsExactly("fine=F1");
		}
	}

	private static ConfigurableApplicationContext start(String topic) {
		return TestApplication.start(PoisonApplication.class, topic, "kafka.resilience.retry.delays=1s",
				"spring.kafka.consumer.key-deserializer=" + ErrorHandlingDeserializer.class.getName(),
				"spring.kafka.consumer.properties[" + ErrorHandlingDeserializer.KEY_DESERIALIZER_CLASS + "]="
						+ StrictStringDeserializer.class.getName(),
				"spring.kafka.consumer.value-deserializer=" + ErrorHandlingDeserializer.class.getName(),
				"spring.kafka.consumer.properties[" + ErrorHandlingDeserializer.VALUE_DESERIALIZER_CLASS + "]="
						+ StrictStringDeserializer.class.getName());
	}

	private static List<String> handled(String topic) {
		return handled.getOrDefault(topic, List.of());
	}

	private static void send(String topic, String key, String value) {
		Headers headers = new RecordHeaders();
		headers.add("trace-id", value.getBytes(StandardCharsets.UTF_8));
		SharedBroker.send(new ProducerRecord<>(topic, null, key.getBytes(StandardCharsets.UTF_8),
				value.getBytes(StandardCharsets.UTF_8), headers));
	}

	private static Map<String, ConsumerRecord<byte[], byte[]>> byValue(List<ConsumerRecord<byte[], byte[]>> records) {
		return records.stream()
			.collect(Collectors.toMap((record) -> new String(record.value(), StandardCharsets.UTF_8),
					Function.identity()));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(RecordingListener.class)
	static class PoisonApplication {

	}

	static class RecordingListener {

		private final Map<String, Integer> attempts = new ConcurrentHashMap<>();

		@OrderedRetryListener(id = "poison-${test.topic}", topics = "${test.topic}")
		void handle(ConsumerRecord<String, String> record) {
			String original = ProtocolHeaders.text(record.headers(), ProtocolHeaders.ORIGINAL_TOPIC);
			String topic = (original != null) ? original : record.topic();
			handled.computeIfAbsent(topic, (t) -> new CopyOnWriteArrayList<>())
				.add(record.key() + "=" + record.value());
			String value = String.valueOf(record.value());
			if (value.endsWith("FAILS-ONCE") && this.attempts.merge(value, 1, Integer::sum) == 1) {
				throw new IllegalStateException("first attempt of " + value + " fails");
			}
		}

	}

}
