package io.github.kafkaresilience.internal.ladder;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Delays as they appear in retry topic names (docs/PROTOCOL.md, "Topics").
 */
class DelaysTests {

	@Test
	void delaysAreWrittenInTheShortestExactUnit() {
		assertThat(Delays.format(Duration.ofMillis(500))).isEqualTo("500ms");
		assertThat(Delays.format(Duration.ofSeconds(30))).isEqualTo("30s");
		assertThat(Delays.format(Duration.ofMinutes(5))).isEqualTo("5m");
		assertThat(Delays.format(Duration.ofHours(1))).isEqualTo("1h");
		assertThat(Delays.format(Duration.ofDays(1))).isEqualTo("1d");
	}

	@Test
	void aDelayThatIsNotAWholeNumberOfTheLargerUnitKeepsTheSmallerOne() {
		assertThat(Delays.format(Duration.ofSeconds(90))).isEqualTo("90s");
		assertThat(Delays.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
		assertThat(Delays.format(Duration.ofMinutes(90))).isEqualTo("90m");
		assertThat(Delays.format(Duration.ofHours(36))).isEqualTo("36h");
		assertThat(Delays.format(Duration.ofMillis(1))).isEqualTo("1ms");
	}

	@Test
	void aDelayGivenInASmallerUnitIsWrittenInTheLargestExactOne() {
		assertThat(Delays.format(Duration.ofSeconds(60))).isEqualTo("1m");
		assertThat(Delays.format(Duration.ofMillis(3_600_000))).isEqualTo("1h");
		assertThat(Delays.format(Duration.ofHours(48))).isEqualTo("2d");
		assertThat(Delays.format(Duration.ofNanos(2_000_000))).isEqualTo("2ms");
	}

	@Test
	void aZeroDelayIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> Delays.format(Duration.ZERO))
			.withMessageContaining("positive");
	}

	@Test
	void aNegativeDelayIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> Delays.format(Duration.ofSeconds(-30)))
			.withMessageContaining("positive");
	}

	@Test
	void aDelayWithAFractionOfAMillisecondIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> Delays.format(Duration.ofNanos(1_500_000)))
			.withMessageContaining("milliseconds");
		assertThatIllegalArgumentException().isThrownBy(() -> Delays.format(Duration.ofNanos(1)))
			.withMessageContaining("milliseconds");
	}

}
