package io.github.kafkaresilience.internal.lock;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;

import org.jspecify.annotations.Nullable;

/**
 * Reads the times of lock records, which {@link Instant#toString()} wrote: the tailer
 * reads every lock record, and {@link Instant#parse} (a general
 * {@code DateTimeFormatter}) took half of its time in a failure storm. Text of exactly
 * that form is read here; anything else goes to {@link Instant#parse}, so what it accepts
 * and refuses is unchanged.
 */
final class InstantText {

	private static final int[] SCALE = { 100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1_000, 100, 10, 1 };

	private InstantText() {
	}

	/**
	 * The instant {@code text} names: {@code Instant.parse(text)}, faster for its own
	 * output.
	 */
	static Instant parse(String text) {
		Instant instant = parseCanonical(text);
		return (instant != null) ? instant : Instant.parse(text);
	}

	/**
	 * {@code yyyy-MM-ddTHH:mm:ss[.f{1,9}]Z} with a year of four digits, or {@code null}.
	 */
	private static @Nullable Instant parseCanonical(String text) {
		int length = text.length();
		if (length < 20 || length > 30 || text.charAt(4) != '-' || text.charAt(7) != '-' || text.charAt(10) != 'T'
				|| text.charAt(13) != ':' || text.charAt(16) != ':' || text.charAt(length - 1) != 'Z') {
			return null;
		}
		int year = digits(text, 0, 4);
		int month = digits(text, 5, 7);
		int day = digits(text, 8, 10);
		int hour = digits(text, 11, 13);
		int minute = digits(text, 14, 16);
		int second = digits(text, 17, 19);
		int nanos = 0;
		if (length > 20) {
			if (length == 21 || text.charAt(19) != '.') {
				return null;
			}
			int fraction = digits(text, 20, length - 1);
			nanos = (fraction < 0) ? -1 : fraction * SCALE[length - 22];
		}
		if (year < 0 || month < 0 || day < 0 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0
				|| second > 59 || nanos < 0) {
			return null;
		}
		try {
			long epochDay = LocalDate.of(year, month, day).toEpochDay();
			return Instant.ofEpochSecond(epochDay * 86_400 + hour * 3_600L + minute * 60L + second, nanos);
		}
		catch (DateTimeException ex) {
			return null; // Instant.parse says what is wrong with it
		}
	}

	/**
	 * The decimal number in {@code text[from, to)}, or -1 when a character is not a
	 * digit.
	 */
	private static int digits(String text, int from, int to) {
		int value = 0;
		for (int i = from; i < to; i++) {
			char c = text.charAt(i);
			if (c < '0' || c > '9') {
				return -1;
			}
			value = value * 10 + (c - '0');
		}
		return value;
	}

}
