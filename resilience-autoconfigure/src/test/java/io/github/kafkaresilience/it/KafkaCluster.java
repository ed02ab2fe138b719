package io.github.kafkaresilience.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import kafka.tools.StorageTool;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import static org.awaitility.Awaitility.await;

/**
 * A KRaft cluster of real broker processes on loopback, one JVM per node (combined broker
 * and controller, static voters), so that a broker can be killed hard (SIGKILL) and
 * restarted with the same node id, ports and log directory while clients keep running.
 * <p>
 * Real processes rather than spring-kafka's multi-broker
 * {@code EmbeddedKafkaKraftBroker}: that one fails at startup here (raft
 * {@code handleUpdateVoterResponse}), and a broker in the test JVM could not be killed
 * without a graceful step anyway. Internal topics and the broker default are replicated
 * to every node (up to 3) with {@code min.insync.replicas} 2, so one node down loses no
 * acknowledged write and blocks no {@code acks=all} producer.
 */
final class KafkaCluster implements ChaosRun.Brokers, AutoCloseable {

	private static final Duration READY_TIMEOUT = Duration.ofMinutes(2);

	/** Longer than a producer's delivery timeout, so a send fails by itself first. */
	private static final Duration SEND_TIMEOUT = Duration.ofMinutes(3);

	private final Path directory;

	private final List<Broker> brokers;

	private final Admin admin;

	private final KafkaProducer<byte[], byte[]> producer;

	private final Thread shutdownHook = new Thread(this::destroyAll, "kafka-cluster-shutdown");

