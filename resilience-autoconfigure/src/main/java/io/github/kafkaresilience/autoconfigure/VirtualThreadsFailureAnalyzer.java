package io.github.kafkaresilience.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Shows the refusal of virtual worker threads on a Java runtime without them as Spring
 * Boot's failure report. Registered in {@code META-INF/spring.factories}.
 */
class VirtualThreadsFailureAnalyzer extends AbstractFailureAnalyzer<VirtualThreadsUnavailableException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, VirtualThreadsUnavailableException cause) {
		return new FailureAnalysis(cause.problem(), cause.action(), cause);
	}

}
