package io.github.kafkaresilience.idempotency;

import java.time.Instant;

/**
 * The failure of an attempt whose record's idempotency key is held by another attempt (on
 * another instance, or by one that crashed and whose lease has not run out). It is
 * transient: the record takes its next retry stage and claims again when it is due.
 *
 * @since 0.1.0
 */
public class ClaimHeldException extends RuntimeException {

	public ClaimHeldException(String scope, String key, Instant since) {
		super("Idempotency key '" + key + "' of '" + scope + "' is held by another attempt since " + since
				+ "; the record is retried once that claim is completed, released or past kafka.resilience.idempotency.lease");
	}

}
