package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import io.github.kafkaresilience.OrderedRetryListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.support.serializer.ErrorHandlingDeserializer;
import org.springframework.kafka.support.serializer.JacksonJsonDeserializer;
import org.springframework.kafka.support.serializer.JacksonJsonSerializer;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Values written by spring-kafka's JSON serializer with its type headers, read through
 * {@link ErrorHandlingDeserializer} and the JSON deserializer, which removes the type
 * headers from the headers it is given: every attempt of a retried record reads the same
 * value again.
 */
@UsesSharedBroker
class JsonRecordsTests {

	private static final int KEYS = 12;

	private static final int RECORDS = 120;

	/** Every handling, in order. */
	static final List<Attempt> attempts = new CopyOnWriteArrayList<>();

	/**
	 * One handling.
	 *
	 * @param id the order id, from a header of the record
	 * @param key the key the method got
	 * @param value the value the method got
	 * @param succeeded whether the method returned normally
	 */
	record Attempt(String id, @Nullable String key, @Nullable Order value, boolean succeeded) {
	}

	/**
	 * The value of a record.
	 *
	 * @param id the order id, also in the record's {@code order-id} header
	 * @param key the record key
	 * @param sequence its place among the records of its key
	 * @param item what was ordered
	 */
	record Order(String id, String key, int sequence, String item) {
	}

	@Test
	void everyAttemptOfARetriedJsonRecordGetsItsValueAndItsStageCopyKeepsTheTypeHeader() {
		String topic = SharedBroker.newTopic(3);
		try (ConfigurableApplicationContext context = TestApplication.start(JsonApplication.class, topic,
				"kafka.resilience.retry.delays=200ms,300ms", "kafka.resilience.retry.max-attempts=5",
				"spring.kafka.consumer.value-deserializer=" + ErrorHandlingDeserializer.class.getName(),
				"spring.kafka.consumer.properties[" + ErrorHandlingDeserializer.VALUE_DESERIALIZER_CLASS + "]="
						+ JacksonJsonDeserializer.class.getName(),
				"spring.kafka.consumer.properties[" + JacksonJsonDeserializer.TRUSTED_PACKAGES + "]="
						+ Order.class.getPackageName())) {
			Map<String, Order> sent = new HashMap<>();
			byte[] typeHeader = null;
			try (JacksonJsonSerializer<Order> serializer = new JacksonJsonSerializer<>()) {
				for (int i = 0; i < RECORDS; i++) {
					String key = "key-" + (i % KEYS);
					Order order = new Order("order-" + i, key, i / KEYS, "item " + i);
					Headers headers = new RecordHeaders();
					headers.add("order-id", utf8(order.id()));
					byte[] value = serializer.serialize(topic, headers, order);
					typeHeader = headers.lastHeader("__TypeId__").value();
					SharedBroker.send(new ProducerRecord<>(topic, null, utf8(key), value, headers));
					sent.put(order.id(), order);
				}
			}
			assertThat(new String(typeHeader, StandardCharsets.UTF_8)).isEqualTo(Order.class.getName());

			await().atMost(Duration.ofSeconds(120))
				.untilAsserted(() -> assertThat(attempts.stream().filter(Attempt::succeeded)).hasSize(RECORDS));

			assertThat(attempts).allSatisfy(
					(attempt) -> assertThat(attempt.value()).as(attempt.id()).isEqualTo(sent.get(attempt.id())));
			assertThat(attempts.stream().collect(Collectors.groupingBy(Attempt::id, Collectors.counting())))
				.as("each record fails twice, then succeeds")
				.allSatisfy((id, count) -> assertThat(count).as(id).isEqualTo(3));
			Map<String, List<Integer>> sequencesByKey = attempts.stream()
				.collect(Collectors.groupingBy(Attempt::key,
						Collectors.mapping((attempt) -> attempt.value().sequence(), Collectors.toList())));
			assertThat(sequencesByKey).hasSize(KEYS)
				.allSatisfy((key, sequences) -> assertThat(sequences).as("attempts of %s", key)
					.isSortedAccordingTo(Comparator.naturalOrder())
					.hasSize(3 * RECORDS / KEYS));
			await().atMost(Duration.ofSeconds(30)).until(() -> liveLocks(context, topic) == 0);
			assertThat(SharedBroker.readAll(Names.dlq(topic))).isEmpty();

			List<ConsumerRecord<byte[], byte[]>> retried = SharedBroker.readAll(Names.retry(topic, "200ms"));
			assertThat(retried).hasSizeGreaterThanOrEqualTo(RECORDS);
			byte[] expectedType = typeHeader;
			assertThat(retried).allSatisfy((record) -> {
				Header type = record.headers().lastHeader("__TypeId__");
				assertThat(type).as("the type header of a stage record").isNotNull();
				assertThat(type.value()).isEqualTo(expectedType);
				assertThat(record.headers().lastHeader("order-id")).isNotNull();
			});
		}
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(OrderListener.class)
	static class JsonApplication {

	}

	static class OrderListener {

		private final Map<String, Integer> attempted = new ConcurrentHashMap<>();

		@OrderedRetryListener(id = "json-${test.topic}", topics = "${test.topic}")
		void handle(ConsumerRecord<String, Order> record) {
			String id = new String(record.headers().lastHeader("order-id").value(), StandardCharsets.UTF_8);
			int attempt = this.attempted.merge(id, 1, Integer::sum);
			attempts.add(new Attempt(id, record.key(), record.value(), attempt > 2));
			if (attempt <= 2) {
				throw new IllegalStateException("attempt " + attempt + " of " + id + " fails");
			}
		}

	}

}
