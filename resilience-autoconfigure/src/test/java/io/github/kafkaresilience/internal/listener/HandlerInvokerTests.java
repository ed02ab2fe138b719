package io.github.kafkaresilience.internal.listener;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.it.StrictStringDeserializer;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.ladder.HandlerResult;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import jakarta.validation.Valid;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.core.MethodParameter;
import org.springframework.kafka.annotation.KafkaListenerAnnotationBeanPostProcessor;
import org.springframework.kafka.listener.adapter.ConsumerRecordMetadata;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.kafka.support.converter.ConversionException;
import org.springframework.kafka.support.converter.StringJacksonJsonMessageConverter;
import org.springframework.kafka.support.serializer.DeserializationException;
import org.springframework.kafka.support.serializer.ErrorHandlingDeserializer;
import org.springframework.kafka.support.serializer.JacksonJsonDeserializer;
import org.springframework.kafka.support.serializer.JacksonJsonSerializer;
import org.springframework.kafka.support.serializer.SerializationUtils;
import org.springframework.messaging.Message;
import org.springframework.messaging.MessageDeliveryException;
import org.springframework.messaging.converter.MessageConversionException;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Payload;
import org.springframework.messaging.handler.annotation.support.MethodArgumentNotValidException;
import org.springframework.messaging.handler.invocation.HandlerMethodArgumentResolver;
import org.springframework.util.ReflectionUtils;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a record is deserialized and handed to the listener method through spring-kafka's
 * messaging infrastructure, and how a failure is told, without a broker.
 */
class HandlerInvokerTests {

	private final Listener listener = new Listener();

	@Test
	void aDeserializerThatRemovesHeadersLeavesTheRecordsOwnHeadersAsTheyArrived() {
		Headers headers = new RecordHeaders();
		headers.add("trace-id", utf8("t-1"));
		JacksonJsonSerializer<Order> serializer = new JacksonJsonSerializer<>();
		byte[] value = serializer.serialize("orders", headers, new Order("o-1", 3));
		org.apache.kafka.common.header.Header typeId = headers.lastHeader("__TypeId__");
		assertThat(typeId).as("the serializer adds its type header").isNotNull();
		List<org.apache.kafka.common.header.Header> arrived = List.of(headers.toArray());
		Delivery delivery = new Delivery("orders", 0, 7, 1L, utf8("k"), value, headers);
		HandlerInvoker invoker = invoker("onRecord", new StringDeserializer(),
				new JacksonJsonDeserializer<>().trustedPackages("*"));

		assertThat(invoker.handle(delivery)).isEqualTo(HandlerResult.success());
		assertThat(invoker.handle(delivery)).as("the next attempt finds the type header again")
			.isEqualTo(HandlerResult.success());

		assertThat(this.listener.values).containsExactly(new Order("o-1", 3), new Order("o-1", 3));
		assertThat(delivery.headers().toArray()).containsExactlyElementsOf(arrived);
		assertThat(delivery.headers().lastHeader("__TypeId__").value()).isEqualTo(typeId.value());
		assertThat(this.listener.records).allSatisfy((record) -> {
			assertThat(record.headers()).as("the method sees the headers as the deserializer left them")
				.isNotSameAs(delivery.headers());
			assertThat(record.headers().lastHeader("__TypeId__")).isNull();
			assertThat(record.headers().lastHeader("trace-id").value()).isEqualTo(utf8("t-1"));
		});
	}

