package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import org.apache.kafka.clients.producer.ProducerRecord;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * P3, a failure storm: a share of the records fails once, transiently, and goes through
 * the retry ladder while the rest flows. Measures the throughput of the healthy keys
 * during the storm against the same records with nothing failing, and the CPU a failed
 * record costs, in both dual-write modes.
 * <p>
 * Two more contenders run the same storm beside the library. {@code @RetryableTopic} is
 * what an application uses instead: Spring Kafka's retry topics with the same delays,
 * which keep no order of a key. Each of its failures costs about ten milliseconds of CPU
 * or more, and its full storm about two minutes per run, so by default it runs on a tenth
 * of the records, with the same share failing. The raw-writes bound
 * ({@link RawRetryWrites}) makes, with bare clients, the Kafka writes and reads a failure
 * costs the library and nothing else, so the library's CPU per failed record is read
 * against the least any implementation of its protocol pays.
 */
final class FailureStormScenario extends Scenario {

	static final String RETRYABLE = "@RetryableTopic";

	static final String RAW = "raw writes";

	private static final List<String> MODES = List.of("compensate", "transaction");

	/** The library in both modes, then the two contenders beside it. */
	private static final List<String> KINDS = List.of("compensate", "transaction", RETRYABLE, RAW);

	/**
	 * The most the library's CPU per failed record may be, as a multiple of the
	 * raw-writes bound's.
	 */
	private static final double CPU_TARGET = 1.5;

	FailureStormScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	/**
	 * The contenders of one kind: the same records with nothing failing, and the storm.
	 */
	static List<String> contenders(String kind) {
		return List.of(kind + ", no failures", kind + ", storm");
	}

