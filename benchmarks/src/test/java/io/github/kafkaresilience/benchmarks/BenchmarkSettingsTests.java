package io.github.kafkaresilience.benchmarks;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The options of a suite run: a list option takes {@code ,} between its values, where a
 * count takes it between digits.
 */
class BenchmarkSettingsTests {

	@Test
	void theIoBoundScenarioRunsByDefaultAtTwoConcurrencies() {
		BenchmarkSettings settings = BenchmarkSettings.parse();
		assertThat(settings.scenarios()).contains("P2W");
		assertThat(settings.counts("p2w-concurrency")).containsExactly(256, 2000);
		assertThat(settings.count("p2w-records")).isEqualTo(100_000);
	}

	@Test
	void smokeSizesAreSmaller() {
		BenchmarkSettings settings = BenchmarkSettings.parse("--smoke");
		assertThat(settings.counts("p2w-concurrency")).allMatch((concurrency) -> concurrency < 256);
		assertThat(settings.count("p2w-records")).isLessThan(100_000);
		assertThat(settings.count("p3-retryable-records")).isLessThanOrEqualTo(settings.count("p3-records"));
	}

	@Test
	void aListOptionTakesCommasBetweenItsValuesAndSuffixesInThem() {
		BenchmarkSettings settings = BenchmarkSettings.parse("--p2w-concurrency=64, 1k,2_000");
		assertThat(settings.counts("p2w-concurrency")).containsExactly(64, 1000, 2000);
		assertThat(BenchmarkSettings.parse("--p2w-records=30k").count("p2w-records")).isEqualTo(30_000);
	}

