package io.github.kafkaresilience;

import java.time.Duration;

/**
 * Fails an attempt whose listener method returned a result that completes later (a
 * {@code CompletableFuture}, a {@code Mono}, a Kotlin {@code suspend} function) when that
 * result did not complete within the listener's {@code attempt-timeout}. The result is
 * cancelled, and the attempt fails as any other: the record retries along its ladder,
 * unless the exception is declared permanent.
 *
 * @since 0.1.0
 */
public class AttemptTimeoutException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final Duration timeout;

	public AttemptTimeoutException(String message, Duration timeout) {
		super(message);
		this.timeout = timeout;
	}

	/** How long the result was waited for. */
	public Duration getTimeout() {
		return this.timeout;
	}

}
