package io.github.kafkaresilience.internal.support;

import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * What Spring Boot reports when an application fails to start: the analysis of the first
 * failure analyzer registered in {@code META-INF/spring.factories} that recognises the
 * failure, as Boot's own failure reporting picks it.
 */
public final class StartupFailures {

	private StartupFailures() {
	}

	/**
	 * The analysis Boot would print for a failure, or {@code null} when no analyzer knows
	 * it. Analyzers that need the failed context's bean factory or environment are left
	 * out: none of them reads a failure of this library.
	 */
	public static @Nullable FailureAnalysis analysis(Throwable failure) {
		List<FailureAnalyzer> analyzers = SpringFactoriesLoader
			.forDefaultResourceLocation(StartupFailures.class.getClassLoader())
			.load(FailureAnalyzer.class, null, SpringFactoriesLoader.FailureHandler.handleMessage((message, ex) -> {
			}));
		return analyzers.stream()
			.map((analyzer) -> analyzer.analyze(failure))
			.filter(Objects::nonNull)
			.findFirst()
			.orElse(null);
	}

}