	@Override
	ScenarioReport run() throws Exception {
		int allRecords = this.settings.count("p3-records");
		int allFailing = this.settings.count("p3-failing");
		int partitions = this.settings.count("p3-partitions");
		int keys = this.settings.count("p3-keys");
		int valueBytes = this.settings.count("value-bytes");
		int concurrency = this.settings.count("concurrency");
		String delays = this.settings.text("p3-delays");
		List<Duration> delayList = Arrays.stream(delays.split(","))
			.map(String::trim)
			.map(DurationStyle::detectAndParse)
			.toList();
		int handlerMs = this.settings.count("p3-handler-ms");
		int allHealthy = allRecords - allFailing;
		// @RetryableTopic runs the same storm on fewer records: each of its failures
		// costs about ten
		// milliseconds of CPU or more, and the full storm takes about two minutes per run
		int retryableRecords = this.settings.count("p3-retryable-records");
		int retryableFailing = (int) ((long) allFailing * retryableRecords / allRecords);
		ScenarioReport report = new ScenarioReport("P3", "Failure storm");
		report.setup(String
			.format(Locale.ROOT, "%,d records of %d bytes in %d partitions; %,d of them (evenly spread) fail "
					+ "once with a transient exception and succeed on their retry; each failing record has a key of its own, "
					+ "the %,d healthy records share %,d keys; %s", allRecords, valueBytes, partitions, allFailing,
					allHealthy, keys,
					(handlerMs > 0) ? "the handler sleeps " + handlerMs + " ms on every attempt" : "no-op handler"));
		report.setup("@OrderedRetryListener: " + concurrency + " workers, retry delays " + delays
				+ "; the same records without failures are the baseline of every contender");
		report.setup(String.format(Locale.ROOT, "@RetryableTopic: a @KafkaListener with %d consumers, Spring Kafka's "
				+ "retry topics with the same delays (%d partitions each) and its defaults otherwise; it keeps no order "
				+ "of a key; %s", concurrency, partitions,
				(retryableRecords == allRecords) ? "the same records" : String.format(Locale.ROOT,
						"the same storm on %,d records, %,d of them failing", retryableRecords, retryableFailing)));
		report.setup("raw-writes bound: a bare KafkaConsumer loop calls the handler; for a failed record one producer "
				+ "(acks=all, linger.ms=5) writes the lock as moving, the record to a retry topic and the lock as "
				+ "confirmed, each once the one before is confirmed; a consumer reads the retry record once, runs it when "
				+ "due and writes the lock's tombstone; one tailer reads the lock topic back (first delay only)");
		report
			.setup("healthy throughput: healthy records per second from the first to the last healthy record handled; "
					+ "storm drained: from the first record handled until every failed record succeeded on its retry");

		// one thread calls every handler of the bound: with a handler that sleeps it
		// would take minutes
		String rawUnavailable = (handlerMs > 0)
				? "measured with the no-op handler only: one thread runs every " + "handler call of the bound" : null;
		Map<String, String> unavailable = new LinkedHashMap<>();
		if (rawUnavailable != null) {
			unavailable.put(RAW, rawUnavailable);
		}
		unavailable
			.forEach((kind, reason) -> contenders(kind).forEach((contender) -> report.excluded(contender, reason)));

		List<String> contenders = new ArrayList<>();
		for (String kind : KINDS) {
			if (!unavailable.containsKey(kind)) {
				contenders.addAll(contenders(kind));
			}
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
				String kind = contender.substring(0, contender.indexOf(','));
				String slug = switch (kind) {
					case RETRYABLE -> "retryable";
					case RAW -> "raw";
					default -> kind;
				};
				boolean storm = contender.endsWith("storm");
				int records = kind.equals(RETRYABLE) ? retryableRecords : allRecords;
				int failing = kind.equals(RETRYABLE) ? retryableFailing : allFailing;
				int healthy = records - failing;
				String topic = this.broker.newTopic("p3-" + slug + (storm ? "-storm" : "-calm") + "-" + label(run),
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
				String id = "p3-" + slug + (storm ? "-storm-" : "-calm-") + label(run);
				long[] cpuUsed = { -1 };
				measure(report, contender, run, all, () -> {
					long cpuBefore = processCpuNanos();
					switch (kind) {
						case RETRYABLE -> {
							try (ConfigurableApplicationContext context = ListenerApplications.retryable(
									bootstrapServers(), topic, id, concurrency, delayList, partitions, workload)) {
								await(all);
								cpuUsed[0] = (cpuBefore >= 0) ? processCpuNanos() - cpuBefore : -1;
							}
						}
						case RAW -> {
							try (RawRetryWrites raw = RawRetryWrites.start(this.broker, topic, id, partitions,
									delayList.get(0), workload)) {
								// the bound's work ends with the tailer reading the last
								// tombstone back
								if (raw.await(all, timeout())) {
									raw.awaitLockRecords(storm ? 3L * failing : 0, timeout());
								}
								cpuUsed[0] = (cpuBefore >= 0) ? processCpuNanos() - cpuBefore : -1;
							}
						}
						default -> {
							try (ConfigurableApplicationContext context = ListenerApplications.ordered(
									bootstrapServers(), topic, id, concurrency, workload,
									"kafka.resilience.dual-write=" + kind, "kafka.resilience.retry.delays=" + delays)) {
								await(all);
								cpuUsed[0] = (cpuBefore >= 0) ? processCpuNanos() - cpuBefore : -1;
							}
						}
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

		Map<String, Series> cpuPerFailure = new LinkedHashMap<>();
		for (String kind : KINDS) {
			if (!unavailable.containsKey(kind)) {
				int failed = kind.equals(RETRYABLE) ? retryableFailing : allFailing;
				cpuPerFailure.put(kind, Series.ratio(
						Series.difference(cpuMillis.get(kind + ", storm"), cpuMillis.get(kind + ", no failures")),
						failed / 1000.0));
			}
		}
		Series rawPerFailure = cpuPerFailure.get(RAW);
		List<List<String>> rows = new ArrayList<>();
		for (String kind : KINDS) {
			String name = switch (kind) {
				case RETRYABLE -> RETRYABLE;
				case RAW -> "raw-writes bound";
				default -> ORDERED + ", " + kind;
			};
			if (unavailable.containsKey(kind)) {
				rows.add(List.of(name, "–", "not measured: " + unavailable.get(kind), "–", "–", "–", "–", "–", "–", "–",
						"–"));
				continue;
			}
			Series calm = healthyPerSecond.get(kind + ", no failures");
			Series storm = healthyPerSecond.get(kind + ", storm");
			Series ratio = Series.ratio(storm, calm);
			Series perFailure = cpuPerFailure.get(kind);
			Series vsRaw = (rawPerFailure != null) ? Series.ratio(perFailure, rawPerFailure) : new Series();
			rows.add(List.of(name, Format.perSecond(calm.median()), Format.perSecond(storm.median()),
					storm.runs(Format::count), Format.ratio(ratio.median()),
					Format.seconds(drained.get(kind + ", storm").median()),
					Format.millis(cpuMillis.get(kind + ", no failures").median()) + " / "
							+ Format.millis(cpuMillis.get(kind + ", storm").median()),
					Format.micros(perFailure.median()), kind.equals(RAW) ? "1.00×" : Format.ratio(vsRaw.median()),
					Format.count(attempts.get(kind + ", no failures").median()) + " / "
							+ Format.count(attempts.get(kind + ", storm").median()),
					(handlerMs > 0) ? Format.micros(sleepMicros.get(kind + ", no failures").median()) + " / "
							+ Format.micros(sleepMicros.get(kind + ", storm").median()) : "-"));
			report.measured(kind + " storm/calm", ratio.median());
			report.measured(kind + " CPU per failed record µs", perFailure.median());
			if (!MODES.contains(kind)) {
				continue;
			}
			if (handlerMs > 0) {
				// a handler that costs something leaves the moves room, so the storm may
				// take little of it
				report.target(String.format(Locale.ROOT,
						"healthy keys during the storm ≥ 0.9× without it (%s, %d ms " + "handler)", kind, handlerMs),
						ratio.median(), Format.ratio(ratio.median()), true, 0.9);
			}
			else {
				report.target(
						String.format(Locale.ROOT, "CPU per failed record ≤ %.1f× the raw-writes bound (%s)",
								CPU_TARGET, kind),
						vsRaw.median(), Format.ratio(vsRaw.median()) + " (" + Format.micros(perFailure.median())
								+ " vs " + Format.micros(rawPerFailure.median()) + ")",
						false, CPU_TARGET);
				report.measured(kind + " CPU vs raw-writes bound", vsRaw.median());
			}
		}
		report.table(List.of("contender", "healthy records/s, no failures", "healthy records/s, storm",
				"storm, every run", "storm vs no failures", "storm drained after", "CPU per run, no failures / storm",
				"CPU per failed record", "CPU per failed record vs raw-writes bound",
				"handler calls, no failures / storm", "time of one handler sleep, no failures / storm"), rows);
		Series transactionVsCompensate = Series.ratio(healthyPerSecond.get("transaction, storm"),
				healthyPerSecond.get("compensate, storm"));
		report.note("transaction vs compensate, healthy records/s during the storm: "
				+ Format.ratio(transactionVsCompensate.median()) + " (median of per-run ratios).");
		report.note("CPU: the CPU time of the whole process (the broker, the contender and its clients) from the start "
				+ "of the contender until every record was handled (for the raw-writes bound, until its tailer also read "
				+ "the last tombstone); per failed record: the storm's CPU minus that of the same records without "
				+ "failures, over the failed records (median of per-run values); against the bound: the median of the "
				+ "per-run ratios.");
		report.note("Handler calls: every call of the listener method, retries included. Time of one handler sleep: "
				+ "the mean wall time of the handler's sleep (when it has one), which grows past the sleep asked for when "
				+ "the workers wait for a core on waking.");
		report.note("A failure costs the library a lock write, a publish to the retry topic and the lock's "
				+ "confirmation, made one after the other without holding the worker that ran the record (in transaction "
				+ "mode inside a transaction shared with the other moves under way); its retry costs the release. The "
				+ "raw-writes bound makes these four writes and reads them back, and nothing else.");
		report.note("@RetryableTopic writes one record per failure (to its retry topic, with the failure's stack trace "
				+ "in a header) and no lock, and does not keep a key's records in order. Its default error handler waits "
				+ "for that write, commits the failed record's offset at once and seeks back to the records after it, "
				+ "which the consumer then fetches again; its CPU per failed record is computed over its own failed "
				+ "records.");
		return report;
	}

}
