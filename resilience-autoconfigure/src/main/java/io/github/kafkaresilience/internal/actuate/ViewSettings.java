package io.github.kafkaresilience.internal.actuate;

import io.github.kafkaresilience.autoconfigure.ShowValues;

/**
 * How much the endpoint's views read and show for one request.
 *
 * @param maxPageSize the most held keys or dead letters one page holds
 * @param scanLimit the most records one listing of dead letters, or one replay dry run,
 * reads
 * @param disclosure what of a dead letter a reader is shown
 * @since 0.1.0
 */
public record ViewSettings(int maxPageSize, long scanLimit, ValueDisclosure disclosure) {

	public ViewSettings {
		if (maxPageSize < 1) {
			throw new IllegalArgumentException(
					"kafka.resilience.console.max-page-size must be 1 or more but was " + maxPageSize);
		}
		if (scanLimit < 1) {
			throw new IllegalArgumentException(
					"kafka.resilience.console.scan-limit must be 1 or more but was " + scanLimit);
		}
	}

	/** The defaults of {@code kafka.resilience.console.*}. */
	public static ViewSettings defaults() {
		return new ViewSettings(200, 10_000,
				new ValueDisclosure(ShowValues.WHEN_AUTHORIZED, ValueDisclosure.DEFAULT_MASKED_HEADERS));
	}

}
