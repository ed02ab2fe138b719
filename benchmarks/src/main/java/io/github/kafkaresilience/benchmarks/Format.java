package io.github.kafkaresilience.benchmarks;

import java.util.Locale;

/**
 * How numbers are written in the report.
 */
final class Format {

	private Format() {
	}

	static String count(double value) {
		return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, "%,.0f", value);
	}

	static String perSecond(double value) {
		return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, "%,.0f/s", value);
	}

	static String ratio(double value) {
		if (Double.isNaN(value) || Double.isInfinite(value)) {
			return "–";
		}
		return String.format(Locale.ROOT, (value < 0.095) ? "%.3f×" : "%.2f×", value);
	}

	/** A relative deviation as {@code ±7.5 %}. */
	static String spread(double value) {
		return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, "±%.1f %%", value * 100);
	}

	/**
	 * A latency in milliseconds, with a decimal below 100 ms, where the fractions matter.
	 */
	static String latency(double millis) {
		if (Double.isNaN(millis)) {
			return "–";
		}
		return String.format(Locale.ROOT, (millis < 100) ? "%.1f ms" : "%,.0f ms", millis);
	}

	static String millis(double value) {
		return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, "%,.0f ms", value);
	}

	static String micros(double value) {
		return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, "%,.0f µs", value);
	}

	static String seconds(double millis) {
		return Double.isNaN(millis) ? "–" : String.format(Locale.ROOT, "%,.2f s", millis / 1000);
	}

	static String bytes(double value) {
		return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, "%,.0f B", value);
	}

	static String mebibytes(double bytes) {
		return Double.isNaN(bytes) ? "–" : String.format(Locale.ROOT, "%,.1f MiB", bytes / (1024 * 1024));
	}

}
