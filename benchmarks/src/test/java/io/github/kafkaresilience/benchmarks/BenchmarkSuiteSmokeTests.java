package io.github.kafkaresilience.benchmarks;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs every scenario of the suite once at smoke size on one broker, and checks that
 * every contender handled every record and that the windowed throughput, the healthy
 * keys' latencies, the clean keys' latencies in the burst, the cold-start and the delay
 * numbers, the batch listeners' batches, what an outage of every key cost, the latency
 * and the records lost during a rolling restart, the tenants' latencies under a flood,
 * and what a rate limit let through, were measured. No timing is asserted: this proves
 * the suite works, not how fast anything is.
 */
class BenchmarkSuiteSmokeTests {

	private static BenchmarkSettings settings;

	private static BenchmarkSuite.Result result;

	@BeforeAll
	static void runTheSuiteAtSmokeSize() {
		settings = BenchmarkSettings.parse("--smoke", "--output=target/smoke-results.md",
				"--command=mvn verify (BenchmarkSuiteSmokeTests)");
		result = BenchmarkSuite.run(settings);
	}

	@Test
	void everyScenarioRanAndTheReportWasWritten() throws Exception {
		assertThat(result.reports()).extracting(ScenarioReport::id)
			.containsExactly("P1", "P2", "P2W", "P2A", "P3", "P3L", "P3B", "P4", "P5", "P7", "P8", "P9", "P9R", "P10",
					"P10R");
		assertThat(result.output()).exists();
		assertThat(Files.readString(result.output())).contains("## Targets", "## P1", "## P2W", "## P2A", "## P3L",
				"## P3B", "## P5", "## P7", "## P8", "## P10 ", "## P10R ", "Smoke sizes");
	}

	@Test
	void everyContenderHandledEveryRecordInEveryRun() {
		assertThat(result.reports()).flatExtracting(ScenarioReport::completions)
			.isNotEmpty()
			.allSatisfy((completion) -> assertThat(completion.complete())
				.as("%s handled %d of %d records (%s)", completion.contender(), completion.processed(),
						completion.expected(), completion.error())
				.isTrue());
	}

	@Test
	void happyPathRanAllThreeContenders() {
		assertThat(contenders("P1")).containsExactlyInAnyOrder(HappyPathScenario.RAW, HappyPathScenario.PLAIN,
				HappyPathScenario.ORDERED);
	}

	@Test
	void happyPathTookItsMedianWindowForEveryContender() {
		Map<String, Double> measured = report("P1").measured();
		for (String contender : List.of(HappyPathScenario.RAW, HappyPathScenario.PLAIN, HappyPathScenario.ORDERED)) {
			assertThat(measured.get(contender + " records/s")).as(contender).isNotNaN();
		}
	}

	@Test
	void slowHandlerRanEveryContenderOrSaidWhyParallelConsumerWasLeftOut() {
		ScenarioReport report = report("P2");
		assertThat(contenders("P2")).contains(SlowHandlerScenario.ORDERED, SlowHandlerScenario.PLAIN);
		if (!contenders("P2").contains(SlowHandlerScenario.PARALLEL)) {
			assertThat(report.excluded()).containsKey(SlowHandlerScenario.PARALLEL);
			assertThat(report.excluded().get(SlowHandlerScenario.PARALLEL)).isNotBlank();
		}
	}

	@Test
	void ioBoundHandlerRanTheLibraryOnPlatformThreadsAndOnVirtualThreadsWhereTheJvmHasThem() {
		ScenarioReport report = report("P2W");
		List<IoBoundHandlerScenario.Contender> all = IoBoundHandlerScenario
			.contenders(settings.counts("p2w-concurrency"));
		assertThat(contenders("P2W")).contains(all.get(0).name());
		for (IoBoundHandlerScenario.Contender contender : all) {
			switch (contender.kind()) {
				case PLATFORM -> assertThat(report.measured().get(contender.name() + " records/s")).isNotNaN();
				case VIRTUAL -> {
					if (IoBoundHandlerScenario.virtualThreadsAvailable()) {
						assertThat(report.measured().get(contender.name() + " records/s")).as(contender.name())
							.isNotNaN();
					}
					else {
						assertThat(contenders("P2W")).doesNotContain(contender.name());
						assertThat(report.excluded().get(contender.name())).contains("Java 21");
					}
				}
				case PARALLEL -> {
					if (!contenders("P2W").contains(contender.name())) {
						assertThat(report.excluded()).isNotEmpty();
					}
				}
			}
		}
	}

