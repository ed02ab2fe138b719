package io.github.kafkaresilience.it;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * An application instance in a JVM of its own, so that it can be killed hard: no shutdown
 * hook, no final commit, no lock released.
 */
final class InstanceProcess implements AutoCloseable {

	private final Process process;

	private final Path log;

	private InstanceProcess(Process process, Path log) {
		this.process = process;
		this.log = log;
	}

	/** Starts an instance on the {@link SharedBroker}. */
	static InstanceProcess start(String topic, String instanceId, String... properties) {
		return start(SharedBroker.bootstrapServers(), topic, instanceId, List.of(properties));
	}

	/**
	 * Starts an instance on the given brokers, in the test applications' group
	 * {@code g-<topic>}.
	 * @param bootstrapServers the brokers, for example those of a {@link KafkaCluster}
	 * @param topic the main topic
	 * @param instanceId the instance id, kept across a restart
	 * @param properties more application properties ({@code name=value})
	 * @return the running instance
	 */
	static InstanceProcess start(String bootstrapServers, String topic, String instanceId, List<String> properties) {
		return start(bootstrapServers, topic, Names.group(topic), instanceId, properties);
	}

	/**
	 * Starts an instance on the given brokers in a consumer group of its own choosing.
	 * @param bootstrapServers the brokers
	 * @param topic the main topic
	 * @param group the consumer group, which names its ladder; given here and not among
	 * {@code properties}, since Spring Boot would join two values of one option with a
	 * comma
	 * @param instanceId the instance id, kept across a restart
	 * @param properties more application properties ({@code name=value})
	 * @return the running instance
	 */
	static InstanceProcess start(String bootstrapServers, String topic, String group, String instanceId,
			List<String> properties) {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("-Xmx256m");
		command.add("-XX:TieredStopAtLevel=1");
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(AuditedApplication.class.getName());
		command.add("--spring.kafka.bootstrap-servers=" + bootstrapServers);
		command.add("--test.topic=" + topic);
		command.add("--spring.kafka.consumer.group-id=" + group);
		command.add("--spring.kafka.consumer.auto-offset-reset=earliest");
		if (!properties.contains("spring.kafka.consumer.properties.group.protocol=consumer")) {
			// the consumer protocol's session timeout is the broker's (SharedBroker,
			// KafkaCluster)
			command.add("--spring.kafka.consumer.properties.session.timeout.ms=6000");
			command.add("--spring.kafka.consumer.properties.heartbeat.interval.ms=1000");
		}
		command.add("--kafka.resilience.instance-id=" + instanceId);
		command.add("--kafka.resilience.consumer.commit-interval=200ms");
		command.add("--spring.main.banner-mode=off");
		for (String property : properties) {
			command.add("--" + property);
		}
		try {
			Path log = Files.createTempFile("instance-" + instanceId + "-", ".log");
			Process process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(log.toFile())
				.start();
			return new InstanceProcess(process, log);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not start instance " + instanceId, ex);
		}
	}

	/** Kills the JVM at once (SIGKILL): nothing is committed, closed or released. */
	void kill() {
		this.process.destroyForcibly();
		try {
			this.process.waitFor();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	File log() {
		return this.log.toFile();
	}

	@Override
	public void close() {
		if (this.process.isAlive()) {
			kill();
		}
	}

}
