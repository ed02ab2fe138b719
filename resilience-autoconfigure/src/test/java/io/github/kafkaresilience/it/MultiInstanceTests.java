package io.github.kafkaresilience.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Several instances in JVMs of their own, killed without any graceful step, on the
 * classic and the {@code consumer} group protocol (KIP-848). Under the latter the broker
 * gives a killed member's partitions to another only when the member's session times out
 * (15 s on the test broker), so a survivor waits that long for them.
 */
@UsesSharedBroker
class MultiInstanceTests {

	@ParameterizedTest(name = "{0} protocol")
	@ValueSource(strings = { "classic", "consumer" })
	void anInstanceKilledWhileAKeyIsMidLadderLeavesItToAnotherThatKeepsTheOrder(String protocol) {
		String topic = SharedBroker.newTopic(3);
		String audit = AuditedApplication.auditTopic(topic);
		SharedBroker.createTopic(audit, 1, Map.of());
		String[] properties = { "kafka.resilience.retry.delays=6s,7s", protocol(protocol) };
		try (InstanceProcess first = InstanceProcess.start(topic, "first", properties)) {
			SharedBroker.send(topic, "k", "k:0:t1");
			await().atMost(Duration.ofSeconds(60))
				.until(() -> audits(topic).stream().anyMatch((a) -> a.value().equals("k:0:t1")));
			SharedBroker.send(topic, "k", "k:1:ok");
			SharedBroker.send(topic, "k", "k:2:ok");
			await().atMost(Duration.ofSeconds(30)).until(() -> ChaosRun.liveLocks(topic) == 3);
			first.kill();
		}
		try (InstanceProcess second = InstanceProcess.start(topic, "second", properties)) {
			await().atMost(Duration.ofSeconds(90))
				.untilAsserted(() -> assertThat(audits(topic).stream()
					.filter(AuditedApplication.Audit::ok)
					.map(AuditedApplication.Audit::value)
					.distinct()).containsExactly("k:0:t1", "k:1:ok", "k:2:ok"));
			assertThat(audits(topic)).filteredOn(AuditedApplication.Audit::ok)
				.extracting(AuditedApplication.Audit::instance)
				.containsOnly("second");
			await().atMost(Duration.ofSeconds(30)).until(() -> ChaosRun.liveLocks(topic) == 0);
		}
	}

	/**
	 * Two instances hold their records through an outage of every key; one is killed
	 * while it holds. Its records were never committed: the survivor takes them over,
	 * holds them too, and once the dependency is back handles every record once, in order
	 * per key, with nothing dead-lettered.
	 */
	@ParameterizedTest(name = "{0} protocol")
	@ValueSource(strings = { "classic", "consumer" })
	void anInstanceKilledWhileHoldingForAnOutageLosesNothing(String protocol) throws IOException {
		String topic = SharedBroker.newTopic(4);
		SharedBroker.createTopic(AuditedApplication.auditTopic(topic), 1, Map.of());
		Path outage = Files.createTempFile("outage-", ".flag");
		String[] properties = { "kafka.resilience.retry.delays=2s,3s", "test.outage-file=" + outage,
				"kafka.resilience.outage.probe-interval=300ms", "kafka.resilience.outage.max-probe-interval=1s",
				protocol(protocol) };
		try (InstanceProcess first = InstanceProcess.start(topic, "first", properties);
				InstanceProcess second = InstanceProcess.start(topic, "second", properties)) {
			await().atMost(Duration.ofSeconds(60)).until(() -> joined(first) && joined(second));
			Map<String, List<String>> sent;
			int total;
			SteadySender sender = new SteadySender(topic, 40, SteadySender.pace(200), "ok");
			try {
				await().atMost(Duration.ofSeconds(60)).until(() -> holding(first) && holding(second));
				long assignments = assignments(second);
				first.kill();
				// the survivor takes over the killed instance's partitions while it holds
				await().atMost(Duration.ofSeconds(30)).until(() -> assignments(second) > assignments);
				// the outage goes on past the whole ladder (2 s + 3 s): nothing is
				// dead-lettered meanwhile
				await().during(Duration.ofSeconds(6))
					.atMost(Duration.ofSeconds(10))
					.until(() -> SharedBroker.readAll(Names.dlq(topic)).isEmpty());
			}
			finally {
				sender.close();
			}
			sent = sender.sentByKey();
			total = sender.sent().size();
			Files.delete(outage);
			await().atMost(Duration.ofSeconds(90))
				.until(() -> audits(topic).stream()
					.filter(AuditedApplication.Audit::ok)
					.map(AuditedApplication.Audit::value)
					.distinct()
					.count() == total);
			Map<String, List<String>> handled = new LinkedHashMap<>();
			audits(topic).stream()
				.filter(AuditedApplication.Audit::ok)
				.map(AuditedApplication.Audit::value)
				.distinct()
				.forEach((value) -> handled
					.computeIfAbsent(value.substring(0, value.indexOf(':')), (key) -> new ArrayList<>())
					.add(value));
			assertThat(handled).as("every record handled, in order per key").isEqualTo(sent);
			assertThat(SharedBroker.readAll(Names.dlq(topic))).as("nothing dead-lettered").isEmpty();
			await().atMost(Duration.ofSeconds(30)).until(() -> ChaosRun.liveLocks(topic) == 0);
		}
	}