	@Test
	void asyncHandlerRanTheLibrarysFutureAndMonoListenersThePlainOneAndTheOthersOrSaidWhyNot() {
		ScenarioReport report = report("P2A");
		List<AsyncHandlerScenario.Contender> all = AsyncHandlerScenario.contenders(settings.count("p2a-concurrency"),
				settings.count("p2a-in-flight"));
		for (AsyncHandlerScenario.Contender contender : all) {
			switch (contender.kind()) {
				case FUTURE, MONO, PLAIN_FUTURE ->
					assertThat(report.measured().get(contender.name() + " records/s")).as(contender.name()).isNotNaN();
				case VIRTUAL -> {
					if (!IoBoundHandlerScenario.virtualThreadsAvailable()) {
						assertThat(report.excluded().get(contender.name())).contains("Java 21");
					}
					else {
						assertThat(report.measured().get(contender.name() + " records/s")).as(contender.name())
							.isNotNaN();
					}
				}
				case PARALLEL_REACTOR -> {
					if (!contenders("P2A").contains(contender.name())) {
						assertThat(report.excluded().get(contender.name())).isNotBlank();
					}
				}
			}
		}
	}

	@Test
	void failureStormRanTheLibraryRetryableTopicAndTheRawWritesBoundWithAndWithoutFailures() {
		List<String> expected = new ArrayList<>();
		for (String kind : List.of("compensate", "transaction", FailureStormScenario.RETRYABLE,
				FailureStormScenario.RAW)) {
			expected.addAll(FailureStormScenario.contenders(kind));
		}
		assertThat(contenders("P3")).containsExactlyInAnyOrderElementsOf(expected);
	}

	@Test
	void failureStormMeasuredTheCpuOfAFailedRecordAgainstTheRawWritesBound() {
		Map<String, Double> measured = report("P3").measured();
		for (String kind : List.of("compensate", "transaction", FailureStormScenario.RETRYABLE,
				FailureStormScenario.RAW)) {
			assertThat(measured.get(kind + " CPU per failed record µs")).as(kind).isNotNaN();
		}
		assertThat(measured.get("compensate CPU vs raw-writes bound")).isNotNaN();
		assertThat(measured.get("transaction CPU vs raw-writes bound")).isNotNaN();
		assertThat(report("P3").targets()).extracting(ScenarioReport.TargetCheck::target)
			.allMatch((target) -> target.startsWith("CPU per failed record ≤ 1.5× the raw-writes bound"))
			.hasSize(2);
	}

	@Test
	void healthyKeyLatencyTookTheLatencyOfEveryHealthyRecordInTheBaselineAndEveryStorm() {
		assertThat(contenders("P3L")).containsExactlyInAnyOrderElementsOf(HealthyKeyLatencyScenario.CONTENDERS);
		// the records sent while the instance settles have no latency taken; one in n
		// fails
		int from = settings.count("p3l-rate") * settings.count("p3l-settle-seconds");
		int to = from + settings.count("p3l-records");
		int failEvery = settings.count("p3l-fail-every");
		int healthy = (to - from) - (to / failEvery - from / failEvery);
		Map<String, Double> measured = report("P3L").measured();
		for (String contender : HealthyKeyLatencyScenario.CONTENDERS) {
			assertThat(measured.get(contender + " latencies")).as(contender + " latencies").isEqualTo((double) healthy);
			assertThat(measured.get(contender + " p99 ms")).as(contender + " p99").isNotNaN();
		}
	}

