package io.github.kafkaresilience.internal.ladder;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Set;

import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.ladder.RetryHeaders;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.ladder.DlqReason;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;

/**
 * The protocol headers written on every record sent to a retry or dead-letter topic: how
 * they are written and read (UTF-8 text). Their names are API: {@link RetryHeaders}.
 */
public final class ProtocolHeaders {

	/**
	 * Room for the protocol headers a hop adds to a record: a topic of the ladder accepts
	 * this much more than its main topic, and the publisher allows it on top of the
	 * largest record.
	 */
	public static final int HEADER_ALLOWANCE = 16 * 1024;

	public static final String RETRY_COUNT = RetryHeaders.RETRY_COUNT;

	public static final String ERROR_CLASS = RetryHeaders.ERROR_CLASS;

	public static final String ERROR_MESSAGE = RetryHeaders.ERROR_MESSAGE;

	public static final String ERROR_EXCEPTION = RetryHeaders.ERROR_EXCEPTION;

	public static final String ERROR_TIMESTAMP = RetryHeaders.ERROR_TIMESTAMP;

	public static final String PREVIOUS_TOPIC = RetryHeaders.PREVIOUS_TOPIC;

	public static final String ORIGINAL_TOPIC = RetryHeaders.ORIGINAL_TOPIC;

	public static final String ORIGINAL_PARTITION = RetryHeaders.ORIGINAL_PARTITION;

	public static final String ORIGINAL_OFFSET = RetryHeaders.ORIGINAL_OFFSET;

	public static final String LOCK_ID = RetryHeaders.LOCK_ID;

	public static final String DLQ_REASON = RetryHeaders.DLQ_REASON;

	public static final String REPLAY_FROM_DLQ = RetryHeaders.REPLAY_FROM_DLQ;

	public static final String REPLAY_TIMESTAMP = RetryHeaders.REPLAY_TIMESTAMP;

	/** {@code error.class} of a failure that is retried. */
	public static final String TRANSIENT = RetryHeaders.TRANSIENT;

	/** {@code error.class} of a failure that is not retried. */
	public static final String PERMANENT = RetryHeaders.PERMANENT;

	private static final Set<String> PROTOCOL = Set.of(RETRY_COUNT, ERROR_CLASS, ERROR_MESSAGE, ERROR_EXCEPTION,
			ERROR_TIMESTAMP, PREVIOUS_TOPIC, ORIGINAL_TOPIC, ORIGINAL_PARTITION, ORIGINAL_OFFSET, LOCK_ID, DLQ_REASON,
			Ownership.HEADER);

	private static final Set<String> ERRORS = Set.of(ERROR_CLASS, ERROR_MESSAGE, ERROR_EXCEPTION, ERROR_TIMESTAMP);

	private static final Set<String> PER_HOP = Set.of(RETRY_COUNT, PREVIOUS_TOPIC, LOCK_ID, DLQ_REASON,
			Ownership.HEADER);

	private static final Set<String> ORIGINS = Set.of(ORIGINAL_TOPIC, ORIGINAL_PARTITION, ORIGINAL_OFFSET);

	private static final Set<String> REPLAY = Set.of(REPLAY_FROM_DLQ, REPLAY_TIMESTAMP);

	private static final DateTimeFormatter RFC_3339_NANOS = DateTimeFormatter
		.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSSSSS'Z'")
		.withZone(ZoneOffset.UTC);

	private ProtocolHeaders() {
	}

	/**
	 * Describes a failure for the {@code error.*} headers.
	 */
	public static FailureInfo failure(Throwable ex, boolean permanent, Instant when) {
		String message = (ex.getMessage() != null) ? ex.getMessage() : "";
		return new FailureInfo(permanent ? PERMANENT : TRANSIENT, message, ex.getClass().getName(),
				RFC_3339_NANOS.format(when));
	}

