package io.github.kafkaresilience;

/**
 * Thrown by a handler to say that what it depends on is unavailable for every record, not
 * that this record failed: the listener's outage breaker opens at once, the record is
 * held where it is without counting as an attempt, and the listener holds its intake
 * until a probe succeeds. Resilience4j's {@code CallNotPermittedException} (thrown by an
 * open circuit breaker of the application's own) is taken the same way, anywhere in the
 * cause chain. With {@code kafka.resilience.outage.enabled=false} it is a transient
 * failure like any other.
 *
 * @since 0.1.0
 */
public class DependencyUnavailableException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public DependencyUnavailableException(String message) {
		super(message);
	}

	public DependencyUnavailableException(String message, Throwable cause) {
		super(message, cause);
	}

}