	@Test
	void failureBurstTookTheLatencyOfEveryCleanRecordInOrderForEveryContender() {
		assertThat(contenders("P3B")).containsExactlyInAnyOrderElementsOf(FailureBurstScenario.CONTENDERS);
		int clean = settings.count("p3b-clean-keys") * settings.count("p3b-clean-records");
		Map<String, Double> measured = report("P3B").measured();
		for (String contender : FailureBurstScenario.CONTENDERS) {
			assertThat(measured.get(contender + " latencies")).as(contender + " latencies").isEqualTo((double) clean);
			assertThat(measured.get(contender + " p99 ms")).as(contender + " p99").isNotNaN();
			assertThat(measured.get(contender + " first attempts done ms")).as(contender + " first attempts")
				.isNotNaN();
			assertThat(measured.get(contender + " all done ms")).as(contender + " all done").isNotNaN();
			assertThat(measured.get(contender + " out of order")).as(contender + " out of order").isZero();
		}
		// the contenders' results, then the last run's timeline
		assertThat(report("P3B").tables()).hasSize(2);
	}

	@Test
	void coldStartMeasuredTheBarrierAndTheHeap() {
		Map<String, Double> measured = report("P4").measured();
		assertThat(measured.get("cold start ms")).isNotNaN().isPositive();
		assertThat(measured.get("longest barrier wait ms")).isNotNaN();
		assertThat(measured.get("heap bytes per lock")).isNotNaN();
	}

	@Test
	void delayPrecisionMeasuredTheLatenessOfBothStages() {
		Map<String, Double> measured = report("P5").measured();
		for (String stage : List.of("1s", "5s")) {
			assertThat(measured.get(stage + " retries")).as(stage + " retries").isPositive();
			assertThat(measured.get(stage + " p50 ms")).as(stage + " p50").isNotNaN();
			assertThat(measured.get(stage + " p99 ms")).as(stage + " p99").isNotNaN();
		}
	}

	@Test
	void batchListenerRanBothContendersWithAndWithoutFailuresAndTookTheirBatches() {
		List<String> expected = new ArrayList<>();
		for (String kind : BatchListenerScenario.KINDS) {
			expected.addAll(BatchListenerScenario.contenders(kind));
		}
		assertThat(contenders("P7")).containsExactlyInAnyOrderElementsOf(expected);
		Map<String, Double> measured = report("P7").measured();
		for (String contender : expected) {
			assertThat(measured.get(contender + " records/s")).as(contender + " records/s").isNotNaN();
			assertThat(measured.get(contender + " mean batch")).as(contender + " mean batch").isBetween(1.0, 500.0);
			// each failing record fails once, on its first attempt, and every failure is
			// one failed call
			assertThat(measured.get(contender + " failed calls")).as(contender + " failed calls")
				.isEqualTo(contender.endsWith(BatchListenerScenario.FAILING) ? settings.count("p7-failing") : 0.0);
		}
		assertThat(measured.get("library vs plain")).isNotNaN();
		assertThat(measured.get("library with failures vs without")).isNotNaN();
		// the library against the plain listener with nothing failing, the library with
		// failures against without
		assertThat(report("P7").targets()).hasSize(2);
	}

	/** P8 at smoke size: the library with its defaults and the blocking handler. */
	@Test
	void outageTookWhenEveryRecordSentDuringItWasDoneAndCountedTheLibrarysLockRecords() {
		assertThat(contenders("P8")).containsExactlyInAnyOrder(OutageScenario.LIBRARY, OutageScenario.BLOCKING);
		int during = settings.count("p8-rate") * settings.count("p8-outage-seconds");
		Map<String, Double> measured = report("P8").measured();
		for (String contender : List.of(OutageScenario.LIBRARY, OutageScenario.BLOCKING)) {
			assertThat(measured.get(contender + " latencies")).as(contender + " latencies").isEqualTo((double) during);
			assertThat(measured.get(contender + " p99 ms")).as(contender + " p99").isNotNaN();
			assertThat(measured.get(contender + " failed attempts")).as(contender + " failed attempts").isPositive();
			assertThat(measured.get(contender + " out of order")).as(contender + " out of order").isZero();
		}
		assertThat(measured.get(OutageScenario.LIBRARY + " lock records per record")).as("lock records").isNotNaN();
		assertThat(measured.get(OutageScenario.LIBRARY + " dead-lettered")).as("dead-lettered").isZero();
		// two targets for the defaults: the time after the outage, the lock records
		assertThat(report("P8").targets()).hasSize(2);
	}

