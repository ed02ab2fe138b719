package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.lock.Ownership;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.MethodParameter;
import org.springframework.kafka.annotation.KafkaListenerConfigurer;
import org.springframework.kafka.listener.adapter.ConsumerRecordMetadata;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.kafka.support.converter.ConversionException;
import org.springframework.kafka.support.converter.RecordMessageConverter;
import org.springframework.kafka.support.converter.StringJacksonJsonMessageConverter;
import org.springframework.kafka.support.serializer.ErrorHandlingDeserializer;
import org.springframework.kafka.support.serializer.JacksonJsonDeserializer;
import org.springframework.kafka.support.serializer.JacksonJsonSerializer;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Headers;
import org.springframework.messaging.handler.annotation.Payload;
import org.springframework.messaging.handler.invocation.HandlerMethodArgumentResolver;
import org.springframework.validation.beanvalidation.LocalValidatorFactoryBean;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static io.github.kafkaresilience.it.OrderedRetryLadderTests.headers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Listener methods of many signatures, invoked through spring-kafka's messaging
 * infrastructure as {@code @KafkaListener} methods are: each fails its first attempt and
 * succeeds in stage 1, and gets equal arguments on both attempts. What differs on the
 * retry is where the record was read: {@code KafkaHeaders.RECEIVED_TOPIC} and
 * {@code OFFSET} name the retry topic and the offset there, and the library's headers
 * ({@code retry.count}, {@code original.*}, ...) are added.
 */
@UsesSharedBroker
class ListenerMethodArgumentsTests {

	private static final Duration WAIT = Duration.ofSeconds(90);

	private static final Order ORDER = new Order("o-1", 3);

	/**
	 * Written before the record that is retried, so that its offset in the main topic is
	 * not 0; not recorded.
	 */
	private static final Order FILLER = new Order("filler", 1);

	/** The listeners whose methods can tell where the record was read. */
	private static final List<String> WHERE_TELLING = List.of("headers", "message", "record", "metadata",
			"received-headers");

	/** The headers a hop to a retry topic adds to the record. */
	private static final Set<String> RETRY_HEADERS = Set.of("retry.count", "previous.topic", "original.topic",
			"original.partition", "original.offset", "lock.id", "error.class", "error.message", "error.exception",
			"error.timestamp", Ownership.HEADER);

	/** The calls of each listener method, by listener. */
	static final Map<String, List<Call>> calls = new ConcurrentHashMap<>();

	/**
	 * One call of a listener method.
	 *
	 * @param arguments what the method's business logic reads: equal on every attempt
	 * @param where where the record was read, as far as the method can tell: differs on a
	 * retry
	 */
	record Call(List<@Nullable Object> arguments, Map<String, @Nullable Object> where) {
	}

	/**
	 * The value of most records.
	 *
	 * @param id the order id
	 * @param quantity how many, at least one for a valid order
	 */
	record Order(String id, @Min(1) int quantity) {
	}

	/**
	 * Resolved from the {@code tenant} header by the application's own argument resolver.
	 *
	 * @param name the tenant
	 */
	record Tenant(String name) {
	}

