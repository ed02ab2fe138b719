package io.github.kafkaresilience.internal.lock;

import java.time.Instant;
import java.time.format.DateTimeParseException;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Lock times read back exactly as {@link Instant#parse} reads them, and refused as it
 * refuses them.
 */
class InstantTextTests {

	@Property
	void everyTimeALockRecordCanHoldReadsBackAsWritten(
			@ForAll @LongRange(min = -62_167_219_200L, max = 253_402_300_799L) long seconds,
			@ForAll @IntRange(min = 0, max = 999_999_999) int nanos) {
		Instant written = Instant.ofEpochSecond(seconds, nanos);
		assertThat(InstantText.parse(written.toString())).isEqualTo(written);
	}

	@Property
	void timesWithFewerFractionDigitsReadAsInstantParseReadsThem(@ForAll @IntRange(min = 1, max = 9) int digits,
			@ForAll @IntRange(min = 0, max = 999_999_999) int nanos) {
		String text = "2026-11-27T21:40:55." + String.format("%09d", nanos).substring(0, digits) + "Z";
		assertThat(InstantText.parse(text)).isEqualTo(Instant.parse(text));
	}

	@Test
	void otherFormsGoToInstantParse() {
		assertThat(InstantText.parse("+12026-01-01T00:00:00Z")).isEqualTo(Instant.parse("+12026-01-01T00:00:00Z"));
		assertThat(InstantText.parse("2026-11-27T23:59:60Z")).isEqualTo(Instant.parse("2026-11-27T23:59:60Z"));
		assertThat(InstantText.parse("2026-11-27t21:40:55Z")).isEqualTo(Instant.parse("2026-11-27t21:40:55Z"));
		assertThat(InstantText.parse("2026-11-27T24:00:00Z")).isEqualTo(Instant.parse("2026-11-27T24:00:00Z"));
		assertThat(InstantText.parse("2026-11-27T21:40:55.Z")).isEqualTo(Instant.parse("2026-11-27T21:40:55.Z"));
	}

	@Test
	void whatInstantParseRefusesIsRefused() {
		for (String text : new String[] { "2026-02-30T00:00:00Z", "2026-11-27T21:40:5xZ", "2026-11-27 21:40:55Z",
				"yesterday", "" }) {
			assertThatExceptionOfType(DateTimeParseException.class).as(text).isThrownBy(() -> InstantText.parse(text));
		}
	}

}