	@Test
	void aValueTheErrorHandlingDeserializerCouldNotReadIsPoisonWithItsCauseAndNeverReachesTheMethod() {
		Delivery delivery = new Delivery("orders", 0, 7, 1L, utf8("k"), utf8("POISON-1"), headers("trace-id", "t-1"));
		List<org.apache.kafka.common.header.Header> arrived = List.of(delivery.headers().toArray());
		ErrorHandlingDeserializer<String> values = new ErrorHandlingDeserializer<>(new StrictStringDeserializer());
		values.setFailedDeserializationFunction((info) -> "stand-in");

		HandlerResult result = invoker("onValue", new StringDeserializer(), values).handle(delivery);

		assertThat(result.outcome()).isEqualTo(HandlerResult.Outcome.POISON);
		assertThat(result.failure()).isInstanceOfSatisfying(DeserializationException.class, (ex) -> {
			assertThat(ex.isKey()).isFalse();
			assertThat(ex.getData()).isEqualTo(utf8("POISON-1"));
			assertThat(ex.getMessage()).isEqualTo("failed to deserialize the value: "
					+ SerializationException.class.getName() + ": not a valid record: POISON-1");
		});
		assertThat(result.failure()).cause()
			.isInstanceOf(SerializationException.class)
			.hasMessage("not a valid record: POISON-1");
		assertThat(this.listener.values).as("the failure function's value does not reach the method").isEmpty();
		assertThat(delivery.headers().toArray()).as("the exception header is only on the copy")
			.containsExactlyElementsOf(arrived);
	}

	@Test
	void aKeyTheErrorHandlingDeserializerCouldNotReadIsPoisonAndTheMethodDoesNotRun() {
		Delivery delivery = new Delivery("orders", 0, 7, 1L, utf8("POISON-KEY"), utf8("v"), new RecordHeaders());
		ErrorHandlingDeserializer<String> keys = new ErrorHandlingDeserializer<>(new StrictStringDeserializer())
			.keyDeserializer(true);

		HandlerResult result = invoker("onRecord", keys, new StringDeserializer()).handle(delivery);

		assertThat(result.outcome()).isEqualTo(HandlerResult.Outcome.POISON);
		assertThat(result.failure()).isInstanceOfSatisfying(DeserializationException.class,
				(ex) -> assertThat(ex.isKey()).isTrue());
		assertThat(result.failure()).cause().hasMessage("not a valid record: POISON-KEY");
		assertThat(this.listener.records).isEmpty();
		assertThat(delivery.headers().toArray()).isEmpty();
	}

	@Test
	void anExceptionHeaderThatCannotBeReadIsStillPoisonAndNamesTheHeader() {
		Delivery delivery = new Delivery("orders", 0, 7, 1L, utf8("k"), utf8("v"), new RecordHeaders());
		Deserializer<String> forging = new Deserializer<>() {

			@Override
			public String deserialize(String topic, byte[] data) {
				throw new UnsupportedOperationException();
			}

			@Override
			public String deserialize(String topic, Headers headers, byte[] data) {
				headers.add(SerializationUtils.VALUE_DESERIALIZER_EXCEPTION_HEADER, utf8("not a serialized exception"));
				return null;
			}

		};

		HandlerResult result = invoker("onValue", new StringDeserializer(), forging).handle(delivery);

		assertThat(result.outcome()).isEqualTo(HandlerResult.Outcome.POISON);
		assertThat(result.failure()).isInstanceOf(DeserializationException.class)
			.hasMessageContaining("header '" + SerializationUtils.VALUE_DESERIALIZER_EXCEPTION_HEADER + "'")
			.hasMessageContaining("cannot be read");
		assertThat(this.listener.values).isEmpty();
	}

	@Test
	void anExceptionHeaderTheRecordArrivedWithIsNotTakenForAFailureOfItsDeserializers() {
		Headers forged = headers(SerializationUtils.VALUE_DESERIALIZER_EXCEPTION_HEADER, "written by a producer");
		Delivery plain = new Delivery("orders", 0, 7, 1L, utf8("k"), utf8("v1"), forged);
		Delivery guarded = new Delivery("orders", 0, 8, 1L, utf8("k"), utf8("v2"),
				headers(SerializationUtils.VALUE_DESERIALIZER_EXCEPTION_HEADER, "written by a producer"));

		assertThat(invoker("onValue", new StringDeserializer(), new StringDeserializer()).handle(plain))
			.isEqualTo(HandlerResult.success());
		assertThat(
				invoker("onValue", new StringDeserializer(), new ErrorHandlingDeserializer<>(new StringDeserializer()))
					.handle(guarded))
			.isEqualTo(HandlerResult.success());
		assertThat(this.listener.values).containsExactly("v1", "v2");
	}

