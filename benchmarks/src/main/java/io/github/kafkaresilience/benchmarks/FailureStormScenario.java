package io.github.kafkaresilience.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import org.apache.kafka.clients.producer.ProducerRecord;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * P3, a failure storm: a share of the records fails once, transiently, and goes through the
 * retry ladder while the rest flows. Measures the throughput of the healthy keys during the
 * storm against the same records with nothing failing, in both dual-write modes.
 */
final class FailureStormScenario extends Scenario {

	private static final List<String> MODES = List.of("compensate", "transaction");

	FailureStormScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	@Override
	ScenarioReport run() throws Exception {
		int records = this.settings.count("p3-records");
		int failing = this.settings.count("p3-failing");
		int partitions = this.settings.count("p3-partitions");
		int keys = this.settings.count("p3-keys");
		int valueBytes = this.settings.count("value-bytes");
		int concurrency = this.settings.count("concurrency");
		String delays = this.settings.text("p3-delays");
		int handlerMs = this.settings.count("p3-handler-ms");
		int healthy = records - failing;
		ScenarioReport report = new ScenarioReport("P3", "Failure storm");
		report.setup(String.format(Locale.ROOT, "%,d records of %d bytes in %d partitions; %,d of them (evenly spread) fail "
				+ "once with a transient exception and succeed on their retry; each failing record has a key of its own, "
				+ "the %,d healthy records share %,d keys; %s", records, valueBytes, partitions, failing, healthy, keys,
				(handlerMs > 0) ? "the handler sleeps " + handlerMs + " ms on every attempt" : "no-op handler"));
		report.setup("@OrderedRetryListener: " + concurrency + " workers, retry delays " + delays
				+ "; the same records without failures are the baseline");
		report.setup("healthy throughput: healthy records per second from the first to the last healthy record handled; "
				+ "storm drained: from the first record handled until every failed record succeeded on its retry");

		List<String> contenders = new ArrayList<>();
		for (String mode : MODES) {
			contenders.add(mode + ", no failures");
			contenders.add(mode + ", storm");
		}
		Map<String, Series> healthyPerSecond = new LinkedHashMap<>();
		Map<String, Series> drained = new LinkedHashMap<>();
		Map<String, Series> cpuMillis = new LinkedHashMap<>();
		Map<String, Series> attempts = new LinkedHashMap<>();
		Map<String, Series> sleepMicros = new LinkedHashMap<>();
		contenders.forEach((contender) -> {
			healthyPerSecond.put(contender, new Series());
			drained.put(contender, new Series());
			cpuMillis.put(contender, new Series());
			attempts.put(contender, new Series());
			sleepMicros.put(contender, new Series());
		});
		for (int run : runs(true)) {
			for (String contender : rotated(contenders, run)) {
				String mode = contender.substring(0, contender.indexOf(','));
				boolean storm = contender.endsWith("storm");
				String topic = this.broker.newTopic("p3-" + mode + (storm ? "-storm" : "-calm") + "-" + label(run),
						partitions);
				this.broker.fill(records, (i) -> {
					long failingBefore = (long) i * failing / records;
					boolean fails = ((long) (i + 1) * failing / records) > failingBefore;
					long seq = fails ? healthy + failingBefore : i - failingBefore;
					String key = fails ? "storm-" + failingBefore : "key-" + (seq % keys);
					return new ProducerRecord<>(topic, Records.key(key), Records.value(seq, valueBytes));
				});
				Tally all = new Tally(0, records);
				Tally healthyTally = new Tally(0, healthy);
				Tally failingTally = new Tally(healthy, failing);
				LongAdder calls = new LongAdder();
				LongAdder slept = new LongAdder();
				Workload workload = (record) -> {
					long seq = Records.seq(record.value());
					calls.increment();
					if (handlerMs > 0) {
						long start = System.nanoTime();
						Thread.sleep(handlerMs);
						slept.add(System.nanoTime() - start);
					}
					if (storm && seq >= healthy && record.topic().equals(topic)) {
						throw new IllegalStateException("planned transient failure of record " + seq);
					}
					healthyTally.record(seq);
					failingTally.record(seq);
					all.record(seq);
				};
				String id = "p3-" + mode + (storm ? "-storm-" : "-calm-") + label(run);
				long[] cpuUsed = { -1 };
				measure(report, contender, run, all, () -> {
					long cpuBefore = processCpuNanos();
					try (ConfigurableApplicationContext context = ListenerApplications.ordered(bootstrapServers(), topic, id,
							concurrency, workload, "kafka.resilience.dual-write=" + mode,
							"kafka.resilience.retry.delays=" + delays)) {
						await(all);
						cpuUsed[0] = (cpuBefore >= 0) ? processCpuNanos() - cpuBefore : -1;
					}
				});
				if (run > 0) {
					boolean complete = all.isComplete();
					healthyPerSecond.get(contender).add(complete ? healthyTally.perSecond() : Double.NaN);
					drained.get(contender)
						.add(complete ? millisBetween(Math.min(healthyTally.firstNanos(), all.firstNanos()),
								failingTally.lastNanos()) : Double.NaN);
					cpuMillis.get(contender).add((complete && cpuUsed[0] >= 0) ? cpuUsed[0] / 1e6 : Double.NaN);
					attempts.get(contender).add(complete ? calls.sum() : Double.NaN);
					sleepMicros.get(contender)
						.add((complete && handlerMs > 0) ? slept.sum() / 1e3 / calls.sum() : Double.NaN);
				}
			}
		}

		List<List<String>> rows = new ArrayList<>();
		for (String mode : MODES) {
			Series calm = healthyPerSecond.get(mode + ", no failures");
			Series storm = healthyPerSecond.get(mode + ", storm");
			Series ratio = Series.ratio(storm, calm);
			Series cpuPerFailure = Series.ratio(Series.difference(cpuMillis.get(mode + ", storm"),
					cpuMillis.get(mode + ", no failures")), failing / 1000.0);
			rows.add(List.of(mode, Format.perSecond(calm.median()), Format.perSecond(storm.median()),
					storm.runs(Format::count), Format.ratio(ratio.median()),
					Format.seconds(drained.get(mode + ", storm").median()),
					Format.millis(cpuMillis.get(mode + ", no failures").median()) + " / "
							+ Format.millis(cpuMillis.get(mode + ", storm").median()),
					Format.micros(cpuPerFailure.median()),
					Format.count(attempts.get(mode + ", no failures").median()) + " / "
							+ Format.count(attempts.get(mode + ", storm").median()),
					(handlerMs > 0) ? Format.micros(sleepMicros.get(mode + ", no failures").median()) + " / "
							+ Format.micros(sleepMicros.get(mode + ", storm").median()) : "-"));
			// a handler that costs something leaves the moves room, so more is asked of the storm then
			double target = (handlerMs > 0) ? 0.9 : 0.8;
			report.target(String.format(Locale.ROOT, "healthy keys during the storm ≥ %.1f× without it (%s%s)", target, mode,
					(handlerMs > 0) ? ", " + handlerMs + " ms handler" : ""), ratio.median(), Format.ratio(ratio.median()),
					true, target);
			report.measured(mode + " storm/calm", ratio.median());
		}
		report.table(List.of("dual-write", "healthy records/s, no failures", "healthy records/s, storm",
				"storm, every run", "storm vs no failures", "storm drained after",
				"CPU per run, no failures / storm", "CPU per failed record", "handler calls, no failures / storm",
				"time of one handler sleep, no failures / storm"), rows);
		Series transactionVsCompensate = Series.ratio(healthyPerSecond.get("transaction, storm"),
				healthyPerSecond.get("compensate, storm"));
		report.note("transaction vs compensate, healthy records/s during the storm: "
				+ Format.ratio(transactionVsCompensate.median()) + " (median of per-run ratios).");
		report.note("CPU: the CPU time of the whole process (the broker, the instance and its clients) from the start "
				+ "of the instance until every record was handled; per failed record: the storm's CPU minus that of the "
				+ "same records without failures, over the failed records (median of per-run values).");
		report.note("Handler calls: every call of the listener method, retries included. Time of one handler sleep: "
				+ "the mean wall time of the handler's sleep (when it has one), which grows past the sleep asked for when "
				+ "the workers wait for a core on waking.");
		report.note("A failure costs a lock write, a publish to the retry topic and the lock's confirmation, made one "
				+ "after the other without holding the worker that ran the record (in transaction mode inside a "
				+ "transaction shared with the other moves under way); its retry costs the release.");
		return report;
	}

}
