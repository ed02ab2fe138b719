package io.github.kafkaresilience.autoconfigure;

import io.github.kafkaresilience.autoconfigure.SpringBootVersionCheck.UnsupportedSpringBootException;
import io.github.kafkaresilience.internal.support.StartupFailures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.support.GenericApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * On a Spring Boot older than 4 the application stops with a report naming the supported
 * versions; on Spring Boot 4, or when the version cannot be read, it starts.
 */
class SpringBootVersionCheckTests {

	@ParameterizedTest
	@ValueSource(strings = { "3.5.7", "3.0.0", "2.7.18", "3.5.0-SNAPSHOT" })
	void anApplicationOnSpringBoot3OrOlderStopsWithAReportNamingTheSupportedVersions(String version) {
		UnsupportedSpringBootException refusal = catchThrowableOfType(UnsupportedSpringBootException.class,
				() -> check(version));

		assertThat(refusal).isInstanceOf(IllegalStateException.class)
			.hasMessage(refusal.problem() + " " + refusal.action());
		assertThat(refusal.problem()).startsWith("kafka-resilience needs Spring Boot 4 (built and tested with "
				+ "Spring Boot 4.1.x and spring-kafka 4.1.x), but this application runs on Spring Boot " + version);
		assertThat(refusal.action()).startsWith("Upgrade the application to Spring Boot 4.1.x");
		FailureAnalysis analysis = StartupFailures.analysis(refusal);
		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription()).isEqualTo(refusal.problem());
		assertThat(analysis.getAction()).isEqualTo(refusal.action());
	}

	@ParameterizedTest
	@ValueSource(strings = { "4.1.0", "4.1.1", "4.0.0", "4.2.0-M1", "4.1.2-SNAPSHOT", "5.0.0" })
	void anApplicationOnSpringBoot4OrLaterStarts(String version) {
		assertThatNoException().isThrownBy(() -> check(version));
	}

	@ParameterizedTest
	@NullAndEmptySource
	@ValueSource(strings = { "unknown", " ", "${spring-boot.version}", "v3" })
	void anApplicationWhoseSpringBootVersionCannotBeReadStarts(String version) {
		assertThatNoException().isThrownBy(() -> check(version));
	}

	@Test
	void theVersionsTheReportNamesAreTheOnesTheLibraryIsBuiltWith() {
		String builtWith = SpringBootVersion.getVersion();

		assertThat(builtWith).as("update SpringBootVersionCheck.SUPPORTED and the README's Requirements")
			.startsWith("4.1.");
		assertThat(SpringBootVersionCheck.isSupported(builtWith)).isTrue();
		assertThatNoException()
			.isThrownBy(() -> new SpringBootVersionCheck().initialize(new GenericApplicationContext()));
	}

	@Test
	void springBootAppliesTheCheckToEveryApplicationFromSpringFactories() {
		assertThat(new SpringApplication().getInitializers()).hasAtLeastOneElementOfType(SpringBootVersionCheck.class);
	}

	private static void check(String version) {
		new SpringBootVersionCheck(() -> version).initialize(new GenericApplicationContext());
	}

}
