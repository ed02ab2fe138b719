package io.github.kafkaresilience.internal.ladder;

import java.time.Instant;

import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.ladder.Delivery;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Header;
import org.jspecify.annotations.Nullable;

/**
 * A topic, or the producer, refused a record as too large: how to recognise one, and what
 * it means for the dead letter, the log and the operator, with the setting to raise. A
 * record a retry topic refuses cannot be retried and is dead-lettered instead; one the
 * dead-letter topic refuses can go nowhere ({@link UnpublishableRecordException}).
 *
 * @param topic the refusing topic
 * @param cause the refusal, a {@link RecordTooLargeException} as a rule
 * @param hop the hop that was refused
 */
record Refusal(String topic, Throwable cause, Hop hop) {

	/** How deep a refusal is looked for among the causes of a failure. */
	private static final int MAX_DEPTH = 20;

	/**
	 * The cause that says a topic or the producer refused a record as too large, or
	 * {@code null}.
	 */
	static @Nullable Throwable tooLarge(Throwable ex) {
		Throwable current = ex;
		for (int depth = 0; current != null && depth < MAX_DEPTH; current = current.getCause(), depth++) {
			if (current instanceof RecordTooLargeException || current instanceof RecordBatchTooLargeException) {
				return current;
			}
		}
		return null;
	}

	/**
	 * What the log and the dead letter say of a record this refusal turned away from its
	 * next stage: that it was dead-lettered instead, what to raise, and its last failure.
	 * @param record the refused record
	 * @param dlqTopic where it goes instead, and where it is replayed from
	 */
	String deadLettered(Delivery record, String dlqTopic) {
		long size = size(record);
		FailureInfo last = this.hop.failure();
		return "Record " + record + " (about " + size + " bytes of key, value and headers) could not be "
				+ "published to '" + this.topic + "': " + this.cause.getMessage()
				+ " It cannot be retried and was dead-lettered instead. Raise " + fix(this.cause, this.topic, size)
				+ ", then replay it from '" + dlqTopic + "'"
				+ ((last != null) ? ". Its last failure: " + last.exception() + ": " + last.message() : "");
	}

	/**
	 * The failure the refused record is dead-lettered with: this refusal, permanent, told
	 * as {@code message}.
	 */
	FailureInfo failure(String message, Instant now) {
		FailureInfo tooLarge = ProtocolHeaders.failure(this.cause, true, now);
		return new FailureInfo(tooLarge.errorClass(), message, tooLarge.exception(), tooLarge.timestamp());
	}

	/**
	 * What a refusal by the dead-letter topic means: the record can go nowhere, and its
	 * partition must not go on past it until a setting is raised.
	 * @param record the refused record
	 * @param failure the failure of the dead letter's publish
	 */
	UnpublishableRecordException unpublishable(Delivery record, Throwable failure) {
		long size = size(record);
		return new UnpublishableRecordException(
				"Record " + record + " (about " + size
						+ " bytes of key, value and headers) can be neither retried nor dead-lettered: '" + this.topic
						+ "' refused it as too large (" + this.cause.getMessage() + "). Nothing from it on in "
						+ record.topic() + "-" + record.partition() + " is committed until it is published. Raise "
						+ fix(this.cause, this.topic, size) + ", then restart the instance to deliver it again",
				this.topic, failure);
	}

	/**
	 * The setting to raise so that {@code topic} takes a record of {@code size} bytes.
	 */
	static String fix(Throwable tooLarge, String topic, long size) {
		long needed = size + ProtocolHeaders.HEADER_ALLOWANCE;
		String reason = String.valueOf(tooLarge.getMessage());
		if (reason.contains("max.request.size")) {
			return "spring.kafka.producer.properties.max.request.size to " + needed
					+ " or more (the library's producers start from the application's producer settings)";
		}
		if (reason.contains("buffer.memory")) {
			return "spring.kafka.producer.buffer-memory above " + size;
		}
		return "max.message.bytes of '" + topic + "' (kafka-configs --bootstrap-server <broker> --alter --entity-type "
				+ "topics --entity-name " + topic + " --add-config max.message.bytes=" + needed + ")";
	}

	/** About the bytes a record takes: its key, value and headers. */
	static long size(Delivery record) {
		long size = ((record.key() != null) ? record.key().length : 0)
				+ ((record.value() != null) ? record.value().length : 0);
		for (Header header : record.headers()) {
			size += header.key().length() + ((header.value() != null) ? header.value().length : 0);
		}
		return size;
	}

}