	/**
	 * The headers of a record leaving {@code sourceTopic} for a retry or dead-letter
	 * topic. User headers travel unchanged; protocol headers on a main-topic record are
	 * not trusted and are dropped, except the {@code original.*} headers of a replayed
	 * dead letter (they say where the record was born, nothing more; routing never reads
	 * them).
	 * @param source the headers of the record being sent on
	 * @param fromMain whether the record comes from the main topic (its first hop)
	 * @param sourceTopic the topic the record comes from
	 * @param partition its partition
	 * @param offset its offset
	 * @param retryCount failed attempts so far
	 * @param lockId the lock the record carries, {@code null} for a record without a key
	 * @param failure the latest failure, or {@code null} to keep the previous one
	 * @param reason why it is dead-lettered, or {@code null} for a retry topic
	 * @param owner the group whose ladder the record goes to
	 */
	public static Headers forHop(Headers source, boolean fromMain, String sourceTopic, int partition, long offset,
			int retryCount, @Nullable String lockId, @Nullable FailureInfo failure, @Nullable DlqReason reason,
			Ownership owner) {
		RecordHeaders headers = new RecordHeaders();
		boolean replayed = fromMain && replayedBirthplace(source, sourceTopic, partition, offset) != null;
		for (Header header : source) {
			String name = header.key();
			boolean drop = fromMain ? PROTOCOL.contains(name) && !(replayed && ORIGINS.contains(name))
					: PER_HOP.contains(name) || (failure != null && ERRORS.contains(name));
			if (!drop) {
				headers.add(header);
			}
		}
		if (fromMain && !replayed) {
			put(headers, ORIGINAL_TOPIC, sourceTopic);
			put(headers, ORIGINAL_PARTITION, Integer.toString(partition));
			put(headers, ORIGINAL_OFFSET, Long.toString(offset));
		}
		put(headers, RETRY_COUNT, Integer.toString(retryCount));
		put(headers, PREVIOUS_TOPIC, sourceTopic);
		if (lockId != null) {
			put(headers, LOCK_ID, lockId);
		}
		if (failure != null) {
			put(headers, ERROR_CLASS, failure.errorClass());
			put(headers, ERROR_MESSAGE, failure.message());
			put(headers, ERROR_EXCEPTION, failure.exception());
			put(headers, ERROR_TIMESTAMP, failure.timestamp());
		}
		if (reason != null) {
			put(headers, DLQ_REASON, reason.value());
		}
		return owner.stamp(headers);
	}

	/**
	 * The headers of a dead letter sent back into its group's ladder by a replay: the
	 * record enters stage 1 as a replay entry (docs/PROTOCOL.md, rule 2.0). User headers
	 * travel unchanged, in their order, and so do the {@code original.*} headers; the
	 * other protocol headers and the {@code replay.*} headers of an earlier replay are
	 * dropped. {@code retry.count} starts again at {@code 0}, {@code previous.topic}
	 * names the dead-letter topic, {@code replay.from-dlq} and {@code replay.timestamp}
	 * say which dead letter this is and when it was replayed, and {@code owner.group}
	 * names the group whose ladder it enters. It carries no {@code lock.id}: the instance
	 * that reads it gives it a lock.
	 * @param dlqHeaders the headers of the dead letter
	 * @param dlqTopic the dead-letter topic
	 * @param dlqPartition the partition of the dead letter
	 * @param dlqOffset the offset of the dead letter
	 * @param now when it is replayed
	 * @param owner the group whose ladder the record enters
	 * @return the headers of the record to send
	 */
	public static Headers forReplay(Headers dlqHeaders, String dlqTopic, int dlqPartition, long dlqOffset, Instant now,
			Ownership owner) {
		RecordHeaders headers = new RecordHeaders();
		for (Header header : dlqHeaders) {
			String name = header.key();
			boolean drop = (PROTOCOL.contains(name) && !ORIGINS.contains(name)) || REPLAY.contains(name);
			if (!drop) {
				headers.add(header);
			}
		}
		put(headers, RETRY_COUNT, "0");
		put(headers, PREVIOUS_TOPIC, dlqTopic);
		put(headers, REPLAY_FROM_DLQ, dlqTopic + "/" + dlqPartition + "/" + dlqOffset);
		put(headers, REPLAY_TIMESTAMP, RFC_3339_NANOS.format(now));
		return owner.stamp(headers);
	}

