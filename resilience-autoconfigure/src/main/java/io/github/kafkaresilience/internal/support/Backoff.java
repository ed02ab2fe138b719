package io.github.kafkaresilience.internal.support;

import java.time.Duration;

/**
 * The pause before trying again after failures in a row: the first pause, doubled after
 * each further failure (at most six times), and never longer than a bound.
 *
 * @since 0.1.0
 */
public final class Backoff {

	private Backoff() {
	}

	/**
	 * The pause after {@code failures} failures in a row.
	 * @param failures the failures so far, at least 1
	 * @param first the pause after the first failure
	 * @param max the longest pause
	 * @return {@code first} times 2^(failures - 1), capped at {@code max}
	 */
	public static Duration after(int failures, Duration first, Duration max) {
		long millis = first.toMillis() << Math.min(Math.max(failures, 1) - 1, 6);
		return Duration.ofMillis(Math.min(millis, max.toMillis()));
	}

}
