package io.github.kafkaresilience.internal.ladder;

import java.time.Duration;

/**
 * Writes a stage delay in the shortest exact unit, as it appears in retry topic names:
 * {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 1d}.
 */
public final class Delays {

	private Delays() {
	}

	public static String format(Duration delay) {
		if (delay.isNegative() || delay.isZero()) {
			throw new IllegalArgumentException("A retry delay must be positive but was " + delay);
		}
		if (delay.toNanosPart() % 1_000_000 != 0) {
			throw new IllegalArgumentException("A retry delay must be a whole number of milliseconds but was " + delay);
		}
		long millis = delay.toMillis();
		if (millis % 86_400_000 == 0) {
			return (millis / 86_400_000) + "d";
		}
		if (millis % 3_600_000 == 0) {
			return (millis / 3_600_000) + "h";
		}
		if (millis % 60_000 == 0) {
			return (millis / 60_000) + "m";
		}
		if (millis % 1_000 == 0) {
			return (millis / 1_000) + "s";
		}
		return millis + "ms";
	}

}