	private static String protocol(String protocol) {
		return "spring.kafka.consumer.properties.group.protocol=" + protocol;
	}

	static boolean joined(InstanceProcess instance) throws IOException {
		return assignments(instance) > 0;
	}

	private static long assignments(InstanceProcess instance) throws IOException {
		return Files.readAllLines(instance.log().toPath())
			.stream()
			.filter((line) -> line.contains("' assigned ["))
			.count();
	}

	private static boolean holding(InstanceProcess instance) throws IOException {
		return Files.readString(instance.log().toPath()).contains("holds its records");
	}

	/**
	 * On the {@code consumer} group protocol (KIP-848); the transaction-mode run is on
	 * the classic one.
	 */
	@Test
	void chaosSmokeRunKeepsEveryPromise() throws InterruptedException {
		chaosSmokeRun("spring.kafka.consumer.properties.group.protocol=consumer");
	}

	@Test
	void chaosSmokeRunInTransactionModeKeepsEveryPromise() throws InterruptedException {
		chaosSmokeRun("kafka.resilience.dual-write=transaction");
	}

	/**
	 * With a bound of four records in flight per partition, nearly every poll returns
	 * records past it: they are held back on the poll thread while instances are killed,
	 * restarted and rebalanced, and must still be handled, in order per key, with nothing
	 * lost.
	 */
	@Test
	void chaosSmokeRunWithRecordsHeldBackAtATinyInFlightBoundKeepsEveryPromise() throws InterruptedException {
		chaosSmokeRun("kafka.resilience.consumer.max-in-flight-per-partition=4",
				"spring.kafka.consumer.properties.group.protocol=consumer");
	}

	/**
	 * 1,500 records over 50 keys, 2 instances, one killed and restarted; the seed is
	 * printed with the report, and {@code -Dchaos.seed} replays it.
	 */
	private static void chaosSmokeRun(String... properties) throws InterruptedException {
		long seed = Long.getLong("chaos.seed", System.nanoTime());
		ChaosRun.Report report = ChaosRun
			.run(new ChaosRun.Plan(seed, 1500, 50, 0.05, 0.005, 2, 1, Duration.ofSeconds(120))
				.withProperties(properties));
		System.out.println(report + " " + String.join(" ", properties) + " (replay: -Dchaos.seed=" + seed + ")");
		assertThat(report.violations()).as(report.toString()).isEmpty();
	}

	static List<AuditedApplication.Audit> audits(String topic) {
		return SharedBroker.readAll(AuditedApplication.auditTopic(topic))
			.stream()
			.map(AuditedApplication.Audit::parse)
			.toList();
	}

}