	@Test
	void aThrowingDeserializerMakesThePoisonsFailureItsOwnException() {
		Delivery delivery = new Delivery("orders", 0, 7, 1L, utf8("k"), utf8("POISON-2"), new RecordHeaders());

		HandlerResult result = invoker("onValue", new StringDeserializer(), new StrictStringDeserializer())
			.handle(delivery);

		assertThat(result.outcome()).isEqualTo(HandlerResult.Outcome.POISON);
		assertThat(result.failure()).isInstanceOf(SerializationException.class)
			.hasMessage("not a valid record: POISON-2");
		assertThat(this.listener.values).isEmpty();
	}

	@Test
	void theMethodTakesThePayloadHeadersAndMetadataAsAKafkaListenerMethodDoes() {
		Delivery delivery = new Delivery("orders", 2, 7, 1234L, utf8("k"), utf8("v"), headers("trace-id", "t-1"));

		assertThat(invoker("onArguments", new StringDeserializer(), new StringDeserializer()).handle(delivery))
			.isEqualTo(HandlerResult.success());

		assertThat(this.listener.values).containsExactly("v", "k", "orders", 2, 7L, 1234L, "orders-group", "t-1",
				"orders-2@7");
	}

	@Test
	void aValueThatCannotBeConvertedToThePayloadTypeIsAPermanentFailureAndTheMethodDoesNotRun() {
		Delivery delivery = new Delivery("orders", 0, 7, 1L, utf8("k"), utf8("o-1"), new RecordHeaders());

		HandlerResult result = invoker("onOrder", new StringDeserializer(), new StringDeserializer()).handle(delivery);

		assertThat(result.outcome()).isEqualTo(HandlerResult.Outcome.FAILURE);
		assertThat(result.failure()).isInstanceOf(PermanentFailureException.class)
			.hasMessageContaining(Listener.class.getName() + ".onOrder cannot take the record")
			.hasCauseInstanceOf(MessageConversionException.class);
		assertThat(new FailureClassifier(List.of()).isPermanent(result.failure())).isTrue();
		assertThat(this.listener.values).isEmpty();
	}

	@Test
	void theMethodsOwnExceptionIsTheFailureAlsoWhenItIsAMessagingException() {
		Delivery delivery = new Delivery("orders", 0, 7, 1L, utf8("k"), utf8("v"), new RecordHeaders());

		HandlerResult result = invoker("onValueFailing", new StringDeserializer(), new StringDeserializer())
			.handle(delivery);

		assertThat(result.outcome()).isEqualTo(HandlerResult.Outcome.FAILURE);
		assertThat(result.failure()).isInstanceOf(MessageDeliveryException.class).hasMessage("downstream unavailable");
		assertThat(new FailureClassifier(List.of()).isPermanent(result.failure())).isFalse();
	}

	@Test
	void anErrorTheMethodThrowsFailsTheAttempt() {
		Delivery delivery = new Delivery("orders", 0, 7, 1L, utf8("k"), utf8("v"), new RecordHeaders());

		HandlerResult result = invoker("onValueErring", new StringDeserializer(), new StringDeserializer())
			.handle(delivery);

		assertThat(result.outcome()).isEqualTo(HandlerResult.Outcome.FAILURE);
		assertThat(result.failure()).isInstanceOf(AssertionError.class).hasMessage("not as expected");
	}

