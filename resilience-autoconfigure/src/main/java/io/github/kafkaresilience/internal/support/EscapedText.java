package io.github.kafkaresilience.internal.support;

import org.jspecify.annotations.Nullable;

/**
 * Text from outside (a request, a record key) made safe for a log line: control and
 * format characters (Unicode categories Cc, Cf, Zl, Zp, and unpaired surrogates) are
 * written as {@code &#92;uXXXX}, so that a CR or LF cannot start a forged line and a bidi
 * override ({@code U+202E}) or line separator ({@code U+2028}) cannot disguise one. The
 * console's page escapes the same characters the same way.
 *
 * @since 0.1.0
 */
public final class EscapedText {

	private EscapedText() {
	}

	/** {@code value} as text, escaped; {@code "null"} for {@code null}. */
	public static String of(@Nullable Object value) {
		return of(value, Integer.MAX_VALUE);
	}

	/**
	 * {@code value} as text, escaped, cut after {@code maxChars} characters of the
	 * original (then ending in {@code ...}): for values a request may make as long as it
	 * likes.
	 */
	public static String of(@Nullable Object value, int maxChars) {
		String text = String.valueOf(value);
		boolean cut = text.length() > maxChars;
		String shown = cut ? text.substring(0, maxChars) : text;
		StringBuilder escaped = null;
		for (int i = 0; i < shown.length();) {
			int codePoint = shown.codePointAt(i);
			int length = Character.charCount(codePoint);
			if (isHidden(codePoint)) {
				if (escaped == null) {
					escaped = new StringBuilder(shown.length() + 16).append(shown, 0, i);
				}
				for (int j = i; j < i + length; j++) {
					escaped.append(String.format("\\u%04X", (int) shown.charAt(j)));
				}
			}
			else if (escaped != null) {
				escaped.append(shown, i, i + length);
			}
			i += length;
		}
		String result = (escaped != null) ? escaped.toString() : shown;
		return cut ? result + "..." : result;
	}

	/**
	 * Whether a code point is a control or format character, a line or paragraph
	 * separator.
	 */
	static boolean isHidden(int codePoint) {
		return switch (Character.getType(codePoint)) {
			case Character.CONTROL, Character.FORMAT, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
					Character.SURROGATE ->
				true;
			default -> false;
		};
	}

}
