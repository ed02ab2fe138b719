package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The long chaos runs, only in the {@code chaos} Maven profile
 * ({@code mvn -B verify -Pchaos -pl resilience-autoconfigure}): 100,000 records over
 * 1,000 keys, 5 % transient and 0.5 % permanent failures, 3 instances, 2 hard kills, one
 * run per seed of {@code -Dchaos.seeds=1,2,3,4,5} and group protocol of
 * {@code -Dchaos.protocols=classic,consumer}; on the shared broker and on a cluster of
 * three broker processes (replication factor 3) one of which is killed and restarted
 * mid-run, each in both dual-write modes. {@code -Dchaos.records} shortens a run,
 * {@code -Dchaos.timeout-minutes} changes how long one may take.
 */
class ChaosSuiteTests {

	@Test
	@UsesSharedBroker
	void fullChaosRunsKeepEveryPromise() throws InterruptedException {
		for (ChaosRun.Plan plan : plans(timeout(15))) {
			ChaosRun.Report report = ChaosRun.run(plan);
			System.out.println(report + " " + plan.properties());
			assertThat(report.violations()).as(report.toString()).isEmpty();
		}
	}

	@Test
	@UsesSharedBroker
	void fullChaosRunsInTransactionModeKeepEveryPromise() throws InterruptedException {
		for (ChaosRun.Plan plan : plans(timeout(15))) {
			ChaosRun.Report report = ChaosRun.run(plan.withProperties("kafka.resilience.dual-write=transaction"));
			System.out.println(report + " " + plan.properties() + " dual-write=transaction");
			assertThat(report.violations()).as(report.toString()).isEmpty();
		}
	}

	@Test
	void fullChaosRunsOnAThreeBrokerClusterKeepEveryPromiseWhenABrokerIsKilledAndRestarted()
			throws InterruptedException {
		try (KafkaCluster cluster = KafkaCluster.start(3)) {
			for (ChaosRun.Plan each : plans(timeout(30))) {
				ChaosRun.Plan plan = each.withBrokerKills(1)
					.withProperties("kafka.resilience.topics.replication-factor=3");
				ChaosRun.Report report = ChaosRun.run(plan, cluster);
				System.out.println(report + " " + plan.properties());
				assertThat(report.violations()).as(report.toString()).isEmpty();
			}
		}
	}

	@Test
	void fullChaosRunsInTransactionModeOnAThreeBrokerClusterKeepEveryPromiseWhenABrokerIsKilledAndRestarted()
			throws InterruptedException {
		try (KafkaCluster cluster = KafkaCluster.start(3)) {
			for (ChaosRun.Plan each : plans(timeout(30))) {
				ChaosRun.Plan plan = each.withBrokerKills(1)
					.withProperties("kafka.resilience.topics.replication-factor=3",
							"kafka.resilience.dual-write=transaction");
				ChaosRun.Report report = ChaosRun.run(plan, cluster);
				System.out.println(report + " " + plan.properties());
				assertThat(report.violations()).as(report.toString()).isEmpty();
			}
		}
	}

	/** One plan per group protocol and seed, each protocol's seeds in turn. */
	private static List<ChaosRun.Plan> plans(Duration timeout) {
		int records = Integer.getInteger("chaos.records", 100_000);
		List<ChaosRun.Plan> plans = new ArrayList<>();
		for (String protocol : System.getProperty("chaos.protocols", "classic,consumer").split(",")) {
			for (long seed : seeds()) {
				plans.add(new ChaosRun.Plan(seed, records, 1000, 0.05, 0.005, 3, 2, timeout)
					.withProperties("spring.kafka.consumer.properties.group.protocol=" + protocol.trim()));
			}
		}
		return plans;
	}

	/**
	 * How long a run may take after production: {@code -Dchaos.timeout-minutes} or the
	 * default.
	 */
	private static Duration timeout(int defaultMinutes) {
		return Duration.ofMinutes(Integer.getInteger("chaos.timeout-minutes", defaultMinutes));
	}

	private static List<Long> seeds() {
		return Arrays.stream(System.getProperty("chaos.seeds", "1,2,3,4,5").split(","))
			.map(String::trim)
			.map(Long::parseLong)
			.toList();
	}

}