	@Test
	void aPayloadTheRegistrarsValidatorRejectsIsAPermanentFailureAndTheMethodDoesNotRun() {
		KafkaListenerAnnotationBeanPostProcessor<?, ?> processor = new KafkaListenerAnnotationBeanPostProcessor<>();
		processor.getEndpointRegistrar().setValidator(new PositiveQuantity());
		ListenerMessaging messaging = ListenerMessaging.asForKafkaListeners(processor, null);
		HandlerInvoker invoker = invoker("onValidOrder", new StringDeserializer(),
				new JacksonJsonDeserializer<>(Order.class), messaging);

		HandlerResult invalid = invoker.handle(json(new Order("o-1", 0)));
		HandlerResult valid = invoker.handle(json(new Order("o-2", 2)));

		assertThat(invalid.outcome()).isEqualTo(HandlerResult.Outcome.FAILURE);
		assertThat(invalid.failure()).isInstanceOf(PermanentFailureException.class)
			.hasMessageContaining("quantity must be positive")
			.hasCauseInstanceOf(MethodArgumentNotValidException.class);
		assertThat(valid).isEqualTo(HandlerResult.success());
		assertThat(this.listener.values).containsExactly(new Order("o-2", 2));
	}

	@Test
	void aTombstoneIsNullOrEmptyForAPayloadThatMayBeMissingAndAPermanentFailureForARequiredOne() {
		Delivery tombstone = new Delivery("orders", 0, 7, 1L, utf8("k"), null, new RecordHeaders());

		assertThat(invoker("onNullable", new StringDeserializer(), new StringDeserializer()).handle(tombstone))
			.isEqualTo(HandlerResult.success());
		assertThat(invoker("onOptional", new StringDeserializer(), new StringDeserializer()).handle(tombstone))
			.isEqualTo(HandlerResult.success());
		HandlerResult required = invoker("onValue", new StringDeserializer(), new StringDeserializer())
			.handle(tombstone);

		assertThat(this.listener.values).containsExactly("nullable: null", Optional.empty());
		assertThat(required.failure()).isInstanceOf(PermanentFailureException.class)
			.hasCauseInstanceOf(MethodArgumentNotValidException.class)
			.hasMessageContaining("Payload value must not be empty");
	}

	@Test
	void aValueTheRecordMessageConverterCannotReadIsPoisonAndTheMethodDoesNotRun() {
		ListenerMessaging messaging = ListenerMessaging.asForKafkaListeners(null,
				new StringJacksonJsonMessageConverter());
		HandlerInvoker invoker = invoker("onOrder", new StringDeserializer(), new StringDeserializer(), messaging);

		HandlerResult unreadable = invoker
			.handle(new Delivery("orders", 0, 7, 1L, utf8("k"), utf8("{not json"), new RecordHeaders()));
		HandlerResult readable = invoker.handle(new Delivery("orders", 0, 8, 1L, utf8("k"),
				utf8("{\"id\":\"o-1\",\"quantity\":3}"), new RecordHeaders()));

		assertThat(unreadable.outcome()).isEqualTo(HandlerResult.Outcome.POISON);
		assertThat(unreadable.failure()).isInstanceOf(ConversionException.class);
		assertThat(readable).isEqualTo(HandlerResult.success());
		assertThat(this.listener.values).containsExactly(new Order("o-1", 3));
	}

	@Test
	void anArgumentResolverSetOnTheRegistrarResolvesItsParameter() {
		KafkaListenerAnnotationBeanPostProcessor<?, ?> processor = new KafkaListenerAnnotationBeanPostProcessor<>();
		processor.getEndpointRegistrar().setCustomMethodArgumentResolvers(new TenantResolver());
		HandlerInvoker invoker = invoker("onTenant", new StringDeserializer(), new StringDeserializer(),
				ListenerMessaging.asForKafkaListeners(processor, null));

		assertThat(invoker.handle(new Delivery("orders", 0, 7, 1L, utf8("k"), utf8("v"), headers("tenant", "acme"))))
			.isEqualTo(HandlerResult.success());

		assertThat(this.listener.values).containsExactly(new Tenant("acme"), "v");
	}

