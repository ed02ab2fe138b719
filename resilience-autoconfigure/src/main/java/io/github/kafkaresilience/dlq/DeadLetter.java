package io.github.kafkaresilience.dlq;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

/**
 * A record read from a dead-letter topic, with the protocol headers that say where it
 * came from and why it failed. A header that is absent or unreadable is {@code null}.
 *
 * @param topic the dead-letter topic
 * @param partition its partition
 * @param offset its offset
 * @param timestamp when the record was written to the dead-letter topic
 * @param key the record key, raw
 * @param value the payload, raw; never written to the incident line
 * @param headers every header, the user's included
 * @param originalTopic {@code original.topic}: the main topic the record was born in
 * @param originalPartition {@code original.partition}
 * @param originalOffset {@code original.offset}
 * @param previousTopic {@code previous.topic}: the topic the record failed in last
 * @param retryCount {@code retry.count}: how many times it was attempted
 * @param errorClass {@code error.class}: {@code transient} or {@code permanent}
 * @param errorException {@code error.exception}: the exception class of the last failure
 * @param errorMessage {@code error.message}
 * @param errorTimestamp {@code error.timestamp}
 * @param dlqReason {@code dlq.reason}: {@code permanent}, {@code exhausted},
 * {@code poison} or {@code operator}
 * @since 0.1.0
 */
public record DeadLetter(String topic, int partition, long offset, Instant timestamp, byte @Nullable [] key,
		byte @Nullable [] value, Headers headers, @Nullable String originalTopic, @Nullable Integer originalPartition,
		@Nullable Long originalOffset, @Nullable String previousTopic, @Nullable Integer retryCount,
		@Nullable String errorClass, @Nullable String errorException, @Nullable String errorMessage,
		@Nullable String errorTimestamp, @Nullable String dlqReason) {

	/** Reads a dead letter from a record of a dead-letter topic. */
	public static DeadLetter of(ConsumerRecord<byte[], byte[]> record) {
		Headers headers = record.headers();
		return new DeadLetter(record.topic(), record.partition(), record.offset(),
				Instant.ofEpochMilli(record.timestamp()), record.key(), record.value(), headers,
				ProtocolHeaders.text(headers, ProtocolHeaders.ORIGINAL_TOPIC),
				integer(headers, ProtocolHeaders.ORIGINAL_PARTITION), number(headers, ProtocolHeaders.ORIGINAL_OFFSET),
				ProtocolHeaders.text(headers, ProtocolHeaders.PREVIOUS_TOPIC), ProtocolHeaders.retryCount(headers),
				ProtocolHeaders.text(headers, ProtocolHeaders.ERROR_CLASS),
				ProtocolHeaders.text(headers, ProtocolHeaders.ERROR_EXCEPTION),
				ProtocolHeaders.text(headers, ProtocolHeaders.ERROR_MESSAGE),
				ProtocolHeaders.text(headers, ProtocolHeaders.ERROR_TIMESTAMP),
				ProtocolHeaders.text(headers, ProtocolHeaders.DLQ_REASON));
	}

	/** The key as UTF-8 text, or {@code null} when the record has none. */
	public @Nullable String keyText() {
		return (this.key != null) ? new String(this.key, StandardCharsets.UTF_8) : null;
	}

	/** The size of the payload in bytes; 0 for a null payload. */
	public int payloadSize() {
		return (this.value != null) ? this.value.length : 0;
	}

	private static @Nullable Integer integer(Headers headers, String name) {
		Long value = number(headers, name);
		return (value != null && value >= Integer.MIN_VALUE && value <= Integer.MAX_VALUE) ? value.intValue() : null;
	}

	private static @Nullable Long number(Headers headers, String name) {
		String text = ProtocolHeaders.text(headers, name);
		if (text == null) {
			return null;
		}
		try {
			return Long.parseLong(text.trim());
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	@Override
	public String toString() {
		return "DeadLetter[" + this.topic + "/" + this.partition + "/" + this.offset + " reason=" + this.dlqReason
				+ " original=" + this.originalTopic + "/" + this.originalPartition + "/" + this.originalOffset + "]";
	}

}
