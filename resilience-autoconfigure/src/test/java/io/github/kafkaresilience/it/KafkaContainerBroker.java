package io.github.kafkaresilience.it;

import java.util.Locale;
import java.util.Map;

import org.apache.kafka.common.utils.AppInfoParser;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * The shared broker as a Testcontainers {@link KafkaContainer}, for
 * {@code kafka.broker=testcontainers}. The only class of the tests that touches
 * Testcontainers, so that the default build never loads it and never looks for Docker.
 * <p>
 * The image is {@code apache/kafka} at the version of the Kafka clients on the class
 * path; {@code -Dkafka.broker.image=...} picks another.
 */
final class KafkaContainerBroker {

	/** Why the broker tests are skipped where the container cannot run. */
	static final String NO_DOCKER = "kafka.broker=testcontainers, but no Docker environment was found: the broker "
			+ "tests need one for their Kafka container. Start Docker, or leave out -Ptestcontainers to run them on "
			+ "the in-process broker";

	private static Boolean dockerAvailable;

	private KafkaContainerBroker() {
	}

	/** Whether Testcontainers finds a Docker environment; asked once per JVM. */
	static synchronized boolean dockerAvailable() {
		if (dockerAvailable == null) {
			dockerAvailable = DockerClientFactory.instance().isDockerAvailable();
		}
		return dockerAvailable;
	}

	/**
	 * Starts the container, stopped when the JVM ends (and removed by Testcontainers
	 * should the JVM die).
	 * @param settings broker settings ({@code log.cleaner.backoff.ms=1000}), given to the
	 * image as its {@code KAFKA_*} environment variables
	 * @return the bootstrap servers, on a port of this host
	 */
	static String start(Map<String, String> settings) {
		KafkaContainer container = new KafkaContainer(DockerImageName.parse(image()));
		settings.forEach((name, value) -> container.withEnv(environmentVariable(name), value));
		container.start();
		Runtime.getRuntime().addShutdownHook(new Thread(container::stop));
		return container.getBootstrapServers();
	}

	/**
	 * {@code apache/kafka} at the version of the Kafka clients, unless
	 * {@code -Dkafka.broker.image} names another.
	 */
	static String image() {
		return System.getProperty("kafka.broker.image", "apache/kafka:" + AppInfoParser.getVersion());
	}

	/**
	 * {@code log.cleaner.backoff.ms} becomes {@code KAFKA_LOG_CLEANER_BACKOFF_MS}, as the
	 * image reads it.
	 */
	static String environmentVariable(String setting) {
		return "KAFKA_" + setting.toUpperCase(Locale.ROOT).replace('.', '_');
	}

}
