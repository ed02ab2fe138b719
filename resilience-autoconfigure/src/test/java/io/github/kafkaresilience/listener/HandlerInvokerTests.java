package io.github.kafkaresilience.listener;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.github.kafkaresilience.it.StrictStringDeserializer;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

import org.springframework.kafka.support.serializer.DeserializationException;
import org.springframework.kafka.support.serializer.ErrorHandlingDeserializer;
import org.springframework.kafka.support.serializer.JacksonJsonDeserializer;
import org.springframework.kafka.support.serializer.JacksonJsonSerializer;
import org.springframework.kafka.support.serializer.SerializationUtils;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a record is deserialized and handed to the listener method, without a broker.
 */
class HandlerInvokerTests {

	private final Listener listener = new Listener();

	@Test
	void aDeserializerThatRemovesHeadersLeavesTheRecordsOwnHeadersAsTheyArrived() {
		Headers headers = new RecordHeaders();
		headers.add("trace-id", utf8("t-1"));
		JacksonJsonSerializer<Order> serializer = new JacksonJsonSerializer<>();
		byte[] value = serializer.serialize("orders", headers, new Order("o-1", 3));
		Header typeId = headers.lastHeader("__TypeId__");
		assertThat(typeId).as("the serializer adds its type header").isNotNull();
		List<Header> arrived = List.of(headers.toArray());
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
		List<Header> arrived = List.of(delivery.headers().toArray());
		ErrorHandlingDeserializer<String> values = new ErrorHandlingDeserializer<>(new StrictStringDeserializer());
		values.setFailedDeserializationFunction((info) -> "stand-in");

		HandlerResult result = invoker("onValue", new StringDeserializer(), values).handle(delivery);

		assertThat(result.outcome()).isEqualTo(HandlerResult.Outcome.POISON);
		assertThat(result.failure()).isInstanceOfSatisfying(DeserializationException.class, (ex) -> {
			assertThat(ex.isKey()).isFalse();
			assertThat(ex.getData()).isEqualTo(utf8("POISON-1"));
			assertThat(ex.getMessage()).isEqualTo("failed to deserialize the value: " + SerializationException.class.getName()
					+ ": not a valid record: POISON-1");
		});
		assertThat(result.failure()).cause().isInstanceOf(SerializationException.class)
			.hasMessage("not a valid record: POISON-1");
		assertThat(this.listener.values).as("the failure function's value does not reach the method").isEmpty();
		assertThat(delivery.headers().toArray()).as("the exception header is only on the copy")
			.containsExactlyElementsOf(arrived);
	}

	@Test
	void aKeyTheErrorHandlingDeserializerCouldNotReadIsPoisonAndTheMethodDoesNotRun() {
		Delivery delivery = new Delivery("orders", 0, 7, 1L, utf8("POISON-KEY"), utf8("v"), new RecordHeaders());
		ErrorHandlingDeserializer<String> keys = new ErrorHandlingDeserializer<>(new StrictStringDeserializer()).keyDeserializer(true);

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
		assertThat(invoker("onValue", new StringDeserializer(),
				new ErrorHandlingDeserializer<>(new StringDeserializer())).handle(guarded))
			.isEqualTo(HandlerResult.success());
		assertThat(this.listener.values).containsExactly("v1", "v2");
	}

	@Test
	void aThrowingDeserializerMakesThePoisonsFailureItsOwnException() {
		Delivery delivery = new Delivery("orders", 0, 7, 1L, utf8("k"), utf8("POISON-2"), new RecordHeaders());

		HandlerResult result = invoker("onValue", new StringDeserializer(), new StrictStringDeserializer()).handle(delivery);

		assertThat(result.outcome()).isEqualTo(HandlerResult.Outcome.POISON);
		assertThat(result.failure()).isInstanceOf(SerializationException.class).hasMessage("not a valid record: POISON-2");
		assertThat(this.listener.values).isEmpty();
	}

	private HandlerInvoker invoker(String method, Deserializer<?> keyDeserializer, Deserializer<?> valueDeserializer) {
		Method handler = ReflectionUtils.findMethod(Listener.class, method, (Class<?>[]) null);
		return new HandlerInvoker(this.listener, handler, "orders", keyDeserializer, valueDeserializer);
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

	}

}