	/**
	 * Whether a stage record is a replay entry: a dead letter sent back, not yet given a
	 * lock.
	 */
	public static boolean isReplayEntry(Headers headers) {
		return text(headers, REPLAY_FROM_DLQ) != null && headers.lastHeader(LOCK_ID) == null;
	}

	/**
	 * Where a record was born, {@code topic/partition/offset} from its {@code original.*}
	 * headers, or {@code null} when they are missing or unreadable.
	 */
	public static @Nullable String origin(Headers headers) {
		String topic = text(headers, ORIGINAL_TOPIC);
		String partition = text(headers, ORIGINAL_PARTITION);
		String offset = text(headers, ORIGINAL_OFFSET);
		if (topic == null || topic.isEmpty() || partition == null || offset == null) {
			return null;
		}
		try {
			return topic + "/" + Integer.parseInt(partition.trim()) + "/" + Long.parseLong(offset.trim());
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/**
	 * The birthplace a main-topic record names as a dead letter sent back by a replay, or
	 * {@code null} when it is not one. A replay names its dead letter in
	 * {@code replay.from-dlq} and is written to its birthplace's partition, after it; a
	 * record whose {@code original.*} headers name another topic or partition, or a later
	 * offset, is not taken for a replay. Its {@code original.*} headers then travel on,
	 * so that its retries keep the birthplace of the record's first attempt.
	 * @param headers the record's headers
	 * @param topic the main topic it was read from
	 * @param partition its partition
	 * @param offset its offset
	 * @return {@code topic/partition/offset} of its birthplace, or {@code null}
	 */
	public static @Nullable String replayedBirthplace(Headers headers, String topic, int partition, long offset) {
		if (text(headers, REPLAY_FROM_DLQ) == null || !topic.equals(text(headers, ORIGINAL_TOPIC))) {
			return null;
		}
		try {
			String originalPartition = text(headers, ORIGINAL_PARTITION);
			String originalOffset = text(headers, ORIGINAL_OFFSET);
			if (originalPartition == null || originalOffset == null
					|| Integer.parseInt(originalPartition.trim()) != partition
					|| Long.parseLong(originalOffset.trim()) >= offset) {
				return null;
			}
		}
		catch (NumberFormatException ex) {
			return null;
		}
		return origin(headers);
	}

	/** The text of the last header with that name, or {@code null}. */
	public static @Nullable String text(Headers headers, String name) {
		Header header = headers.lastHeader(name);
		return (header != null && header.value() != null) ? new String(header.value(), StandardCharsets.UTF_8) : null;
	}

	/**
	 * The {@code retry.count} of a stage record, or {@code null} when it is missing or
	 * not a count.
	 */
	public static @Nullable Integer retryCount(Headers headers) {
		String text = text(headers, RETRY_COUNT);
		if (text == null) {
			return null;
		}
		try {
			int count = Integer.parseInt(text.trim());
			return (count >= 0) ? count : null;
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/** The failure described by a record's {@code error.*} headers, or {@code null}. */
	public static @Nullable FailureInfo failure(Headers headers) {
		String errorClass = text(headers, ERROR_CLASS);
		if (errorClass == null) {
			return null;
		}
		return new FailureInfo(errorClass, orEmpty(text(headers, ERROR_MESSAGE)),
				orEmpty(text(headers, ERROR_EXCEPTION)), orEmpty(text(headers, ERROR_TIMESTAMP)));
	}

	private static String orEmpty(@Nullable String text) {
		return (text != null) ? text : "";
	}

	private static void put(Headers headers, String name, String value) {
		headers.remove(name);
		headers.add(name, value.getBytes(StandardCharsets.UTF_8));
	}

}