	@Test
	void aConcurrencyBelowOneIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("--p2w-concurrency=256,0"))
			.withMessageContaining("--p2w-concurrency");
	}

	@Test
	void theOutageScenarioRunsByDefaultWithATenSecondOutageUnderTwoThousandRecordsASecond() {
		BenchmarkSettings settings = BenchmarkSettings.parse();
		assertThat(settings.scenarios()).contains("P8");
		assertThat(settings.count("p8-rate")).isEqualTo(2_000);
		assertThat(settings.count("p8-outage-seconds")).isEqualTo(10);
		assertThat(settings.count("p8-outage-start-seconds") + settings.count("p8-outage-seconds"))
			.isLessThan(settings.count("p8-seconds"));
		assertThat(settings.count("p8-keys")).isEqualTo(40);
		assertThat(Scenario.delays(settings.text("p8-delays"))).hasSize(3);
	}

	@Test
	void smokeSizesShortenTheOutage() {
		BenchmarkSettings settings = BenchmarkSettings.parse("--smoke");
		assertThat(settings.scenarios()).contains("P8");
		assertThat(settings.count("p8-seconds")).isLessThan(20);
		assertThat(settings.count("p8-outage-seconds")).isLessThan(10);
		assertThat(settings.count("p8-rate")).isLessThan(2_000);
	}

	@Test
	void anOutageThatEndsAfterTheSendingIsRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> BenchmarkSettings.parse("--p8-seconds=12", "--p8-outage-start-seconds=3"))
			.withMessageContaining("--p8-seconds");
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("--p8-outage-seconds=0"))
			.withMessageContaining("--p8-outage-seconds");
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("--p8-delays=2s,soon"))
			.withMessageContaining("--p8-delays");
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("--p8-contenders=defaults,fast"))
			.withMessageContaining("'fast'")
			.withMessageContaining("defaults, no-ramp, backing-off, blocking");
	}

	@Test
	void theBatchListenerScenarioRunsByDefaultOnAMillionRecordsWithOnePercentFailing() {
		BenchmarkSettings settings = BenchmarkSettings.parse();
		assertThat(settings.scenarios()).contains("P7");
		assertThat(settings.count("p7-records")).isEqualTo(1_000_000);
		assertThat(settings.count("p7-failing")).isEqualTo(10_000);
		assertThat(settings.count("p7-partitions")).isEqualTo(6);
		assertThat(settings.count("p7-concurrency")).isEqualTo(6);
		assertThat(settings.count("p7-call-ms")).isEqualTo(5);
		assertThat(settings.count("p7-record-micros")).isEqualTo(10);
		assertThat(Scenario.delays(settings.text("p7-delays"))).hasSize(1);
		BenchmarkSettings smoke = BenchmarkSettings.parse("--smoke");
		assertThat(smoke.scenarios()).contains("P7");
		assertThat(smoke.count("p7-records")).isLessThan(10_000);
		assertThat(smoke.count("p7-failing")).isPositive().isLessThan(smoke.count("p7-records"));
	}

	@Test
	void theBatchListenerScenarioRefusesMoreFailingRecordsThanRecords() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> BenchmarkSettings.parse("--p7-records=1000", "--p7-failing=1000"))
			.withMessageContaining("--p7-failing");
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("--p7-concurrency=0"))
			.withMessageContaining("--p7-concurrency");
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("--p7-delays=1s,later"))
			.withMessageContaining("--p7-delays");
	}

	@Test
	void theRollingRestartScenarioRollsThreeInstancesUnderTwoThousandRecordsASecondOnBothProtocols() {
		BenchmarkSettings settings = BenchmarkSettings.parse();
		assertThat(settings.scenarios()).contains("P9R");
		assertThat(settings.count("p9r-instances")).isEqualTo(3);
		assertThat(settings.count("p9r-partitions")).isEqualTo(4);
		assertThat(settings.count("p9r-rate")).isEqualTo(2_000);
		assertThat(settings.text("p9r-protocols")).isEqualTo("classic,consumer");
		assertThat(Scenario.delays(settings.text("p9r-delays"))).hasSize(2);
		BenchmarkSettings smoke = BenchmarkSettings.parse("--smoke");
		assertThat(smoke.scenarios()).contains("P9R");
		assertThat(smoke.count("p9r-rate")).isLessThan(2_000);
		assertThat(smoke.text("p9r-protocols")).isEqualTo("classic");
	}

	@Test
	void theRollingRestartScenarioRefusesAGroupItCannotRollOrMeasure() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> BenchmarkSettings.parse("--p9r-instances=5", "--p9r-partitions=4"))
			.withMessageContaining("--p9r-partitions");
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("--p9r-flaky-every=1"))
			.withMessageContaining("--p9r-flaky-every");
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("--p9r-protocols=classic,eager"))
			.withMessageContaining("--p9r-protocols");
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("--p9r-delays=1s,soon"))
			.withMessageContaining("--p9r-delays");
	}

	@Test
	void theFairShareScenarioFloodsTwoHundredThousandRecordsPastFourTenantsOfFiftyRecordsASecond() {
		BenchmarkSettings settings = BenchmarkSettings.parse();
		assertThat(settings.scenarios()).contains("P10", "P10R");
		assertThat(settings.count("p10-flood-records")).isEqualTo(200_000);
		assertThat(settings.count("p10-tenant-rate")).isEqualTo(50);
		assertThat(settings.count("p10-handler-ms")).isEqualTo(2);
		assertThat(settings.count("p10-workers")).isEqualTo(16);
		assertThat(settings.count("p10r-records")).isEqualTo(20_000);
		assertThat(settings.count("p10r-rate")).isEqualTo(500);
		BenchmarkSettings smoke = BenchmarkSettings.parse("--smoke");
		assertThat(smoke.scenarios()).contains("P10", "P10R");
		assertThat(smoke.count("p10-flood-records")).isLessThan(200_000);
		assertThat(smoke.count("p10r-records")).isLessThan(20_000);
	}

	@Test
	void theFairShareAndRateLimitScenariosRefuseSizesTheyCannotRun() {
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("--p10-tenant-rate=0"))
			.withMessageContaining("--p10-tenant-rate");
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkSettings.parse("--p10r-rate=5"))
			.withMessageContaining("--p10r-period-ms");
	}

	@Test
	void retryableTopicCannotRunOnMoreRecordsThanTheStorm() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> BenchmarkSettings.parse("--p3-records=10k", "--p3-retryable-records=20k"))
			.withMessageContaining("--p3-retryable-records");
	}

}
