package io.github.kafkaresilience.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * P3B, a failure burst on a freshly started instance: as soon as a new instance consumes
 * every partition, a burst of records arrives within a quarter of a second. Most of them
 * are on keys of their own and fail once; interleaved with them come the records of a few
 * keys that never fail. Measures how long the clean keys' records wait from production to
 * handling while the instance takes the failures, against Spring Kafka's
 * {@code @RetryableTopic} with the same delays and against the same burst with nothing
 * failing.
 * <p>
 * Unlike P3L, nothing settles first: a new instance has written nothing yet, so the
 * burst's failures are its first writes and it creates its producers while they come in.
 * That start is what this scenario is about, so it is measured, not left out. Each
 * contender of each run is a new Spring application on a new topic; the JVM and the
 * broker are the suite's.
 */
final class FailureBurstScenario extends Scenario {

	/** The library in {@code compensate} mode (its default) during the burst. */
	static final String COMPENSATE = "compensate";

	/** The library in {@code transaction} mode during the burst. */
	static final String TRANSACTION = "transaction";

	/** The baseline: the same records, sent the same way, with nothing failing. */
	static final String BASELINE = "compensate, no failures";

	static final List<String> CONTENDERS = List.of(COMPENSATE, TRANSACTION, RETRYABLE, BASELINE);

	/** The width of one step of the timeline. */
	private static final long STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

	/**
	 * How many steps the report's timeline shows before it sums up the rest in one row.
	 */
	private static final int TIMELINE_STEPS = 50;

	FailureBurstScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	@Override
	ScenarioReport run() throws Exception {
		int failing = this.settings.count("p3b-failing-keys");
		int cleanKeys = this.settings.count("p3b-clean-keys");
		int cleanRecords = this.settings.count("p3b-clean-records");
		int burstMs = this.settings.count("p3b-burst-ms");
		int partitions = this.settings.count("p3b-partitions");
		String delays = this.settings.text("p3b-delays");
		int valueBytes = this.settings.count("value-bytes");
		int concurrency = this.settings.count("concurrency");
		int clean = Math.multiplyExact(cleanKeys, cleanRecords);
		int total = Math.addExact(clean, failing);
		int stages = delays(delays).size();
		int barriers = partitions * (1 + stages);
		ScenarioReport report = new ScenarioReport("P3B", "Failure burst on a freshly started instance");
		report.setup(String
			.format(Locale.ROOT, "a burst of %,d records of %d bytes into %d partitions, sent evenly spread "
					+ "over %d ms: %,d keys send one record each that fails once with a transient exception and succeeds on "
					+ "its retry, and interleaved with them %d clean keys, which never fail, send %,d records each (%,d); "
					+ "no-op handler", total, Math.max(valueBytes, 2 * Long.BYTES), partitions, burstMs, failing,
					cleanKeys, cleanRecords, clean));
		report.setup("fresh: every contender of every run is a new Spring application (a new consumer group on a new "
				+ "topic) started just before its burst, which is the first thing it reads, so it creates its producers "
				+ "during the burst; the JVM and the broker are shared with the contenders before it and with the "
				+ "scenarios run before P3B (alone with --scenarios=P3B, only with P3B's own)"
				+ ((this.settings.warmups() > 0)
						? "; the first " + this.settings.warmups() + " run(s) are unreported " + "warm-ups" : ""));
		report
			.setup("@OrderedRetryListener (compensate, transaction, and the baseline, compensate with the same records "
					+ "and nothing failing): " + concurrency + " workers, retry delays " + delays
					+ "; the burst starts " + "once every partition's sync barrier has opened");
		report.setup(RETRYABLE
				+ ": a plain @KafkaListener with Spring Kafka's non-blocking retries on the same delays (" + stages
				+ " retry topics, one per delay, " + (stages + 1) + " attempts, then a dead-letter topic, each "
				+ "with " + partitions + " partitions like the main topic), set up by a RetryTopicConfiguration bean; "
				+ "concurrency " + concurrency + " in each of its containers (main, retry and dead-letter topics), "
				+ "Spring Boot's and Spring Kafka's defaults otherwise; the burst starts once every container has all "
				+ "its partitions");
		report
			.setup("latency: from just before the producer is handed a clean record (System.nanoTime() carried in its "
					+ "value) until the handler starts on it; p50, p99 and max over every clean record, then the median over "
					+ "runs; a ratio is the median of the per-run ratios of the p99s");
		report.setup("first attempts done, clean done, all done: from the first record of the burst handed to the "
				+ "producer until the last failing record's first attempt started, until the last clean record was "
				+ "handled, until every record had succeeded (the failing ones on their retry); out of order: clean "
				+ "records handled after a later record of their key, which makes the run incomplete");

		Map<String, Series> p50 = new LinkedHashMap<>();
		Map<String, Series> p99 = new LinkedHashMap<>();
		Map<String, Series> max = new LinkedHashMap<>();
		Map<String, Series> firstAttemptsDone = new LinkedHashMap<>();
		Map<String, Series> cleanDone = new LinkedHashMap<>();
		Map<String, Series> allDone = new LinkedHashMap<>();
		Map<String, Series> outOfOrder = new LinkedHashMap<>();
		Map<String, Series> burstTook = new LinkedHashMap<>();
		Map<String, Series> samples = new LinkedHashMap<>();
		for (String contender : CONTENDERS) {
			p50.put(contender, new Series());
			p99.put(contender, new Series());
			max.put(contender, new Series());
			firstAttemptsDone.put(contender, new Series());
			cleanDone.put(contender, new Series());
			allDone.put(contender, new Series());
			outOfOrder.put(contender, new Series());
			burstTook.put(contender, new Series());
			samples.put(contender, new Series());
		}
		Map<String, Timeline> lastTimelines = new LinkedHashMap<>();
		List<String> chosen = List.of(this.settings.text("p3b-contenders").split(","));
		List<String> contenders = CONTENDERS.stream().filter((contender) -> chosen.contains(slug(contender))).toList();
		for (int run : runs(true)) {
			for (String contender : rotated(contenders, run)) {
				boolean fails = !contender.equals(BASELINE);
				String id = "p3b-" + slug(contender) + "-" + label(run);
				String topic = this.broker.newTopic(id, partitions);
				Tally all = new Tally(0, total);
				Latencies latencies = new Latencies(0, clean);
				Timeline timeline = new Timeline(total);
				AtomicLongArray lastIndex = new AtomicLongArray(cleanKeys);
				for (int key = 0; key < cleanKeys; key++) {
					lastIndex.set(key, -1);
				}
				LongAdder disordered = new LongAdder();
				Workload workload = (record) -> {
					long now = System.nanoTime();
					long seq = Records.seq(record.value());
					if (record.topic().equals(topic)) {
						timeline.attempted(seq, now);
						if (seq < clean) {
							latencies.record(seq, now - Records.sentNanos(record.value()));
							// the clean records of a key are sent in the order of their
							// index
							long index = seq / cleanKeys;
							if (lastIndex.getAndAccumulate((int) (seq % cleanKeys), index, Math::max) > index) {
								disordered.increment();
							}
						}
						else if (fails) {
							throw new IllegalStateException("planned transient failure of record " + seq);
						}
					}
					all.record(seq);
				};
				Burst[] burst = { null };
				measure(report, contender, run, all, () -> {
					try (ConfigurableApplicationContext context = start(contender, topic, id, partitions, barriers,
							delays, concurrency, workload)) {
						burst[0] = send(topic, total, clean, cleanKeys, burstMs, valueBytes);
						await(all);
						if (disordered.sum() > 0) {
							throw new IllegalStateException(
									disordered.sum() + " clean records were handled after a later record of their key");
						}
					}
				});
				// a warm-up is logged too: it is the first time the JVM takes a burst
				Latencies.Summary summary = latencies.summary();
				boolean complete = all.isComplete() && disordered.sum() == 0 && burst[0] != null;
				long start = complete ? burst[0].startNanos() : Long.MIN_VALUE;
				double firstAttempts = millisBetween(start, timeline.last(clean, total));
				double cleanHandled = millisBetween(start, timeline.last(0, clean));
				double finished = millisBetween(start, all.lastNanos());
				double sending = (burst[0] != null) ? millisBetween(burst[0].startNanos(), burst[0].endNanos())
						: Double.NaN;
				this.logger
					.info(String.format(Locale.ROOT, "P3B %s %-24s %,d clean records: latency p50 %s, p99 %s, max %s; "
							+ "after the burst's start failing first attempts done %s, clean done %s, all done %s; %d out of "
							+ "order; burst sent in %s", label(run), contender, summary.count(),
							Format.latency(summary.percentileMillis(0.50)),
							Format.latency(summary.percentileMillis(0.99)), Format.latency(summary.maxMillis()),
							Format.millis(firstAttempts), Format.millis(cleanHandled), Format.millis(finished),
							disordered.sum(), Format.millis(sending)));
				if (run > 0) {
					p50.get(contender).add(complete ? summary.percentileMillis(0.50) : Double.NaN);
					p99.get(contender).add(complete ? summary.percentileMillis(0.99) : Double.NaN);
					max.get(contender).add(complete ? summary.maxMillis() : Double.NaN);
					firstAttemptsDone.get(contender).add(firstAttempts);
					cleanDone.get(contender).add(cleanHandled);
					allDone.get(contender).add(finished);
					outOfOrder.get(contender).add(disordered.sum());
					burstTook.get(contender).add(sending);
					samples.get(contender).add(summary.count());
					if (run == this.settings.runs()) {
						lastTimelines.put(contender, timeline);
					}
				}
				this.logger.info(String.format(Locale.ROOT,
						"P3B %s %-24s per 100 ms from the first attempt, failing "
								+ "first attempts/clean records handled: %s",
						label(run), contender, timeline.compact(clean)));
			}
		}

		Series retryable = p99.get(RETRYABLE);
		Series baseline = p99.get(BASELINE);
		List<List<String>> rows = new ArrayList<>();
		for (String contender : CONTENDERS) {
			Series vsRetryable = Series.ratio(p99.get(contender), retryable);
			Series vsBaseline = Series.ratio(p99.get(contender), baseline);
			rows.add(List.of(contender, Format.latency(p50.get(contender).median()),
					Format.latency(p99.get(contender).median()), Format.latency(max.get(contender).median()),
					p99.get(contender).runs(Format::latency), Format.ratio(vsRetryable.median()),
					Format.ratio(vsBaseline.median()), Format.millis(firstAttemptsDone.get(contender).median()),
					Format.millis(cleanDone.get(contender).median()), Format.millis(allDone.get(contender).median()),
					outOfOrder.get(contender).runs(Format::count), Format.millis(burstTook.get(contender).median())));
			if (contender.equals(COMPENSATE) || contender.equals(TRANSACTION)) {
				double median = p99.get(contender).median();
				report.target("clean keys' produce-to-handle p99 during the burst ≤ 100 ms (" + contender + ")", median,
						Format.latency(median), false, 100.0);
				report.target("clean keys' p99 ≤ " + RETRYABLE + "'s in the same burst (" + contender + ")",
						vsRetryable.median(), Format.ratio(vsRetryable.median()) + " (" + Format.latency(median)
								+ " vs " + Format.latency(retryable.median()) + ")",
						false, 1.0);
				report.measured(contender + " p99 vs " + RETRYABLE, vsRetryable.median());
			}
			report.measured(contender + " p50 ms", p50.get(contender).median());
			report.measured(contender + " p99 ms", p99.get(contender).median());
			report.measured(contender + " max ms", max.get(contender).median());
			report.measured(contender + " latencies", samples.get(contender).median());
			report.measured(contender + " first attempts done ms", firstAttemptsDone.get(contender).median());
			report.measured(contender + " all done ms", allDone.get(contender).median());
			report.measured(contender + " out of order", outOfOrder.get(contender).max());
		}
		report
			.table(List.of("contender", "clean latency p50", "clean latency p99", "clean latency max", "p99, every run",
					"p99 vs " + RETRYABLE, "p99 vs compensate, no failures", "failing first attempts done after",
					"clean done after", "all done after", "out of order, every run", "burst sent in"), rows);
		// in the order of the contenders, not of the last run's rotation
		Map<String, Timeline> timelines = new LinkedHashMap<>();
		CONTENDERS.stream()
			.filter(lastTimelines::containsKey)
			.forEach((contender) -> timelines.put(contender, lastTimelines.get(contender)));
		if (!timelines.isEmpty()) {
			report.table(timelineHeader(timelines), timelineRows(timelines, clean));
		}
		report.note("Clean records only in the latency columns, on their first and only attempt. The \"after\" columns "
				+ "count from the first record of the burst handed to the producer; the last of them includes the "
				+ "failing records' retry delay (" + delays(delays).get(0).toMillis() + " ms).");
		report.note("The second table is the last run's timeline: per 100 ms from the contender's first attempt, how "
				+ "many failing records had their first attempt and how many clean records were handled (in the "
				+ "baseline the failing keys' records simply succeed).");
		return report;
	}

