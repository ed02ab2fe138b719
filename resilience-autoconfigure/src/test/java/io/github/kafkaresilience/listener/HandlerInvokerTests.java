package io.github.kafkaresilience.listener;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

import org.springframework.kafka.support.serializer.JacksonJsonDeserializer;
import org.springframework.kafka.support.serializer.JacksonJsonSerializer;
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

	private HandlerInvoker invoker(String method, Deserializer<?> keyDeserializer, Deserializer<?> valueDeserializer) {
		Method handler = ReflectionUtils.findMethod(Listener.class, method, (Class<?>[]) null);
		return new HandlerInvoker(this.listener, handler, "orders", keyDeserializer, valueDeserializer);
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

	}

}
