package io.github.kafkaresilience.autoconfigure;

import java.time.Duration;
import java.util.List;

import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.ladder.LadderStartupException;
import io.github.kafkaresilience.internal.support.StartupFailures;
import org.junit.jupiter.api.Test;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ApplicationContextException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A ladder's startup refusal reads as Boot's failure report: what is wrong as the
 * description, what to do as the action.
 */
class LadderStartupFailureAnalyzerTests {

	private final LadderStartupFailureAnalyzer analyzer = new LadderStartupFailureAnalyzer();

	@Test
	void aRefusalBecomesTheDescriptionAndTheActionOfTheReport() {
		LadderStartupException refusal = refusal();

		FailureAnalysis analysis = this.analyzer.analyze(startFailed(refusal));

		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription()).isEqualTo(refusal.problem())
			.startsWith("Consumer group 'billing service/eu' (topic 'orders') cannot be part of a topic name")
			.doesNotContain("Give the listener");
		assertThat(analysis.getAction()).isEqualTo(refusal.action()).startsWith("Give the listener a group id");
		assertThat(analysis.getCause()).isSameAs(refusal);
	}

	@Test
	void theMessageOfARefusalHoldsBothForLogsWithoutTheReport() {
		LadderStartupException refusal = refusal();

		assertThat(refusal).hasMessage(refusal.problem() + " " + refusal.action())
			.isInstanceOf(IllegalStateException.class);
	}

	@Test
	void otherFailuresAreLeftToOtherAnalyzers() {
		assertThat(this.analyzer.analyze(startFailed(new IllegalStateException("something else")))).isNull();
	}

	@Test
	void bootFindsTheAnalyzerInSpringFactoriesAndPrefersItsReport() {
		LadderStartupException refusal = refusal();

		FailureAnalysis analysis = StartupFailures.analysis(startFailed(refusal));

		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription()).isEqualTo(refusal.problem());
		assertThat(analysis.getAction()).isEqualTo(refusal.action());
	}

	/** A real refusal: the constructor is the ladder package's own. */
	private static LadderStartupException refusal() {
		return catchThrowableOfType(LadderStartupException.class,
				() -> LadderPlan.of("billing service/eu", "orders", List.of(Duration.ofSeconds(30)), null,
						LadderPlan.DEFAULT_RETRY_TEMPLATE, LadderPlan.DEFAULT_DLQ_TEMPLATE,
						LadderPlan.DEFAULT_LOCK_TEMPLATE));
	}

	/**
	 * How a refusal reaches Boot: the registry refuses to start, and so does the context.
	 */
	private static Throwable startFailed(Throwable refusal) {
		return new ApplicationContextException("Failed to start bean 'orderedRetryListenerRegistry'", refusal);
	}

}
