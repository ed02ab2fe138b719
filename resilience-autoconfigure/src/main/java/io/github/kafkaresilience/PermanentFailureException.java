package io.github.kafkaresilience;

/**
 * Thrown by a handler to say that a record can never succeed: it goes straight to the
 * dead-letter topic with {@code dlq.reason=permanent}, without visiting a retry stage.
 * Other exception types can be declared permanent with
 * {@code kafka.resilience.retry.permanent-exceptions}.
 *
 * @since 0.1.0
 */
public class PermanentFailureException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public PermanentFailureException(String message) {
		super(message);
	}

	public PermanentFailureException(String message, Throwable cause) {
		super(message, cause);
	}

}
