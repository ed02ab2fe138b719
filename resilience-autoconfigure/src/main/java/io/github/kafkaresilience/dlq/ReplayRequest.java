package io.github.kafkaresilience.dlq;

import java.time.Instant;
import io.github.kafkaresilience.internal.support.EscapedText;
import org.jspecify.annotations.Nullable;

import org.springframework.util.StringUtils;

/**
 * What to replay: the dead letters of {@code from} that match every filter given, sent
 * back into the ladder of consumer group {@code group} on main topic {@code to}. A
 * {@code null} filter matches everything.
 * <p>
 * A replay never writes to the main topic, which other groups read too: it sends each
 * dead letter to stage 1 of the group's own ladder, where the group's instances give it a
 * lock behind every record of its key still in the ladder (docs/PROTOCOL.md, rule 2.0).
 * Dead letters of another group are skipped and counted.
 *
 * @param from the dead-letter topic to read
 * @param to the main topic whose ladder the dead letters go back to
 * @param group the consumer group whose ladder it is, or {@code null} for the only group
 * that consumes {@code to} in this application
 * @param since only dead letters written to {@code from} at or after this instant
 * @param until only dead letters written to {@code from} before this instant
 * @param errorClass only dead letters whose {@code error.class} is this
 * ({@code transient} or {@code permanent})
 * @param exception only dead letters whose {@code error.exception} is this class name
 * @param reason only dead letters whose {@code dlq.reason} is this ({@code permanent},
 * {@code exhausted} or {@code poison})
 * @param key only dead letters whose key, read as UTF-8, is this
 * @param originalPartition only dead letters born in this partition
 * ({@code original.partition})
 * @param originalOffset only dead letters born at this offset ({@code original.offset})
 * @param dryRun count the matching dead letters without sending anything
 * @since 0.1.0
 */
public record ReplayRequest(String from, String to, @Nullable String group, @Nullable Instant since,
		@Nullable Instant until, @Nullable String errorClass, @Nullable String exception, @Nullable String reason,
		@Nullable String key, @Nullable Integer originalPartition, @Nullable Long originalOffset, boolean dryRun) {

	/** The most characters of one value {@link #toString()} shows. */
	private static final int MAX_SHOWN = 200;

	public ReplayRequest {
		if (!StringUtils.hasText(from)) {
			throw new IllegalArgumentException("A replay needs the dead-letter topic to read ('from')");
		}
		if (!StringUtils.hasText(to)) {
			throw new IllegalArgumentException(
					"A replay needs the main topic whose ladder the dead letters go back to ('to')");
		}
		if (from.equals(to)) {
			throw new IllegalArgumentException("A replay cannot send '" + from + "' to itself");
		}
		if (group != null && group.isBlank()) {
			group = null;
		}
		if (since != null && until != null && !since.isBefore(until)) {
			throw new IllegalArgumentException("'since' (" + since + ") must be before 'until' (" + until + ")");
		}
	}

	/**
	 * Every dead letter of {@code from}, sent back to {@code to}: narrow it with the
	 * {@code with...} methods.
	 */
	public static ReplayRequest of(String from, String to) {
		return new ReplayRequest(from, to, null, null, null, null, null, null, null, null, null, false);
	}

	public ReplayRequest withGroup(@Nullable String group) {
		return new ReplayRequest(this.from, this.to, group, this.since, this.until, this.errorClass, this.exception,
				this.reason, this.key, this.originalPartition, this.originalOffset, this.dryRun);
	}

	public ReplayRequest withSince(@Nullable Instant since) {
		return new ReplayRequest(this.from, this.to, this.group, since, this.until, this.errorClass, this.exception,
				this.reason, this.key, this.originalPartition, this.originalOffset, this.dryRun);
	}

	public ReplayRequest withUntil(@Nullable Instant until) {
		return new ReplayRequest(this.from, this.to, this.group, this.since, until, this.errorClass, this.exception,
				this.reason, this.key, this.originalPartition, this.originalOffset, this.dryRun);
	}

	public ReplayRequest withErrorClass(@Nullable String errorClass) {
		return new ReplayRequest(this.from, this.to, this.group, this.since, this.until, errorClass, this.exception,
				this.reason, this.key, this.originalPartition, this.originalOffset, this.dryRun);
	}

	public ReplayRequest withException(@Nullable String exception) {
		return new ReplayRequest(this.from, this.to, this.group, this.since, this.until, this.errorClass, exception,
				this.reason, this.key, this.originalPartition, this.originalOffset, this.dryRun);
	}

	public ReplayRequest withReason(@Nullable String reason) {
		return new ReplayRequest(this.from, this.to, this.group, this.since, this.until, this.errorClass,
				this.exception, reason, this.key, this.originalPartition, this.originalOffset, this.dryRun);
	}

	public ReplayRequest withKey(@Nullable String key) {
		return new ReplayRequest(this.from, this.to, this.group, this.since, this.until, this.errorClass,
				this.exception, this.reason, key, this.originalPartition, this.originalOffset, this.dryRun);
	}

	public ReplayRequest withOriginalPartition(@Nullable Integer originalPartition) {
		return new ReplayRequest(this.from, this.to, this.group, this.since, this.until, this.errorClass,
				this.exception, this.reason, this.key, originalPartition, this.originalOffset, this.dryRun);
	}

	public ReplayRequest withOriginalOffset(@Nullable Long originalOffset) {
		return new ReplayRequest(this.from, this.to, this.group, this.since, this.until, this.errorClass,
				this.exception, this.reason, this.key, this.originalPartition, originalOffset, this.dryRun);
	}

	public ReplayRequest withDryRun(boolean dryRun) {
		return new ReplayRequest(this.from, this.to, this.group, this.since, this.until, this.errorClass,
				this.exception, this.reason, this.key, this.originalPartition, this.originalOffset, dryRun);
	}

	/** Whether a dead letter passes every filter of this request. */
	public boolean matches(DeadLetter letter) {
		return (this.since == null || !letter.timestamp().isBefore(this.since))
				&& (this.until == null || letter.timestamp().isBefore(this.until))
				&& (this.errorClass == null || this.errorClass.equals(letter.errorClass()))
				&& (this.exception == null || this.exception.equals(letter.errorException()))
				&& (this.reason == null || this.reason.equals(letter.dlqReason()))
				&& (this.key == null || this.key.equals(letter.keyText()))
				&& (this.originalPartition == null || this.originalPartition.equals(letter.originalPartition()))
				&& (this.originalOffset == null || this.originalOffset.equals(letter.originalOffset()));
	}

	/**
	 * The request as a log line or an error message show it: every value escaped
	 * ({@link EscapedText}), as they may come from a request over the web.
	 */
	@Override
	public String toString() {
		StringBuilder text = new StringBuilder(EscapedText.of(this.from, MAX_SHOWN)).append(" -> ")
			.append(EscapedText.of(this.to, MAX_SHOWN));
		append(text, "group", this.group);
		append(text, "since", this.since);
		append(text, "until", this.until);
		append(text, "error-class", this.errorClass);
		append(text, "exception", this.exception);
		append(text, "reason", this.reason);
		append(text, "key", this.key);
		append(text, "original-partition", this.originalPartition);
		append(text, "original-offset", this.originalOffset);
		return text.append(this.dryRun ? " (dry run)" : "").toString();
	}

	private static void append(StringBuilder text, String name, @Nullable Object value) {
		if (value != null) {
			text.append(' ').append(name).append('=').append(EscapedText.of(value, MAX_SHOWN));
		}
	}

}
