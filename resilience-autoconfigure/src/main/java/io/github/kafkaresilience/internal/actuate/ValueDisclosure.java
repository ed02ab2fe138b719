package io.github.kafkaresilience.internal.actuate;

import java.util.List;
import java.util.Locale;
import java.util.Set;

import io.github.kafkaresilience.autoconfigure.ShowValues;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.lock.Ownership;

import org.springframework.util.PatternMatchUtils;

/**
 * What of a dead letter a reader is shown: its value and the application's headers only
 * as {@link ShowValues} allows, and the headers named by the masked patterns never. The
 * library's own headers ({@code error.*}, {@code original.*}, {@code dlq.reason}, ...)
 * say where a dead letter comes from and why it failed, which every list row shows
 * anyway: they are shown, unless a pattern masks them.
 *
 * @since 0.1.0
 */
public final class ValueDisclosure {

	/**
	 * The header names masked unless configured otherwise: credentials a record may carry
	 * from the request that produced it.
	 */
	public static final List<String> DEFAULT_MASKED_HEADERS = List.of("authorization", "cookie", "set-cookie",
			"proxy-authorization", "*token*", "*secret*", "*password*", "*api-key*");

	/** What a hidden or masked value is shown as. */
	public static final String MASK = "******";

	private static final Set<String> LIBRARY_HEADERS = Set.of(ProtocolHeaders.RETRY_COUNT, ProtocolHeaders.ERROR_CLASS,
			ProtocolHeaders.ERROR_MESSAGE, ProtocolHeaders.ERROR_EXCEPTION, ProtocolHeaders.ERROR_TIMESTAMP,
			ProtocolHeaders.PREVIOUS_TOPIC, ProtocolHeaders.ORIGINAL_TOPIC, ProtocolHeaders.ORIGINAL_PARTITION,
			ProtocolHeaders.ORIGINAL_OFFSET, ProtocolHeaders.LOCK_ID, ProtocolHeaders.DLQ_REASON,
			ProtocolHeaders.REPLAY_FROM_DLQ, ProtocolHeaders.REPLAY_TIMESTAMP, Ownership.HEADER);

	private final ShowValues show;

	private final List<String> masked;

	/**
	 * @param show when values and the application's headers are shown
	 * @param maskedHeaders header names always masked, ignoring case; {@code *} stands
	 * for any characters ({@code *token*} masks every name that contains {@code token})
	 */
	public ValueDisclosure(ShowValues show, List<String> maskedHeaders) {
		this.show = show;
		this.masked = maskedHeaders.stream().map((pattern) -> pattern.trim().toLowerCase(Locale.ROOT)).toList();
	}

	/**
	 * Whether a reader is shown values.
	 * @param operator whether the reader has the operator role (never without Spring
	 * Security)
	 */
	public boolean showsValues(boolean operator) {
		return switch (this.show) {
			case NEVER -> false;
			case WHEN_AUTHORIZED -> operator;
			case ALWAYS -> true;
		};
	}

	/**
	 * The value of a header as a reader is shown it: the text itself, or {@link #MASK}.
	 */
	String header(String name, String text, boolean showValues) {
		if (isMasked(name)) {
			return MASK;
		}
		return (showValues || LIBRARY_HEADERS.contains(name)) ? text : MASK;
	}

	/** Whether a header's value is masked whoever reads it. */
	boolean isMasked(String name) {
		String lower = name.toLowerCase(Locale.ROOT);
		return this.masked.stream().anyMatch((pattern) -> PatternMatchUtils.simpleMatch(pattern, lower));
	}

}