	/**
	 * Starts a contender's application and waits until it consumes every partition: every
	 * sync barrier open for the library, every partition assigned for
	 * {@code @RetryableTopic}.
	 */
	private ConfigurableApplicationContext start(String contender, String topic, String id, int partitions,
			int barriers, String delays, int concurrency, Workload workload) throws InterruptedException {
		ConfigurableApplicationContext context;
		boolean ready;
		if (contender.equals(RETRYABLE)) {
			context = ListenerApplications.retryable(bootstrapServers(), topic, id, concurrency, delays(delays),
					partitions, workload);
			ready = awaitReady(context, () -> ListenerApplications.awaitAssignment(context, partitions, timeout()));
		}
		else {
			String mode = contender.equals(TRANSACTION) ? TRANSACTION : COMPENSATE;
			BarrierWatch watch = new BarrierWatch(barriers);
			context = ListenerApplications.ordered(bootstrapServers(), topic, id, concurrency, workload, List.of(watch),
					"kafka.resilience.dual-write=" + mode, "kafka.resilience.retry.delays=" + delays);
			ready = awaitReady(context, () -> watch.await(timeout()));
		}
		if (!ready) {
			context.close();
			throw new IllegalStateException(
					"The instance did not consume every partition within " + timeout().toSeconds() + " s");
		}
		return context;
	}

