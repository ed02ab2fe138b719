package io.github.kafkaresilience.internal.support;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Text from a request as a log line shows it: control and format characters and line
 * separators escaped, everything else as it is.
 */
class EscapedTextTests {

	@Test
	void lineBreaksCannotStartAForgedLine() {
		assertThat(EscapedText.of("orders\r\n2026-11-28 INFO Operator 'admin' asked"))
			.isEqualTo("orders\\u000D\\u000A2026-11-28 INFO Operator 'admin' asked")
			.doesNotContain("\r", "\n");
	}

	@Test
	void bidiOverridesLineSeparatorsAndOtherFormatCharactersAreEscaped() {
		assertThat(EscapedText.of("key\u202Egpj.exe")).isEqualTo("key\\u202Egpj.exe");
		assertThat(EscapedText.of("a\u2028b\u2029c")).isEqualTo("a\\u2028b\\u2029c");
		assertThat(EscapedText.of("zero\u200Bwidth\u0000\u007F\u0085"))
			.isEqualTo("zero\\u200Bwidth\\u0000\\u007F\\u0085");
		// a format character outside the basic plane: both halves of its pair
		assertThat(EscapedText.of("tag\uDB40\uDC01")).isEqualTo("tag\\uDB40\\uDC01");
		assertThat(EscapedText.of("lone\uD800")).isEqualTo("lone\\uD800");
	}

	@Test
	void printableTextIsLeftAsItIs() {
		String printable = "Zürich-42 \u4E2D\u6587 \uD83D\uDE00 done";
		assertThat(EscapedText.of(printable)).isEqualTo(printable);
		assertThat(EscapedText.of(null)).isEqualTo("null");
	}

	@Test
	void aLongValueIsCut() {
		assertThat(EscapedText.of("x".repeat(1000), 10)).isEqualTo("xxxxxxxxxx...");
		assertThat(EscapedText.of("\n".repeat(3), 2)).isEqualTo("\\u000A\\u000A...");
	}

}
