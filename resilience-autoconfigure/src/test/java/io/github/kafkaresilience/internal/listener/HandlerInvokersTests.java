package io.github.kafkaresilience.internal.listener;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.IntegerDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

import org.springframework.kafka.core.DefaultKafkaConsumerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which deserializers a listener's records are read with: the application's, as its
 * consumer factory holds or configures them.
 */
class HandlerInvokersTests {

	@Test
	void theInstancesGivenToTheConsumerFactoryAreUsed() {
		IntegerDeserializer keys = new IntegerDeserializer();
		StringDeserializer values = new StringDeserializer();
		DefaultKafkaConsumerFactory<Integer, String> factory = new DefaultKafkaConsumerFactory<>(Map.of(), keys,
				values);

		assertThat(HandlerInvokers.deserializer(factory, true)).isSameAs(keys);
		assertThat(HandlerInvokers.deserializer(factory, false)).isSameAs(values);
	}

	@Test
	void aConfiguredClassIsInstantiatedAndConfiguredWithTheFactorysPropertiesForKeyOrValue() {
		Map<String, Object> config = new HashMap<>();
		config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, IntegerDeserializer.class);
		config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, " " + StringDeserializer.class.getName() + " ");
		config.put("value.deserializer.encoding", "UTF-16");
		DefaultKafkaConsumerFactory<Object, Object> factory = new DefaultKafkaConsumerFactory<>(config);

		assertThat(HandlerInvokers.deserializer(factory, true)).isInstanceOf(IntegerDeserializer.class);
		Deserializer<?> values = HandlerInvokers.deserializer(factory, false);
		assertThat(values.deserialize("orders", "é".getBytes(StandardCharsets.UTF_16))).isEqualTo("é");
	}

	@Test
	void withoutAConfiguredDeserializerRecordsAreReadAsUtf8Text() {
		DefaultKafkaConsumerFactory<Object, Object> factory = new DefaultKafkaConsumerFactory<>(Map.of());

		Deserializer<?> values = HandlerInvokers.deserializer(factory, false);

		assertThat(values).isInstanceOf(StringDeserializer.class);
		assertThat(values.deserialize("orders", "é".getBytes(StandardCharsets.UTF_8))).isEqualTo("é");
	}

}
