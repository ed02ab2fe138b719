package io.github.kafkaresilience.ladder;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * A record consumed from a main or stage topic, as raw bytes.
 *
 * @param topic the topic it was read from
 * @param partition its partition
 * @param offset its offset
 * @param timestamp its timestamp, epoch millis
 * @param key the raw key, {@code null} for a record without a key
 * @param value the raw value
 * @param headers its headers
 * @since 0.1.0
 */
public record Delivery(String topic, int partition, long offset, long timestamp, byte @Nullable [] key,
		byte @Nullable [] value, Headers headers) {

	/** The record as a consumer returned it. */
	public static Delivery of(ConsumerRecord<byte[], byte[]> record) {
		return new Delivery(record.topic(), record.partition(), record.offset(), record.timestamp(), record.key(),
				record.value(), record.headers());
	}

	public @Nullable Bytes businessKey() {
		return (this.key != null) ? Bytes.wrap(this.key) : null;
	}

	@Override
	public String toString() {
		return this.topic + "/" + this.partition + "/" + this.offset;
	}

}
