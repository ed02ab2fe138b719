package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The long chaos run, only in the {@code chaos} Maven profile
 * ({@code mvn -B verify -Pchaos -pl resilience-autoconfigure}): 100,000 records over 1,000
 * keys, 5 % transient and 0.5 % permanent failures, 3 instances, 2 hard kills, one run per
 * seed of {@code -Dchaos.seeds=1,2,3,4,5}.
 */
class ChaosSuiteTests {

	@Test
	void fullChaosRunsKeepEveryPromise() throws InterruptedException {
		List<Long> seeds = Arrays.stream(System.getProperty("chaos.seeds", "1,2,3,4,5").split(","))
			.map(String::trim)
			.map(Long::parseLong)
			.toList();
		int records = Integer.getInteger("chaos.records", 100_000);
		for (long seed : seeds) {
			ChaosRun.Report report = ChaosRun.run(new ChaosRun.Plan(seed, records, 1000, 0.05, 0.005, 3, 2, Duration.ofMinutes(15)));
			System.out.println(report);
			assertThat(report.violations()).as(report.toString()).isEmpty();
		}
	}

}
