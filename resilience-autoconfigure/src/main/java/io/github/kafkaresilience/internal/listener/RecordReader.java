package io.github.kafkaresilience.internal.listener;

import java.util.Optional;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.Deserializer;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.support.serializer.DeserializationException;

/**
 * Reads a record as its listener method gets it: deserialized with the application's
 * deserializers, as if read from its main topic, over a copy of its headers (see
 * {@link HandlerInvoker}). A record that cannot be read is poison.
 */
final class RecordReader {

	private final String mainTopic;

	private final Deserializer<?> keyDeserializer;

	private final Deserializer<?> valueDeserializer;

	RecordReader(String mainTopic, Deserializer<?> keyDeserializer, Deserializer<?> valueDeserializer) {
		this.mainTopic = mainTopic;
		this.keyDeserializer = keyDeserializer;
		this.valueDeserializer = valueDeserializer;
	}

	/**
	 * Deserializes a record.
	 * @return the record, or its poison result when a deserializer threw or an
	 * {@code ErrorHandlingDeserializer} reported its delegate's failure
	 */
	Read read(Delivery delivery) {
		Headers headers = new RecordHeaders(delivery.headers().toArray());
		Object key;
		Object value;
		try {
			key = (delivery.key() != null) ? this.keyDeserializer.deserialize(this.mainTopic, headers, delivery.key())
					: null;
			value = (delivery.value() != null)
					? this.valueDeserializer.deserialize(this.mainTopic, headers, delivery.value()) : null;
		}
		catch (RuntimeException ex) {
			return new Read(null, HandlerResult.poison(ex));
		}
		DeserializationException reported = DeserializerExceptionHeaders.reported(delivery.headers(), headers,
				delivery.key(), delivery.value());
		if (reported != null) {
			return new Read(null, HandlerResult.poison(reported));
		}
		return new Read(record(delivery, headers, key, value), null);
	}

	private static ConsumerRecord<Object, Object> record(Delivery delivery, Headers headers, @Nullable Object key,
			@Nullable Object value) {
		return new ConsumerRecord<>(delivery.topic(), delivery.partition(), delivery.offset(), delivery.timestamp(),
				TimestampType.CREATE_TIME, ConsumerRecord.NULL_SIZE, ConsumerRecord.NULL_SIZE, key, value, headers,
				Optional.empty());
	}

	/**
	 * A record read.
	 *
	 * @param record the deserialized record, {@code null} for poison
	 * @param poison the poison result, {@code null} when the record was read
	 */
	record Read(@Nullable ConsumerRecord<Object, Object> record, @Nullable HandlerResult poison) {
	}

}
