package io.github.kafkaresilience.autoconfigure;

import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.Ordered;

/**
 * Stops an application on Spring Boot 3 or older with a report that names the Spring Boot
 * versions the library supports, before the auto-configuration fails to load its classes.
 * Registered in {@code META-INF/spring.factories}, which Spring Boot 3 reads as well; it
 * uses only API that Spring Boot 3 and 4 both have. It lets the application start when
 * the version cannot be read (classes run from a directory, a repackaged Spring Boot).
 *
 * @since 0.1.0
 */
final class SpringBootVersionCheck implements ApplicationContextInitializer<ConfigurableApplicationContext>, Ordered {

	/** The Spring Boot versions the library supports, as the report names them. */
	static final String SUPPORTED = "Spring Boot 4 (built and tested with Spring Boot 4.1.x and spring-kafka 4.1.x)";

	private static final int FIRST_SUPPORTED_MAJOR = 4;

	private final Supplier<@Nullable String> bootVersion;

	SpringBootVersionCheck() {
		this(SpringBootVersion::getVersion);
	}

	SpringBootVersionCheck(Supplier<@Nullable String> bootVersion) {
		this.bootVersion = bootVersion;
	}

	@Override
	public void initialize(ConfigurableApplicationContext context) {
		String version = this.bootVersion.get();
		if (!isSupported(version)) {
			throw new UnsupportedSpringBootException(version);
		}
	}

	@Override
	public int getOrder() {
		// before any initializer that could already trip over the missing classes
		return Ordered.HIGHEST_PRECEDENCE;
	}

	/**
	 * Whether the library runs on this Spring Boot version; {@code true} when the version
	 * is unknown or cannot be read, so that only a version known to be too old stops the
	 * application.
	 * @param version the Spring Boot version, such as {@code 4.1.1} or {@code 4.2.0-M1}
	 * @return whether the version is supported or unknown
	 */
	static boolean isSupported(@Nullable String version) {
		Integer major = major(version);
		return major == null || major >= FIRST_SUPPORTED_MAJOR;
	}

	private static @Nullable Integer major(@Nullable String version) {
		if (version == null) {
			return null;
		}
		String trimmed = version.trim();
		int end = 0;
		while (end < trimmed.length() && end < 9 && Character.isDigit(trimmed.charAt(end))) {
			end++;
		}
		return (end > 0) ? Integer.valueOf(trimmed.substring(0, end)) : null;
	}

	/**
	 * The application runs on a Spring Boot the library does not support. Its message
	 * holds the description and the action of the report, for logs without the report.
	 */
	static final class UnsupportedSpringBootException extends IllegalStateException {

		private final String problem;

		private final String action;

		UnsupportedSpringBootException(String version) {
			this("kafka-resilience needs " + SUPPORTED + ", but this application runs on Spring Boot " + version
					+ ", on which its auto-configuration cannot load.",
					"Upgrade the application to Spring Boot 4.1.x, or remove kafka-resilience-spring-boot-starter "
							+ "from its dependencies.");
		}

		private UnsupportedSpringBootException(String problem, String action) {
			super(problem + " " + action);
			this.problem = problem;
			this.action = action;
		}

		String problem() {
			return this.problem;
		}

		String action() {
			return this.action;
		}

	}

	/**
	 * Shows {@link UnsupportedSpringBootException} as Spring Boot's failure report.
	 * Registered in {@code META-INF/spring.factories}.
	 */
	static final class UnsupportedSpringBootFailureAnalyzer
			extends AbstractFailureAnalyzer<UnsupportedSpringBootException> {

		@Override
		protected FailureAnalysis analyze(Throwable rootFailure, UnsupportedSpringBootException cause) {
			return new FailureAnalysis(cause.problem(), cause.action(), cause);
		}

	}

}
