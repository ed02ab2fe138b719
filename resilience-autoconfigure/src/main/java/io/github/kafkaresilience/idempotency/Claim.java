package io.github.kafkaresilience.idempotency;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * The answer of {@link IdempotencyStore#claim}.
 *
 * @param scope the listener the key belongs to
 * @param key the idempotency key
 * @param status whether the attempt may run
 * @param token identifies this attempt's claim, {@code null} unless
 * {@link Status#CLAIMED}
 * @param since when the key was completed or the holding claim was taken
 * @since 0.1.0
 */
public record Claim(String scope, String key, Status status, @Nullable String token, Instant since) {

	public enum Status {

		/** This attempt holds the key and may run the handler. */
		CLAIMED,

		/** The key was completed before: the record is skipped. */
		COMPLETED,

		/** Another attempt holds a live claim on the key. */
		HELD

	}

	public static Claim claimed(String scope, String key, String token, Instant since) {
		return new Claim(scope, key, Status.CLAIMED, token, since);
	}

	public static Claim completed(String scope, String key, Instant since) {
		return new Claim(scope, key, Status.COMPLETED, null, since);
	}

	public static Claim held(String scope, String key, Instant since) {
		return new Claim(scope, key, Status.HELD, null, since);
	}

	String requireToken() {
		if (this.status != Status.CLAIMED || this.token == null) {
			throw new IllegalArgumentException("Not a claim held by this attempt: " + this);
		}
		return this.token;
	}

}
