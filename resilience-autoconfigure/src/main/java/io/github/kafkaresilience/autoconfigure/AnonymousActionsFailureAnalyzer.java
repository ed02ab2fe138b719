package io.github.kafkaresilience.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Shows the refusal of actions open to anyone as Spring Boot's failure report. Registered
 * in {@code META-INF/spring.factories}.
 */
class AnonymousActionsFailureAnalyzer extends AbstractFailureAnalyzer<AnonymousActionsException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, AnonymousActionsException cause) {
		return new FailureAnalysis(cause.problem(), cause.action(), cause);
	}

}