	@Test
	void everySupportedSignatureGetsEqualArgumentsOnItsFirstAttemptAndItsRetryInStageOne() {
		String base = SharedBroker.newTopic(1);
		List<String> listeners = List.of("value", "payload-key", "headers", "message", "record", "metadata",
				"tombstone", "optional", "received-headers", "valid");
		listeners.forEach((listener) -> SharedBroker.createTopic(topic(base, listener), 2, Map.of()));
		try (ConfigurableApplicationContext context = TestApplication.start(ArgumentsApplication.class, base,
				"kafka.resilience.retry.delays=1s",
				"spring.kafka.consumer.value-deserializer=" + ErrorHandlingDeserializer.class.getName(),
				"spring.kafka.consumer.properties[" + ErrorHandlingDeserializer.VALUE_DESERIALIZER_CLASS + "]="
						+ JacksonJsonDeserializer.class.getName(),
				"spring.kafka.consumer.properties[" + JacksonJsonDeserializer.TRUSTED_PACKAGES + "]="
						+ Order.class.getPackageName())) {
			send(base, "valid", "k-invalid", new Order("o-invalid", 0));
			send(base, "value", "some text");
			for (String listener : WHERE_TELLING) {
				send(base, listener, FILLER);
				send(base, listener, FILLER);
			}
			for (String listener : List.of("payload-key", "headers", "message", "record", "metadata",
					"received-headers", "valid")) {
				send(base, listener, ORDER);
			}
			send(base, "tombstone", null);
			send(base, "optional", null);

			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(listeners)
					.allSatisfy((listener) -> assertThat(calls(listener)).as(listener).hasSize(2)));

			assertThat(arguments("value")).containsExactly("some text");
			assertThat(arguments("payload-key")).containsExactly(ORDER, key("payload-key"));
			assertThat(arguments("headers")).containsExactly(ORDER, key("headers"), "trace-headers");
			assertThat(arguments("message")).containsExactly(ORDER, key("message"), "trace-message");
			assertThat(arguments("record")).containsExactly(key("record"), ORDER, "trace-record");
			assertThat(arguments("metadata")).containsExactly(ORDER);
			assertThat(arguments("tombstone")).containsExactly(null, key("tombstone"));
			assertThat(arguments("optional")).containsExactly(Optional.empty(), key("optional"));
			assertThat(arguments("received-headers")).containsExactly(ORDER, "g-" + base);
			assertThat(arguments("valid")).as("the invalid order never reaches the method")
				.containsExactly(ORDER, new Tenant("tenant-valid"));
			assertThat(listeners).allSatisfy((listener) -> assertThat(calls(listener).get(1).arguments()).as(listener)
				.isEqualTo(calls(listener).get(0).arguments()));

			for (String listener : WHERE_TELLING) {
				Map<String, @Nullable Object> first = calls(listener).get(0).where();
				Map<String, @Nullable Object> retry = calls(listener).get(1).where();
				assertThat(first).as(listener)
					.containsEntry("topic", topic(base, listener))
					.containsEntry("offset", 2L);
				assertThat(retry).as(listener)
					.containsEntry("topic", Names.retry("g-" + base, topic(base, listener), "1s"))
					.containsEntry("partition", first.get("partition"))
					.containsEntry("offset", 0L);
				if (first.containsKey("original.offset")) {
					assertThat(first).as(listener)
						.containsEntry("original.offset", null)
						.containsEntry("retry.count", null);
					assertThat(retry).as(listener)
						.containsEntry("original.offset", "2")
						.containsEntry("retry.count", "1");
				}
			}
			@SuppressWarnings("unchecked")
			Set<String> retryHeaderNames = new HashSet<>((Set<String>) calls("headers").get(1).where().get("names"));
			@SuppressWarnings("unchecked")
			Set<String> firstHeaderNames = (Set<String>) calls("headers").get(0).where().get("names");
			assertThat(firstHeaderNames).contains("trace-id", KafkaHeaders.RECEIVED_TOPIC, KafkaHeaders.OFFSET)
				.doesNotContainAnyElementsOf(RETRY_HEADERS);
			retryHeaderNames.removeAll(firstHeaderNames);
			assertThat(retryHeaderNames).as("the headers a retry adds")
				.isSubsetOf(RETRY_HEADERS)
				.contains("retry.count");

			List<ConsumerRecord<byte[], byte[]>> dead = await().atMost(WAIT)
				.until(() -> SharedBroker.readAll(Names.dlq("g-" + base, topic(base, "valid"))),
						(letters) -> !letters.isEmpty());
			assertThat(dead).singleElement()
				.satisfies((letter) -> assertThat(headers(letter)).containsEntry("dlq.reason", "permanent")
					.containsEntry("error.class", "permanent")
					.containsEntry("error.exception", PermanentFailureException.class.getName())
					.hasEntrySatisfying("error.message", (message) -> assertThat(message).contains("quantity")));
			listeners
				.forEach((listener) -> assertThat(SharedBroker.readAll(Names.dlq("g-" + base, topic(base, listener))))
					.as(listener)
					.hasSize(listener.equals("valid") ? 1 : 0));
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(listeners).allSatisfy(
						(listener) -> assertThat(liveLocks(context, topic(base, listener))).as(listener).isZero()));
			assertThat(listeners).allSatisfy((listener) -> assertThat(calls(listener)).as(listener).hasSize(2));
		}
	}

	@Test
	void aRecordMessageConverterBeanConvertsThePayloadAndAValueItCannotReadIsPoison() {
		String topic = SharedBroker.newTopic(2);
		try (ConfigurableApplicationContext context = TestApplication.start(ConverterApplication.class, topic,
				"kafka.resilience.retry.delays=1s")) {
			SharedBroker.send(topic, "k-poison", "{not json");
			SharedBroker.send(topic, key("converted"), "{\"id\":\"o-1\",\"quantity\":3}");

			await().atMost(WAIT).untilAsserted(() -> assertThat(calls("converted")).hasSize(2));
			assertThat(arguments("converted")).containsExactly(ORDER);
			assertThat(calls("converted").get(1).arguments()).isEqualTo(calls("converted").get(0).arguments());

			List<ConsumerRecord<byte[], byte[]>> dead = await().atMost(WAIT)
				.until(() -> SharedBroker.readAll(Names.dlq(topic)), (letters) -> !letters.isEmpty());
			assertThat(dead).singleElement()
				.satisfies((letter) -> assertThat(headers(letter)).containsEntry("dlq.reason", "poison")
					.containsEntry("error.exception", ConversionException.class.getName()));
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
			assertThat(calls("converted")).hasSize(2);
		}
	}

	private static String topic(String base, String listener) {
		return base + "." + listener;
	}

	private static String key(String listener) {
		return "k-" + listener;
	}

	private static List<Call> calls(String listener) {
		return calls.getOrDefault(listener, List.of());
	}

	private static List<@Nullable Object> arguments(String listener) {
		return calls(listener).get(0).arguments();
	}

	private static void send(String base, String listener, @Nullable Object value) {
		send(base, listener, key(listener), value);
	}

	/**
	 * Sends a record to a listener's topic, written by spring-kafka's JSON serializer.
	 */
	private static void send(String base, String listener, String key, @Nullable Object value) {
		String topic = topic(base, listener);
		RecordHeaders headers = new RecordHeaders();
		headers.add("trace-id", utf8("trace-" + listener));
		headers.add("tenant", utf8("tenant-" + listener));
		byte[] bytes = null;
		if (value != null) {
			try (JacksonJsonSerializer<Object> serializer = new JacksonJsonSerializer<>()) {
				bytes = serializer.serialize(topic, headers, value);
			}
		}
		SharedBroker.send(new ProducerRecord<>(topic, null, utf8(key), bytes, headers));
	}

	/**
	 * Records a call, unless it is one of a filler record; the first recorded call of
	 * each listener fails.
	 * @param listener the listener
	 * @param arguments what its business logic reads
	 * @param where where the record was read, as the listener sees it: pairs of names and
	 * values
	 */
	static void called(String listener, List<@Nullable Object> arguments, @Nullable Object... where) {
		if (arguments.contains(FILLER)) {
			return;
		}
		Map<String, @Nullable Object> seen = new LinkedHashMap<>();
		for (int i = 0; i < where.length; i += 2) {
			seen.put((String) where[i], where[i + 1]);
		}
		List<Call> mine = calls.computeIfAbsent(listener, (name) -> new CopyOnWriteArrayList<>());
		mine.add(new Call(arguments, seen));
		if (mine.size() == 1) {
			throw new IllegalStateException("the first attempt of " + listener + " fails");
		}
	}

	static @Nullable String text(byte @Nullable [] bytes) {
		return (bytes != null) ? new String(bytes, StandardCharsets.UTF_8) : null;
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ ValueListener.class, PayloadAndKeyListener.class, HeadersListener.class, MessageListener.class,
			RecordListener.class, MetadataListener.class, TombstoneListener.class, OptionalListener.class,
			ReceivedHeadersListener.class, ValidListener.class })
	static class ArgumentsApplication {

		/**
		 * What a {@code @KafkaListener} application sets to validate payloads and resolve
		 * its own parameters.
		 */
		@Bean
		KafkaListenerConfigurer validatingKafkaListeners(LocalValidatorFactoryBean validator) {
			return (registrar) -> {
				registrar.setValidator(validator);
				registrar.setCustomMethodArgumentResolvers(new TenantResolver());
			};
		}

	}

	static class TenantResolver implements HandlerMethodArgumentResolver {

		@Override
		public boolean supportsParameter(MethodParameter parameter) {
			return parameter.getParameterType() == Tenant.class;
		}

		@Override
		public Object resolveArgument(MethodParameter parameter, Message<?> message) {
			return new Tenant(text(message.getHeaders().get("tenant", byte[].class)));
		}

	}

	static class ValueListener {

		@OrderedRetryListener(id = "value-${test.topic}", topics = "${test.topic}.value")
		void handle(String value) {
			called("value", Arrays.asList(value));
		}

	}

	static class PayloadAndKeyListener {

		@OrderedRetryListener(id = "payload-key-${test.topic}", topics = "${test.topic}.payload-key")
		void handle(@Payload Order order, @Header(KafkaHeaders.RECEIVED_KEY) String key) {
			called("payload-key", Arrays.asList(order, key));
		}

	}

	static class HeadersListener {

		@OrderedRetryListener(id = "headers-${test.topic}", topics = "${test.topic}.headers")
		void handle(@Payload Order order, @Headers Map<String, Object> headers) {
			called("headers",
					Arrays.asList(order, headers.get(KafkaHeaders.RECEIVED_KEY),
							text((byte[]) headers.get("trace-id"))),
					"topic", headers.get(KafkaHeaders.RECEIVED_TOPIC), "partition",
					headers.get(KafkaHeaders.RECEIVED_PARTITION), "offset", headers.get(KafkaHeaders.OFFSET),
					"original.offset", text((byte[]) headers.get(ProtocolHeaders.ORIGINAL_OFFSET)), "retry.count",
					text((byte[]) headers.get(ProtocolHeaders.RETRY_COUNT)), "names", Set.copyOf(headers.keySet()));
		}

	}

	static class MessageListener {

		@OrderedRetryListener(id = "message-${test.topic}", topics = "${test.topic}.message")
		void handle(Message<?> message) {
			Map<String, Object> headers = message.getHeaders();
			called("message",
					Arrays.asList(message.getPayload(), headers.get(KafkaHeaders.RECEIVED_KEY),
							text((byte[]) headers.get("trace-id"))),
					"topic", headers.get(KafkaHeaders.RECEIVED_TOPIC), "partition",
					headers.get(KafkaHeaders.RECEIVED_PARTITION), "offset", headers.get(KafkaHeaders.OFFSET),
					"original.offset", text((byte[]) headers.get(ProtocolHeaders.ORIGINAL_OFFSET)), "retry.count",
					text((byte[]) headers.get(ProtocolHeaders.RETRY_COUNT)));
		}

	}

	static class RecordListener {

		@OrderedRetryListener(id = "record-${test.topic}", topics = "${test.topic}.record")
		void handle(ConsumerRecord<String, Order> record) {
			called("record",
					Arrays.asList(record.key(), record.value(), ProtocolHeaders.text(record.headers(), "trace-id")),
					"topic", record.topic(), "partition", record.partition(), "offset", record.offset(),
					"original.offset", ProtocolHeaders.text(record.headers(), ProtocolHeaders.ORIGINAL_OFFSET),
					"retry.count", ProtocolHeaders.text(record.headers(), ProtocolHeaders.RETRY_COUNT));
		}

	}

	static class MetadataListener {

		@OrderedRetryListener(id = "metadata-${test.topic}", topics = "${test.topic}.metadata")
		void handle(Order order, ConsumerRecordMetadata metadata) {
			called("metadata", Arrays.asList(order), "topic", metadata.topic(), "partition", metadata.partition(),
					"offset", metadata.offset());
		}

	}

	static class TombstoneListener {

		@OrderedRetryListener(id = "tombstone-${test.topic}", topics = "${test.topic}.tombstone")
		void handle(@Payload(required = false) @Nullable Order order, @Header(KafkaHeaders.RECEIVED_KEY) String key) {
			called("tombstone", Arrays.asList(order, key));
		}

	}

	static class OptionalListener {

		@OrderedRetryListener(id = "optional-${test.topic}", topics = "${test.topic}.optional")
		void handle(Optional<Order> order, @Header(KafkaHeaders.RECEIVED_KEY) String key) {
			called("optional", Arrays.asList(order, key));
		}

	}

	static class ReceivedHeadersListener {

		@OrderedRetryListener(id = "received-headers-${test.topic}", topics = "${test.topic}.received-headers")
		void handle(@Payload Order order, @Header(KafkaHeaders.RECEIVED_TOPIC) String topic,
				@Header(KafkaHeaders.RECEIVED_PARTITION) int partition, @Header(KafkaHeaders.OFFSET) long offset,
				@Header(KafkaHeaders.GROUP_ID) String group,
				@Header(name = ProtocolHeaders.ORIGINAL_OFFSET, required = false) @Nullable String originalOffset,
				@Header(name = ProtocolHeaders.RETRY_COUNT, required = false) @Nullable String retryCount) {
			called("received-headers", Arrays.asList(order, group), "topic", topic, "partition", partition, "offset",
					offset, "original.offset", originalOffset, "retry.count", retryCount);
		}

	}

	static class ValidListener {

		@OrderedRetryListener(id = "valid-${test.topic}", topics = "${test.topic}.valid")
		void handle(@Valid @Payload Order order, Tenant tenant) {
			called("valid", Arrays.asList(order, tenant));
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(ConvertedListener.class)
	static class ConverterApplication {

		/**
		 * The converter Boot gives {@code @KafkaListener} containers: JSON to the
		 * method's payload type.
		 */
		@Bean
		RecordMessageConverter recordMessageConverter() {
			return new StringJacksonJsonMessageConverter();
		}

	}

	static class ConvertedListener {

		@OrderedRetryListener(id = "converted-${test.topic}", topics = "${test.topic}")
		void handle(Order order) {
			called("converted", Arrays.asList(order));
		}

	}

}