	/** Waits for an application to be ready, and closes it if the wait is interrupted. */
	private static boolean awaitReady(ConfigurableApplicationContext context, Readiness readiness)
			throws InterruptedException {
		try {
			return readiness.await();
		}
		catch (InterruptedException | RuntimeException ex) {
			context.close();
			throw ex;
		}
	}

	/**
	 * Sends the burst: every record at its due time, evenly spread from the first to the
	 * last over {@code burstMs}, each with the time it was handed to the producer. The
	 * clean records are spread evenly among the failing ones; a clean record's key is its
	 * index modulo the clean keys, so every clean key's records go out in the order of
	 * their index.
	 * @return when the first and the last record were handed to the producer
	 */
	private Burst send(String topic, int total, int clean, int cleanKeys, int burstMs, int valueBytes) {
		// no linger, as in P3L: a record leaves as soon as the previous request is
		// answered
		try (KafkaProducer<byte[], byte[]> producer = this.broker
			.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0))) {
			// the topic's metadata is fetched before the burst, so that no record waits
			// for it
			producer.partitionsFor(topic);
			long burstNanos = TimeUnit.MILLISECONDS.toNanos(burstMs);
			long start = System.nanoTime();
			long last = start;
			int sent = 0;
			while (sent < total) {
				long elapsed = System.nanoTime() - start;
				long due = (burstNanos == 0 || total == 1) ? total
						: Math.min(total, elapsed * (total - 1) / burstNanos + 1);
				for (; sent < due; sent++) {
					long cleanBefore = (long) sent * clean / total;
					boolean isClean = (long) (sent + 1) * clean / total > cleanBefore;
					long seq = isClean ? cleanBefore : clean + (sent - cleanBefore);
					String key = isClean ? "clean-" + (cleanBefore % cleanKeys) : "burst-" + (sent - cleanBefore);
					last = System.nanoTime();
					producer
						.send(new ProducerRecord<>(topic, Records.key(key), Records.timedValue(seq, last, valueBytes)));
				}
				if (sent < total) {
					LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
				}
			}
			producer.flush();
			return new Burst(start, last);
		}
	}

	private static String slug(String contender) {
		return switch (contender) {
			case RETRYABLE -> "retryable";
			case BASELINE -> "calm";
			default -> contender;
		};
	}

	private static List<String> timelineHeader(Map<String, Timeline> timelines) {
		List<String> header = new ArrayList<>();
		header.add("from the first attempt");
		timelines.keySet().forEach((contender) -> header.add(contender + ": failing first attempts / clean records"));
		return header;
	}

	private static List<List<String>> timelineRows(Map<String, Timeline> timelines, int clean) {
		Map<String, long[][]> steps = new LinkedHashMap<>();
		int length = 0;
		for (Map.Entry<String, Timeline> entry : timelines.entrySet()) {
			long[][] counts = entry.getValue().steps(clean);
			steps.put(entry.getKey(), counts);
			length = Math.max(length, counts.length);
		}
		List<List<String>> rows = new ArrayList<>();
		for (int step = 0; step < Math.min(length, TIMELINE_STEPS + 1); step++) {
			boolean rest = step == TIMELINE_STEPS;
			List<String> row = new ArrayList<>();
			long from = step * STEP_NANOS / 1_000_000;
			row.add(rest ? String.format(Locale.ROOT, "%,d ms and later", from)
					: String.format(Locale.ROOT, "%,d–%,d ms", from, from + STEP_NANOS / 1_000_000));
			for (long[][] counts : steps.values()) {
				long failingCount = 0;
				long cleanCount = 0;
				for (int i = step; i < (rest ? counts.length : Math.min(step + 1, counts.length)); i++) {
					failingCount += counts[i][0];
					cleanCount += counts[i][1];
				}
				row.add(Format.count(failingCount) + " / " + Format.count(cleanCount));
			}
			rows.add(row);
		}
		return rows;
	}

	/**
	 * When the first and the last record of a burst were handed to the producer
	 * ({@link System#nanoTime()}).
	 */
	private record Burst(long startNanos, long endNanos) {
	}

	@FunctionalInterface
	private interface Readiness {

		boolean await() throws InterruptedException;

	}

	/**
	 * When each record of a run had its first attempt, for the timeline of the burst.
	 * Lock-free: one slot per record.
	 */
	private static final class Timeline {

		private static final long UNSET = Long.MIN_VALUE;

		private final AtomicLongArray firstAttempt;

		Timeline(int records) {
			this.firstAttempt = new AtomicLongArray(records);
			for (int i = 0; i < records; i++) {
				this.firstAttempt.set(i, UNSET);
			}
		}

		/** Notes the first attempt of record {@code seq}, unless it has one already. */
		void attempted(long seq, long nanos) {
			if (seq >= 0 && seq < this.firstAttempt.length()) {
				this.firstAttempt.compareAndSet((int) seq, UNSET, nanos);
			}
		}

		/**
		 * The latest first attempt of the records {@code from} to {@code to} (exclusive),
		 * or {@code Long.MIN_VALUE} while one of them has none.
		 */
		long last(int from, int to) {
			long last = UNSET;
			for (int i = from; i < to; i++) {
				long attempted = this.firstAttempt.get(i);
				if (attempted == UNSET) {
					return UNSET;
				}
				last = Math.max(last, attempted);
			}
			return last;
		}

		/**
		 * The first attempts per step of 100 ms from the earliest one: for each step,
		 * those of failing records (sequence numbers from {@code clean} on) and those of
		 * clean records.
		 */
		long[][] steps(int clean) {
			long first = Long.MAX_VALUE;
			long last = Long.MIN_VALUE;
			for (int i = 0; i < this.firstAttempt.length(); i++) {
				long attempted = this.firstAttempt.get(i);
				if (attempted != UNSET) {
					first = Math.min(first, attempted);
					last = Math.max(last, attempted);
				}
			}
			if (last == Long.MIN_VALUE) {
				return new long[0][2];
			}
			long[][] steps = new long[(int) ((last - first) / STEP_NANOS) + 1][2];
			for (int i = 0; i < this.firstAttempt.length(); i++) {
				long attempted = this.firstAttempt.get(i);
				if (attempted != UNSET) {
					steps[(int) ((attempted - first) / STEP_NANOS)][(i < clean) ? 1 : 0]++;
				}
			}
			return steps;
		}

		/**
		 * The steps on one line for the log, {@code failing/clean} per step, the steps
		 * after the report's timeline summed up.
		 */
		String compact(int clean) {
			StringJoiner line = new StringJoiner(" ");
			long[][] steps = steps(clean);
			for (int i = 0; i < Math.min(steps.length, TIMELINE_STEPS); i++) {
				line.add(steps[i][0] + "/" + steps[i][1]);
			}
			if (steps.length > TIMELINE_STEPS) {
				long failing = 0;
				long cleanCount = 0;
				for (int i = TIMELINE_STEPS; i < steps.length; i++) {
					failing += steps[i][0];
					cleanCount += steps[i][1];
				}
				line.add(String.format(Locale.ROOT, "and %d/%d in the %d steps after", failing, cleanCount,
						steps.length - TIMELINE_STEPS));
			}
			return line.toString();
		}

	}

}
