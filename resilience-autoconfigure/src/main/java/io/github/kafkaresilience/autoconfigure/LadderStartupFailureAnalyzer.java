package io.github.kafkaresilience.autoconfigure;

import io.github.kafkaresilience.ladder.LadderStartupException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Shows a ladder's startup refusal as Spring Boot's failure report: what is wrong as the
 * description, what to run or set as the action. Registered in
 * {@code META-INF/spring.factories}.
 *
 * @since 0.1.0
 */
class LadderStartupFailureAnalyzer extends AbstractFailureAnalyzer<LadderStartupException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, LadderStartupException cause) {
		return new FailureAnalysis(cause.problem(), cause.action(), cause);
	}

}
