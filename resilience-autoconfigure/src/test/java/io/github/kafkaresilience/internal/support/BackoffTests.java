package io.github.kafkaresilience.internal.support;

import java.time.Duration;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class BackoffTests {

	@Test
	void thePauseDoublesFromTheFirstUpToTheBound() {
		assertThat(IntStream.rangeClosed(1, 9)
			.mapToObj((failures) -> Backoff.after(failures, Duration.ofMillis(500), Duration.ofSeconds(30)).toMillis()))
			.containsExactly(500L, 1000L, 2000L, 4000L, 8000L, 16000L, 30000L, 30000L, 30000L);
		assertThat(IntStream.rangeClosed(1, 8)
			.mapToObj((failures) -> Backoff.after(failures, Duration.ofMillis(100), Duration.ofSeconds(5)).toMillis()))
			.containsExactly(100L, 200L, 400L, 800L, 1600L, 3200L, 5000L, 5000L);
	}

	@Test
	void aLongRunOfFailuresDoesNotOverflow() {
		assertThat(Backoff.after(Integer.MAX_VALUE, Duration.ofMillis(500), Duration.ofSeconds(30)))
			.isEqualTo(Duration.ofSeconds(30));
	}

}