	private HandlerInvoker invoker(String method, Deserializer<?> keyDeserializer, Deserializer<?> valueDeserializer) {
		return invoker(method, keyDeserializer, valueDeserializer, ListenerMessaging.defaults());
	}

	private HandlerInvoker invoker(String method, Deserializer<?> keyDeserializer, Deserializer<?> valueDeserializer,
			ListenerMessaging messaging) {
		Method handler = ReflectionUtils.findMethod(Listener.class, method, (Class<?>[]) null);
		ListenerEndpoint endpoint = new ListenerEndpoint("orders-listener", "orders-group", List.of("orders"), null,
				null, null, null, null, this.listener, handler);
		return new HandlerInvoker(endpoint, "orders", messaging, keyDeserializer, valueDeserializer, null,
				Duration.ofSeconds(30));
	}

	private static Delivery json(Order order) {
		try (JacksonJsonSerializer<Order> serializer = new JacksonJsonSerializer<>()) {
			return new Delivery("orders", 0, 7, 1L, utf8("k"), serializer.serialize("orders", order),
					new RecordHeaders());
		}
	}

	private static Headers headers(String name, String value) {
		Headers headers = new RecordHeaders();
		headers.add(name, utf8(value));
		return headers;
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	record Order(String id, int quantity) {
	}

	record Tenant(String name) {
	}

	/**
	 * What a validator set on the registrar through a {@code KafkaListenerConfigurer}
	 * does.
	 */
	static class PositiveQuantity implements Validator {

		@Override
		public boolean supports(Class<?> type) {
			return Order.class.isAssignableFrom(type);
		}

		@Override
		public void validate(Object target, Errors errors) {
			if (((Order) target).quantity() < 1) {
				errors.reject("quantity.positive", "quantity must be positive");
			}
		}

	}

	/** An argument resolver of the application's, set on the registrar. */
	static class TenantResolver implements HandlerMethodArgumentResolver {

		@Override
		public boolean supportsParameter(MethodParameter parameter) {
			return parameter.getParameterType() == Tenant.class;
		}

		@Override
		public Object resolveArgument(MethodParameter parameter, Message<?> message) {
			return new Tenant(new String(message.getHeaders().get("tenant", byte[].class), StandardCharsets.UTF_8));
		}

	}

	static class Listener {

		final List<ConsumerRecord<?, ?>> records = new ArrayList<>();

		final List<Object> values = new ArrayList<>();

		void onRecord(ConsumerRecord<String, Order> record) {
			this.records.add(record);
			this.values.add(record.value());
		}

		void onValue(String value) {
			this.values.add(value);
		}

		void onArguments(@Payload String value, @Header(KafkaHeaders.RECEIVED_KEY) String key,
				@Header(KafkaHeaders.RECEIVED_TOPIC) String topic,
				@Header(KafkaHeaders.RECEIVED_PARTITION) int partition, @Header(KafkaHeaders.OFFSET) long offset,
				@Header(KafkaHeaders.RECEIVED_TIMESTAMP) long timestamp, @Header(KafkaHeaders.GROUP_ID) String group,
				@Header("trace-id") String traceId, ConsumerRecordMetadata metadata) {
			this.values.addAll(List.of(value, key, topic, partition, offset, timestamp, group, traceId,
					metadata.topic() + "-" + metadata.partition() + "@" + metadata.offset()));
		}

		void onOrder(Order order) {
			this.values.add(order);
		}

		void onValidOrder(@Valid Order order) {
			this.values.add(order);
		}

		void onNullable(@Payload(required = false) @Nullable String value) {
			this.values.add("nullable: " + value);
		}

		void onOptional(Optional<String> value) {
			this.values.add(value);
		}

		void onTenant(Tenant tenant, String value) {
			this.values.add(tenant);
			this.values.add(value);
		}

		void onValueFailing(String value) {
			throw new MessageDeliveryException("downstream unavailable");
		}

		void onValueErring(String value) {
			throw new AssertionError("not as expected");
		}

	}

}
