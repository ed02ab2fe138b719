package io.github.kafkaresilience.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

import io.github.resilience4j.ratelimiter.RateLimiter;
import org.apache.kafka.common.utils.AppInfoParser;

import org.springframework.boot.SpringBootVersion;
import org.springframework.core.SpringVersion;
import org.springframework.kafka.core.KafkaTemplate;

/**
 * The versions of what is measured, read from the classpath so that the report says what
 * actually ran.
 */
final class Versions {

	private static final String UNKNOWN = "unknown";

	private Versions() {
	}

	/** The version of kafka-resilience this module was built with. */
	static String library() {
		return buildProperty("library.version");
	}

	static String kafkaClients() {
		return AppInfoParser.getVersion();
	}

	static String springKafka() {
		return orUnknown(KafkaTemplate.class.getPackage().getImplementationVersion());
	}

	static String springBoot() {
		return orUnknown(SpringBootVersion.getVersion());
	}

	static String springFramework() {
		return orUnknown(SpringVersion.getVersion());
	}

	/**
	 * Resilience4j's rate limiter, from its jar's manifest (it carries no
	 * pom.properties).
	 */
	static String resilience4jRateLimiter() {
		return orUnknown(RateLimiter.class.getPackage().getImplementationVersion());
	}

	/**
	 * The version of a jar built by Maven, from the {@code pom.properties} it carries.
	 * @param groupId the group id
	 * @param artifactId the artifact id
	 * @return the version, or {@code unknown}
	 */
	static String ofMavenArtifact(String groupId, String artifactId) {
		return orUnknown(
				load("META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties").getProperty("version"));
	}

	private static String buildProperty(String name) {
		return orUnknown(load("kafka-resilience-benchmarks.properties").getProperty(name));
	}

	private static Properties load(String resource) {
		Properties properties = new Properties();
		try (InputStream in = Versions.class.getClassLoader().getResourceAsStream(resource)) {
			if (in != null) {
				properties.load(in);
			}
		}
		catch (IOException ex) {
			// reported as unknown
		}
		return properties;
	}

	private static String orUnknown(String version) {
		return (version != null && !version.isBlank() && !version.startsWith("@")) ? version : UNKNOWN;
	}

}
