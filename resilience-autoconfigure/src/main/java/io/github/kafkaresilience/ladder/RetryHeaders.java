package io.github.kafkaresilience.ladder;

/**
 * The names of the protocol headers written on every record sent to a retry or
 * dead-letter topic, as an application reads them on a dead letter (UTF-8 text). How they
 * are written and read is internal.
 *
 * @since 0.1.0
 */
public final class RetryHeaders {

	public static final String RETRY_COUNT = "retry.count";

	public static final String ERROR_CLASS = "error.class";

	public static final String ERROR_MESSAGE = "error.message";

	public static final String ERROR_EXCEPTION = "error.exception";

	public static final String ERROR_TIMESTAMP = "error.timestamp";

	public static final String PREVIOUS_TOPIC = "previous.topic";

	public static final String ORIGINAL_TOPIC = "original.topic";

	public static final String ORIGINAL_PARTITION = "original.partition";

	public static final String ORIGINAL_OFFSET = "original.offset";

	public static final String LOCK_ID = "lock.id";

	public static final String DLQ_REASON = "dlq.reason";

	public static final String REPLAY_FROM_DLQ = "replay.from-dlq";

	public static final String REPLAY_TIMESTAMP = "replay.timestamp";

	/** {@code error.class} of a failure that is retried. */
	public static final String TRANSIENT = "transient";

	/** {@code error.class} of a failure that is not retried. */
	public static final String PERMANENT = "permanent";

	/** The consumer group whose ladder a record is in. */
	public static final String OWNER_GROUP = "owner.group";

	private RetryHeaders() {
	}

}
