package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Several instances in JVMs of their own, killed without any graceful step.
 */
@UsesSharedBroker
class MultiInstanceTests {

	@Test
	void anInstanceKilledWhileAKeyIsMidLadderLeavesItToAnotherThatKeepsTheOrder() {
		String topic = SharedBroker.newTopic(3);
		String audit = AuditedApplication.auditTopic(topic);
		SharedBroker.createTopic(audit, 1, Map.of());
		String[] properties = { "kafka.resilience.retry.delays=6s,7s" };
		try (InstanceProcess first = InstanceProcess.start(topic, "first", properties)) {
			SharedBroker.send(topic, "k", "k:0:t1");
			await().atMost(Duration.ofSeconds(60)).until(() -> audits(topic).stream().anyMatch((a) -> a.value().equals("k:0:t1")));
			SharedBroker.send(topic, "k", "k:1:ok");
			SharedBroker.send(topic, "k", "k:2:ok");
			await().atMost(Duration.ofSeconds(30)).until(() -> ChaosRun.liveLocks(topic) == 3);
			first.kill();
		}
		try (InstanceProcess second = InstanceProcess.start(topic, "second", properties)) {
			await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> assertThat(audits(topic).stream()
				.filter(AuditedApplication.Audit::ok)
				.map(AuditedApplication.Audit::value)
				.distinct()).containsExactly("k:0:t1", "k:1:ok", "k:2:ok"));
			assertThat(audits(topic)).filteredOn(AuditedApplication.Audit::ok)
				.extracting(AuditedApplication.Audit::instance)
				.containsOnly("second");
			await().atMost(Duration.ofSeconds(30)).until(() -> ChaosRun.liveLocks(topic) == 0);
		}
	}

	@Test
	void chaosSmokeRunKeepsEveryPromise() throws InterruptedException {
		chaosSmokeRun();
	}

	@Test
	void chaosSmokeRunInTransactionModeKeepsEveryPromise() throws InterruptedException {
		chaosSmokeRun("kafka.resilience.dual-write=transaction");
	}

	/**
	 * With a bound of four records in flight per partition, nearly every poll returns records
	 * past it: they are held back on the poll thread while instances are killed, restarted and
	 * rebalanced, and must still be handled, in order per key, with nothing lost.
	 */
	@Test
	void chaosSmokeRunWithRecordsHeldBackAtATinyInFlightBoundKeepsEveryPromise() throws InterruptedException {
		chaosSmokeRun("kafka.resilience.consumer.max-in-flight-per-partition=4");
	}

	/**
	 * 1,500 records over 50 keys, 2 instances, one killed and restarted; the seed is printed
	 * with the report, and {@code -Dchaos.seed} replays it.
	 */
	private static void chaosSmokeRun(String... properties) throws InterruptedException {
		long seed = Long.getLong("chaos.seed", System.nanoTime());
		ChaosRun.Report report = ChaosRun.run(new ChaosRun.Plan(seed, 1500, 50, 0.05, 0.005, 2, 1, Duration.ofSeconds(120))
			.withProperties(properties));
		System.out.println(report + " " + String.join(" ", properties) + " (replay: -Dchaos.seed=" + seed + ")");
		assertThat(report.violations()).as(report.toString()).isEmpty();
	}

	static List<AuditedApplication.Audit> audits(String topic) {
		return SharedBroker.readAll(AuditedApplication.auditTopic(topic)).stream().map(AuditedApplication.Audit::parse).toList();
	}

}
