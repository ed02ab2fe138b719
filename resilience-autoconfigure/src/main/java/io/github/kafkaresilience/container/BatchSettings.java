package io.github.kafkaresilience.container;

import java.time.Duration;
import java.util.Locale;

/**
 * How a batch listener's records are gathered into batches, and what a batch that fails
 * as a whole means.
 *
 * @param size the most records in one call of the method
 * @param maxWait how long a batch that is not full waits for more ready records; zero
 * takes what is ready
 * @param failure what a call that fails without naming its failed record means
 * @since 0.2.0
 */
public record BatchSettings(int size, Duration maxWait, Failure failure) {

	/**
	 * Batches of up to 500 ready records, taken as they are ready, bisected on failure.
	 */
	public static final BatchSettings DEFAULTS = new BatchSettings(500, Duration.ZERO, Failure.BISECT);

	public BatchSettings {
		if (size < 1) {
			throw new IllegalArgumentException("batch-size must be at least 1, was " + size);
		}
		if (maxWait.isNegative()) {
			throw new IllegalArgumentException("batch-wait must not be negative, was " + maxWait);
		}
	}

	/** These settings with another size, for a listener that sets its own. */
	public BatchSettings withSize(int size) {
		return new BatchSettings(size, this.maxWait, this.failure);
	}

	/**
	 * What a call of a batch method that throws anything but a
	 * {@code BatchListenerFailedException} means.
	 */
	public enum Failure {

		/**
		 * The batch is split in halves that run again, until each failing record has
		 * failed alone: only records that fail on their own count an attempt; the others
		 * succeed.
		 */
		BISECT,

		/**
		 * Every record of the batch failed with the exception, and each counts an
		 * attempt.
		 */
		FAIL_ALL;

		@Override
		public String toString() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

	}

}