	/** P9 at smoke size: 1 and 2 instances of a group, on each group protocol. */
	@Test
	void scaleOutRanOneAndTwoInstancesOnEachGroupProtocolWithATargetForTwo() {
		Map<String, Double> measured = report("P9").measured();
		for (String protocol : List.of("classic", "consumer")) {
			for (String instances : List.of("1 instance", "2 instances")) {
				String contender = "@OrderedRetryListener, " + protocol + ", " + instances;
				assertThat(contenders("P9")).contains(contender);
				assertThat(measured.get(contender + " records/s")).as(contender).isNotNaN();
			}
		}
		assertThat(report("P9").targets()).hasSize(2);
	}

	/**
	 * P9R at smoke size: two instances rolled on the classic protocol, for the library
	 * and the plain listener.
	 */
	@Test
	void rollingRestartLostNoRecordAndTookTheLatencyDuringTheRollOfBothContenders() {
		Map<String, Double> measured = report("P9R").measured();
		for (String contender : RollingRestartScenario.CONTENDERS) {
			String name = RollingRestartScenario.contender(contender, "classic");
			assertThat(contenders("P9R")).contains(name);
			assertThat(measured.get(name + " never handled")).as(name + " never handled").isZero();
			assertThat(measured.get(name + " latencies")).as(name + " latencies").isPositive();
			assertThat(measured.get(name + " p99 ms")).as(name + " p99").isNotNaN();
			assertThat(measured.get(name + " roll ms")).as(name + " roll").isPositive();
		}
		// the library's p99 against the plain listener's, on the one protocol
		assertThat(report("P9R").targets()).hasSize(1);
	}

	/**
	 * P10 at smoke size: the library with and without tenants, and Parallel Consumer
	 * unless it cannot run here.
	 */
	@Test
	void fairShareTookTheSteadyTenantsLatenciesCalmAndInTheFloodAndTheFloodersThroughputInOrder() {
		ScenarioReport report = report("P10");
		Map<String, Double> measured = report.measured();
		for (String contender : FairShareScenario.CONTENDERS) {
			if (contender.equals(FairShareScenario.PARALLEL) && !contenders("P10").contains(contender)) {
				assertThat(report.excluded().get(contender)).isNotBlank();
				continue;
			}
			assertThat(contenders("P10")).contains(contender);
			assertThat(measured.get(contender + " calm latencies")).as(contender + " calm latencies").isPositive();
			assertThat(measured.get(contender + " flood latencies")).as(contender + " flood latencies").isPositive();
			assertThat(measured.get(contender + " flood p99 ms")).as(contender + " flood p99").isNotNaN();
			assertThat(measured.get(contender + " calm p99 ms")).as(contender + " calm p99").isNotNaN();
			assertThat(measured.get(contender + " A flood records/s")).as(contender + " flood").isNotNaN();
			assertThat(measured.get(contender + " A alone records/s")).as(contender + " alone").isNotNaN();
			assertThat(measured.get(contender + " out of order")).as(contender + " out of order").isZero();
		}
		// the latency and the throughput of the library with tenants
		assertThat(report.targets()).hasSize(2);
	}

	/** P10R at smoke size: the library's rateLimit and Resilience4j's RateLimiter. */
	@Test
	void rateLimitTookTheRateTheBusiestSecondAndTheCpuOfBothContenders() {
		assertThat(contenders("P10R")).containsExactlyInAnyOrderElementsOf(RateLimitScenario.CONTENDERS);
		Map<String, Double> measured = report("P10R").measured();
		for (String contender : RateLimitScenario.CONTENDERS) {
			assertThat(measured.get(contender + " records/s")).as(contender + " records/s").isPositive();
			assertThat(measured.get(contender + " max in any second")).as(contender + " max in any second")
				.isPositive();
			assertThat(measured.get(contender + " CPU ms/s")).as(contender + " CPU").isNotNaN();
		}
		// the rate, the busiest second and the CPU, of the library
		assertThat(report("P10R").targets()).hasSize(3);
	}

	private static ScenarioReport report(String id) {
		return result.reports().stream().filter((report) -> report.id().equals(id)).findFirst().orElseThrow();
	}

	private static List<String> contenders(String id) {
		return report(id).completions().stream().map(ScenarioReport.Completion::contender).distinct().toList();
	}

}