	private KafkaCluster(Path directory, List<Broker> brokers) {
		this.directory = directory;
		this.brokers = brokers;
		Runtime.getRuntime().addShutdownHook(this.shutdownHook);
		this.brokers.forEach(Broker::start);
		this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()));
		try {
			awaitBrokers(this.brokers.size());
		}
		catch (RuntimeException ex) {
			this.admin.close(Duration.ofSeconds(5));
			destroyAll();
			throw ex;
		}
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
		config.put(ProducerConfig.ACKS_CONFIG, "all");
		config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
		config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
		this.producer = new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
	}

	/**
	 * Formats and starts a cluster and waits until every broker is registered.
	 * @param size brokers, each also a controller (a voter of the metadata quorum)
	 * @return the running cluster
	 */
	static KafkaCluster start(int size) {
		try {
			Path directory = Files.createTempDirectory("kafka-cluster-");
			List<int[]> ports = IntStream.range(0, size).mapToObj((i) -> new int[] { freePort(), freePort() }).toList();
			String voters = IntStream.range(0, size)
				.mapToObj((i) -> (i + 1) + "@127.0.0.1:" + ports.get(i)[1])
				.collect(Collectors.joining(","));
			short replication = (short) Math.min(3, size);
			String clusterId = Uuid.randomUuid().toString();
			List<Broker> brokers = new ArrayList<>();
			for (int i = 0; i < size; i++) {
				Broker broker = new Broker(i + 1, ports.get(i)[0], directory);
				broker.writeConfig(ports.get(i)[1], voters, replication);
				broker.format(clusterId);
				brokers.add(broker);
			}
			return new KafkaCluster(directory, brokers);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not prepare the cluster's directories", ex);
		}
	}

	@Override
	public String bootstrapServers() {
		return this.brokers.stream().map((broker) -> "127.0.0.1:" + broker.port).collect(Collectors.joining(","));
	}

	@Override
	public int size() {
		return this.brokers.size();
	}

	@Override
	public void createTopic(String topic, int partitions, Map<String, String> configs) {
		createTopic(topic, partitions, (short) Math.min(3, size()), configs);
	}

	void createTopic(String topic, int partitions, short replicationFactor, Map<String, String> configs) {
		try {
			this.admin.createTopics(List.of(new NewTopic(topic, partitions, replicationFactor).configs(configs)))
				.all()
				.get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not create topic '" + topic + "'", ex);
		}
	}

	@Override
	public synchronized void sendAll(String topic, List<String[]> keyValues) {
		List<Future<?>> sent = new ArrayList<>();
		for (String[] kv : keyValues) {
			byte[] key = (kv[0] != null) ? kv[0].getBytes(StandardCharsets.UTF_8) : null;
			sent.add(this.producer.send(new ProducerRecord<>(topic, key, kv[1].getBytes(StandardCharsets.UTF_8))));
		}
		this.producer.flush();
		try {
			for (Future<?> future : sent) {
				future.get(SEND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			}
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not send to '" + topic + "'", ex);
		}
	}

	/**
	 * Kills a broker at once (SIGKILL): no controlled shutdown, no leadership handed
	 * over.
	 */
	@Override
	public void kill(int broker) {
		this.brokers.get(broker).kill();
	}

	/**
	 * Starts a killed broker again (same node id, ports and log directory) and waits
	 * until it is registered and every partition is back to its full in-sync replica set,
	 * so that the cluster is as healthy as before the kill.
	 */
	@Override
	public void restart(int broker) {
		Broker restarted = this.brokers.get(broker);
		if (restarted.isAlive()) {
			throw new IllegalStateException("Broker " + restarted.nodeId + " is running; kill it before restarting it");
		}
		restarted.start();
		awaitServing(restarted);
		awaitBrokers(this.brokers.size());
		await("every partition fully in sync").atMost(READY_TIMEOUT)
			.pollInterval(Duration.ofMillis(500))
			.ignoreExceptions()
			.until(() -> underReplicated().isEmpty());
	}

	private List<TopicPartition> underReplicated() throws Exception {
		Set<String> topics = this.admin.listTopics(new ListTopicsOptions().listInternal(true))
			.names()
			.get(10, TimeUnit.SECONDS);
		Map<String, TopicDescription> descriptions = this.admin.describeTopics(topics)
			.allTopicNames()
			.get(10, TimeUnit.SECONDS);
		List<TopicPartition> lagging = new ArrayList<>();
		descriptions.forEach((name, description) -> {
			for (TopicPartitionInfo partition : description.partitions()) {
				if (partition.isr().size() < partition.replicas().size()) {
					lagging.add(new TopicPartition(name, partition.partition()));
				}
			}
		});
		return lagging;
	}

	private void awaitBrokers(int expected) {
		await("brokers registered").atMost(READY_TIMEOUT)
			.pollInterval(Duration.ofMillis(500))
			.ignoreExceptions()
			.failFast("a broker process died; see its log in " + this.directory, this::anyDied)
			.until(() -> this.admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size() == expected);
	}

	/**
	 * Waits until a broker answers on its own listener and the cluster lists it as alive
	 * (registered and not fenced). Asking the cluster alone is not enough: until the
	 * controller notices the kill, it still lists the dead broker.
	 */
	private void awaitServing(Broker broker) {
		Map<String, Object> config = Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.port,
				AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000, AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
				5000);
		try (Admin direct = Admin.create(config)) {
			await("broker " + broker.nodeId + " serving").atMost(READY_TIMEOUT)
				.pollInterval(Duration.ofMillis(500))
				.ignoreExceptions()
				.failFast("broker " + broker.nodeId + " died; see its log in " + this.directory,
						() -> !broker.isAlive())
				.until(() -> direct.describeCluster()
					.nodes()
					.get(5, TimeUnit.SECONDS)
					.stream()
					.anyMatch((node) -> node.id() == broker.nodeId));
		}
	}

	private boolean anyDied() {
		return this.brokers.stream().anyMatch((broker) -> broker.process != null && !broker.isAlive());
	}

	@Override
	public void close() {
		this.producer.close(Duration.ofSeconds(5));
		this.admin.close(Duration.ofSeconds(5));
		destroyAll();
		try {
			Runtime.getRuntime().removeShutdownHook(this.shutdownHook);
		}
		catch (IllegalStateException ex) {
			// the JVM is shutting down already
		}
		try (Stream<Path> paths = Files.walk(this.directory)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			// a temporary directory left behind is harmless
		}
	}

	private void destroyAll() {
		this.brokers.forEach(Broker::kill);
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * One node: its configuration file, log directory and, while it runs, its process.
	 */
	private static final class Broker {

		private final int nodeId;

		private final int port;

		private final Path config;

		private final Path logDir;

		private final Path log;

		private volatile Process process;

		Broker(int nodeId, int port, Path directory) {
			this.nodeId = nodeId;
			this.port = port;
			this.config = directory.resolve("broker-" + nodeId + ".properties");
			this.logDir = directory.resolve("broker-" + nodeId + "-data");
			this.log = directory.resolve("broker-" + nodeId + ".log");
		}

		void writeConfig(int controllerPort, String voters, short replication) throws IOException {
			Map<String, String> properties = new LinkedHashMap<>();
			properties.put("process.roles", "broker,controller");
			properties.put("node.id", Integer.toString(this.nodeId));
			properties.put("controller.quorum.voters", voters);
			properties.put("listeners",
					"PLAINTEXT://127.0.0.1:" + this.port + ",CONTROLLER://127.0.0.1:" + controllerPort);
			properties.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + this.port);
			properties.put("controller.listener.names", "CONTROLLER");
			properties.put("inter.broker.listener.name", "PLAINTEXT");
			properties.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
			properties.put("log.dirs", this.logDir.toString());
			properties.put("default.replication.factor", Short.toString(replication));
			properties.put("min.insync.replicas", Integer.toString(Math.min(2, replication)));
			properties.put("offsets.topic.replication.factor", Short.toString(replication));
			properties.put("transaction.state.log.replication.factor", Short.toString(replication));
			properties.put("transaction.state.log.min.isr", Integer.toString(Math.min(2, replication)));
			properties.put("group.initial.rebalance.delay.ms",
					SharedBroker.BROKER_SETTINGS.get("group.initial.rebalance.delay.ms"));
			properties.put("log.cleaner.backoff.ms", "1000");
			// the consumer protocol's session and heartbeat, as the shared broker has
			// them
			properties.put("group.consumer.session.timeout.ms",
					SharedBroker.BROKER_SETTINGS.get("group.consumer.session.timeout.ms"));
			properties.put("group.consumer.min.session.timeout.ms",
					SharedBroker.BROKER_SETTINGS.get("group.consumer.min.session.timeout.ms"));
			properties.put("group.consumer.heartbeat.interval.ms",
					SharedBroker.BROKER_SETTINGS.get("group.consumer.heartbeat.interval.ms"));
			properties.put("group.consumer.min.heartbeat.interval.ms",
					SharedBroker.BROKER_SETTINGS.get("group.consumer.min.heartbeat.interval.ms"));
			// fewer internal partitions than the default 50: a 2-core machine runs three
			// brokers
			properties.put("offsets.topic.num.partitions", "10");
			properties.put("transaction.state.log.num.partitions", "10");
			String text = properties.entrySet()
				.stream()
				.map((entry) -> entry.getKey() + "=" + entry.getValue())
				.collect(Collectors.joining("\n", "", "\n"));
			Files.writeString(this.config, text);
		}

		/**
		 * Formats the log directory in this JVM: {@code execute} (unlike {@code main})
		 * does not exit.
		 */
		void format(String clusterId) {
			ByteArrayOutputStream output = new ByteArrayOutputStream();
			int exit;
			try (PrintStream print = new PrintStream(output, true, StandardCharsets.UTF_8)) {
				exit = StorageTool.execute(
						new String[] { "format", "--cluster-id", clusterId, "--config", this.config.toString() },
						print);
			}
			if (exit != 0) {
				throw new IllegalStateException(
						"Could not format broker " + this.nodeId + ": " + output.toString(StandardCharsets.UTF_8));
			}
		}

		void start() {
			List<String> command = new ArrayList<>();
			command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
			command.add("-Xmx512m");
			command.add("-cp");
			command.add(System.getProperty("java.class.path"));
			command.add("kafka.Kafka");
			command.add(this.config.toString());
			try {
				this.process = new ProcessBuilder(command).redirectErrorStream(true)
					.redirectOutput(ProcessBuilder.Redirect.appendTo(this.log.toFile()))
					.start();
			}
			catch (IOException ex) {
				throw new IllegalStateException("Could not start broker " + this.nodeId, ex);
			}
		}

		boolean isAlive() {
			return this.process != null && this.process.isAlive();
		}

		void kill() {
			Process running = this.process;
			if (running == null) {
				return;
			}
			running.destroyForcibly();
			try {
				running.waitFor();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
