package io.github.kafkaresilience.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.KafkaException;
import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.kafka.listener.DefaultErrorHandler;

/**
 * P7, a batch listener: a method that takes a {@code List} of records and costs a fixed
 * time per call plus a little per record, as a bulk insert does. The library's
 * {@code @OrderedRetryListener(batch = "true")} against a plain
 * {@code @KafkaListener(batch = "true")} with Spring Kafka's {@code DefaultErrorHandler},
 * both with nothing failing and with a share of the records failing once.
 * <p>
 * Both methods name a failed record as a user of {@code DefaultErrorHandler} does, with a
 * {@code BatchListenerFailedException} carrying its index: the records before it
 * succeeded, those after it did not run. The plain listener's error handler commits the
 * records before it and polls again from it, so its partition waits for the failed
 * record; the library moves the failed record to its retry stage, where it succeeds,
 * while the records after it join a later batch. The cost of a call is parked, not spun,
 * so that the contenders' threads leave the two cores to the broker and the clients as a
 * call to a database would.
 */
final class BatchListenerScenario extends Scenario {

	static final String LIBRARY = ORDERED + "(batch)";

	static final String BLOCKING = PLAIN + "(batch) + DefaultErrorHandler";

	static final List<String> KINDS = List.of(LIBRARY, BLOCKING);

	static final String CALM = ", no failures";

	static final String FAILING = ", failing once";

	/**
	 * The most records of one call in both contenders: the library's {@code batch-size}
	 * and the Kafka consumer's {@code max.poll.records}, each at its default. Only the
	 * ideal uses it.
	 */
	private static final int DEFAULT_BATCH = 500;

	private static final String RECORDS_PER_SECOND = "records/s";

	private static final String HEALTHY_PER_SECOND = "records that never fail, records/s";

	private static final String MEAN_BATCH = "mean batch";

	private static final String CALLS = "calls";

	private static final String FAILED_CALLS = "failed calls";

	private static final String CALLS_PER_SECOND = "calls/s";

	private static final String GOT_PER_RECORD = "records got per record";

	private static final String MEAN_CALL_MS = "mean call ms";

	private static final String SLOTS_BUSY = "call slots busy";

	private static final String GAP_AFTER_SUCCEEDED_MS = "gap after a call that succeeded ms";

	private static final String GAP_AFTER_FAILED_MS = "gap after a call that failed ms";

	private static final String CORES_BUSY = "cores busy";

	private static final String AT_ONCE = "calls at once at most";

	BatchListenerScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	/** The contenders of one kind: every record succeeding, and a share failing once. */
	static List<String> contenders(String kind) {
		return List.of(kind + CALM, kind + FAILING);
	}

	@Override
	ScenarioReport run() throws Exception {
		int records = this.settings.count("p7-records");
		int failing = this.settings.count("p7-failing");
		int partitions = this.settings.count("p7-partitions");
		int keys = this.settings.count("p7-keys");
		int valueBytes = this.settings.count("value-bytes");
		int concurrency = this.settings.count("p7-concurrency");
		long callNanos = this.settings.count("p7-call-ms") * 1_000_000L;
		long recordNanos = this.settings.count("p7-record-micros") * 1_000L;
		String delays = this.settings.text("p7-delays");
		int healthy = records - failing;
		String share = percent(failing, records);
		double fullCallMillis = (callNanos + recordNanos * DEFAULT_BATCH) / 1e6;
		double ideal = concurrency * DEFAULT_BATCH / (fullCallMillis / 1000);
		// a call names one failed record at most: every failing record ends a call of its
		// own
		long leastCalls = Math.max(failing, ((long) records + failing + DEFAULT_BATCH - 1) / DEFAULT_BATCH);
		double idealFailing = records
				/ ((leastCalls * callNanos + ((long) records + failing) * recordNanos) / 1e9 / concurrency);
		ScenarioReport report = new ScenarioReport("P7",
				"Batch listener: a bulk insert of " + this.settings.count("p7-call-ms") + " ms + "
						+ this.settings.count("p7-record-micros") + " µs per record");
		report.setup(String.format(Locale.ROOT, "%,d records of %d bytes in %d partitions; with failures, %,d of them "
				+ "(%s, evenly spread, each on a key of its own) fail once, on their first attempt, and succeed on the "
				+ "next; the %,d others share %,d keys; one topic, read by every contender and run in a consumer group "
				+ "of its own", records, valueBytes, partitions, failing, share, healthy, keys));
		report
			.setup(String.format(Locale.ROOT, "every call of the method costs %d ms + %d µs per record it got, parked "
					+ "(LockSupport.parkNanos), not spinning, whether it fails or not; it names a failed record with "
					+ "BatchListenerFailedException(index): the records before it succeeded, those after it did not run",
					callNanos / 1_000_000, recordNanos / 1_000));
		report.setup(String.format(Locale.ROOT, "%s: %d workers (the calls that can run at once), batch-size, "
				+ "batch-wait and batch-failure at their defaults (500, 0, bisect), retry delays %s: a failed record "
				+ "moves to the retry stage and succeeds there", LIBRARY, concurrency, delays));
		report.setup(String.format(Locale.ROOT, "%s: @KafkaListener(batch = \"true\") from Spring Boot's "
				+ "ConcurrentKafkaListenerContainerFactory made a batch factory, %d consumers, max.poll.records 500 "
				+ "(Kafka's default), a DefaultErrorHandler with its default back-off (no delay, 9 retries) that logs at "
				+ "DEBUG: it commits the records before the failed one and polls again from it, which then succeeds; "
				+ "its partition waits meanwhile; started paused until each consumer has partitions of its own",
				BLOCKING, concurrency));
		report.setup(String.format(Locale.ROOT, "throughput: records per second from the first record handled to the "
				+ "one that completed the set, retries included; ideal: %d calls at once × %d records per %.2f ms = "
				+ "%,.0f records/s", concurrency, DEFAULT_BATCH, fullCallMillis, ideal));
		report.setup(String.format(Locale.ROOT, "ideal with failures: a call can name one failed record, so every "
				+ "failing record ends a call of its own: at least %,d calls, which get the %,d records and the %,d "
				+ "retries between them, over %d calls at once = %,.0f records/s (the retry delay not counted)",
				leastCalls, records, failing, concurrency, idealFailing));

		String topic = this.broker.newTopic("p7", partitions);
		long filling = System.nanoTime();
		// the layout of P3: the failing records have the last sequence numbers, keys of
		// their own
		this.broker.fill(records, (i) -> {
			long failingBefore = (long) i * failing / records;
			boolean fails = ((long) (i + 1) * failing / records) > failingBefore;
			long seq = fails ? healthy + failingBefore : i - failingBefore;
			String key = fails ? "fails-" + failingBefore : "key-" + (seq % keys);
			return new ProducerRecord<>(topic, Records.key(key), Records.value(seq, valueBytes));
		});
		this.logger.info(String.format(Locale.ROOT, "P7 wrote %,d records in %,.0f ms", records,
				(System.nanoTime() - filling) / 1e6));

		List<String> contenders = new ArrayList<>();
		KINDS.forEach((kind) -> contenders.addAll(contenders(kind)));
		// every measure of every contender, one value per measured run
		Map<String, Map<String, Series>> measures = new LinkedHashMap<>();
		for (int run : runs(true)) {
			for (String contender : rotated(contenders, run)) {
				boolean library = contender.startsWith(LIBRARY);
				boolean failures = contender.endsWith(FAILING);
				Tally all = new Tally(0, records);
				Tally healthyTally = new Tally(0, healthy);
				Tally failedOnce = new Tally(healthy, failing);
				Calls probe = new Calls();
				BatchWorkload workload = (batch) -> {
					long started = probe.started();
					try {
						park(callNanos + recordNanos * batch.size());
					}
					finally {
						probe.ended(started, batch.size());
					}
					int failedAt = -1;
					if (failures) {
						for (int i = 0; i < batch.size(); i++) {
							long seq = Records.seq(batch.get(i).value());
							// a failing record fails the first time it runs, whichever
							// topic it came from
							if (seq >= healthy && failedOnce.record(seq)) {
								failedAt = i;
								break;
							}
						}
					}
					int succeeded = (failedAt >= 0) ? failedAt : batch.size();
					for (int i = 0; i < succeeded; i++) {
						long seq = Records.seq(batch.get(i).value());
						healthyTally.record(seq);
						all.record(seq);
					}
					if (failedAt >= 0) {
						probe.failedCall();
						ConsumerRecord<byte[], byte[]> record = batch.get(failedAt);
						String message = "planned transient failure of record " + Records.seq(record.value());
						throw new BatchListenerFailedException(message, new IllegalStateException(message), failedAt);
					}
				};
				String id = "p7-" + (library ? "ordered" : "plain") + (failures ? "-failing-" : "-calm-") + label(run);
				long[] settled = { Long.MIN_VALUE };
				long[] done = { Long.MIN_VALUE, Long.MIN_VALUE };
				double perSecond = measure(report, contender, run, all, () -> {
					if (library) {
						try (ConfigurableApplicationContext context = ListenerApplications.orderedBatch(
								bootstrapServers(), topic, id, concurrency, workload,
								"kafka.resilience.retry.delays=" + delays)) {
							if (await(all)) {
								done[0] = System.nanoTime();
								done[1] = processCpuNanos();
							}
						}
					}
					else {
						// Spring Kafka's default back-off (FixedBackOff(0, 9)); every
						// failure is planned: no stack
						// trace for each
						DefaultErrorHandler errorHandler = new DefaultErrorHandler();
						errorHandler.setLogLevel(KafkaException.Level.DEBUG);
						// started paused until each consumer has partitions of its own:
						// the first one would
						// otherwise take every partition alone until the group's next
						// rebalance
						try (ConfigurableApplicationContext context = ListenerApplications.plainBatch(
								bootstrapServers(), topic, id, concurrency, workload, List.of(errorHandler),
								"spring.kafka.listener.auto-startup=false")) {
							if (!ListenerApplications.startSettled(context, partitions, timeout())) {
								throw new IllegalStateException("The listener's consumers were not each assigned "
										+ "partitions within " + timeout().toSeconds() + " s");
							}
							settled[0] = System.nanoTime();
							if (await(all)) {
								done[0] = System.nanoTime();
								done[1] = processCpuNanos();
							}
						}
					}
				});
				boolean complete = !Double.isNaN(perSecond);
				long first = probe.firstStart.get();
				double span = (complete && first != Long.MAX_VALUE) ? (all.lastNanos() - first) / 1e9 : Double.NaN;
				long callCount = probe.calls.sum();
				double batchMean = (callCount > 0) ? (double) probe.records.sum() / callCount : Double.NaN;
				double cores = (done[1] >= 0 && probe.firstCpu.get() >= 0 && done[0] > first)
						? (double) (done[1] - probe.firstCpu.get()) / (done[0] - first) : Double.NaN;
				Map<String, Double> values = new LinkedHashMap<>();
				values.put(RECORDS_PER_SECOND, perSecond);
				values.put(HEALTHY_PER_SECOND, healthyTally.perSecond());
				values.put(MEAN_BATCH, batchMean);
				values.put(CALLS, (double) callCount);
				values.put(FAILED_CALLS, (double) probe.failed.sum());
				values.put(CALLS_PER_SECOND, callCount / span);
				values.put(GOT_PER_RECORD, (double) probe.records.sum() / records);
				values.put(MEAN_CALL_MS, Calls.meanMillis(probe.nanos, probe.calls));
				values.put(SLOTS_BUSY, probe.nanos.sum() / 1e9 / (concurrency * span));
				values.put(GAP_AFTER_SUCCEEDED_MS, Calls.meanMillis(probe.gapAfterSucceeded, probe.gapsAfterSucceeded));
				values.put(GAP_AFTER_FAILED_MS, Calls.meanMillis(probe.gapAfterFailed, probe.gapsAfterFailed));
				values.put(CORES_BUSY, cores);
				values.put(AT_ONCE, (double) probe.mostAtOnce.get());
				this.logger.info(String.format(Locale.ROOT, "P7 %s %-48s mean batch %.1f over %,d calls (%,d failed; "
						+ "%.2f records got per record), %,.0f calls/s, mean call %.2f ms (asked %.2f ms for the mean "
						+ "batch), call slots busy %.0f %%, at most %.0f calls at once, a thread's next call %.2f ms after "
						+ "one that succeeded and %.2f ms after one that failed, %.2f cores busy; records that never fail "
						+ "%s%s", label(run), contender, batchMean, callCount, probe.failed.sum(),
						values.get(GOT_PER_RECORD), values.get(CALLS_PER_SECOND), values.get(MEAN_CALL_MS),
						(callNanos + recordNanos * batchMean) / 1e6, values.get(SLOTS_BUSY) * 100, values.get(AT_ONCE),
						values.get(GAP_AFTER_SUCCEEDED_MS), values.get(GAP_AFTER_FAILED_MS), cores,
						Format.perSecond(values.get(HEALTHY_PER_SECOND)),
						(settled[0] != Long.MIN_VALUE && all.firstNanos() != Long.MIN_VALUE)
								? String.format(Locale.ROOT,
										"; its first record was handled %.0f ms after it was resumed "
												+ "with every consumer assigned",
										(all.firstNanos() - settled[0]) / 1e6)
								: ""));
				if (run > 0) {
					values
						.forEach((measure, value) -> measures.computeIfAbsent(measure, (name) -> new LinkedHashMap<>())
							.computeIfAbsent(contender, (name) -> new Series())
							.add(complete ? value : Double.NaN));
				}
			}
		}

		Map<String, Series> throughput = measures.get(RECORDS_PER_SECOND);
		Series libraryVsPlain = Series.ratio(throughput.get(LIBRARY + CALM), throughput.get(BLOCKING + CALM));
		Series libraryFailingVsCalm = Series.ratio(throughput.get(LIBRARY + FAILING), throughput.get(LIBRARY + CALM));
		Series plainFailingVsCalm = Series.ratio(throughput.get(BLOCKING + FAILING), throughput.get(BLOCKING + CALM));
		Series libraryVsPlainFailing = Series.ratio(throughput.get(LIBRARY + FAILING),
				throughput.get(BLOCKING + FAILING));
		List<List<String>> rows = new ArrayList<>();
		for (String contender : contenders) {
			Series series = throughput.get(contender);
			boolean library = contender.startsWith(LIBRARY);
			boolean failures = contender.endsWith(FAILING);
			String kind = library ? LIBRARY : BLOCKING;
			String vsCalm = failures ? Format.ratio(Series.ratio(series, throughput.get(kind + CALM)).median()) : "–";
			String libraryVsIt = library ? "–"
					: Format.ratio((failures ? libraryVsPlainFailing : libraryVsPlain).median());
			rows.add(List.of(contender, Format.perSecond(series.median()), series.runs(Format::count), vsCalm,
					libraryVsIt, Format.ratio(Series.ratio(series, failures ? idealFailing : ideal).median())));
		}
		report.table(List.of("contender", "records/s (median)", "every run", "vs its run with no failures",
				LIBRARY + " vs it", "vs its ideal"), rows);
		List<List<String>> profile = new ArrayList<>();
		for (String contender : contenders) {
			double batchMean = median(measures, MEAN_BATCH, contender);
			profile.add(List.of(contender, String.format(Locale.ROOT, "%.1f", batchMean),
					measures.get(MEAN_BATCH).get(contender).runs((value) -> String.format(Locale.ROOT, "%.1f", value)),
					Format.count(median(measures, CALLS, contender)) + " / "
							+ Format.count(median(measures, FAILED_CALLS, contender)),
					Format.perSecond(median(measures, CALLS_PER_SECOND, contender)),
					String.format(Locale.ROOT, "%.2f", median(measures, GOT_PER_RECORD, contender)),
					millis2(median(measures, MEAN_CALL_MS, contender)) + " / "
							+ millis2((callNanos + recordNanos * batchMean) / 1e6),
					percentOf(median(measures, SLOTS_BUSY, contender)),
					millis2(median(measures, GAP_AFTER_SUCCEEDED_MS, contender)) + " / "
							+ millis2(median(measures, GAP_AFTER_FAILED_MS, contender)),
					String.format(Locale.ROOT, "%.2f", median(measures, CORES_BUSY, contender)),
					Format.perSecond(median(measures, HEALTHY_PER_SECOND, contender))));
		}
		report.table(List.of("contender", "mean batch (median)", "every run", "calls / failed calls",
				"calls per second", "records got per record", "mean call / asked for the mean batch", "call slots busy",
				"next call on the thread after one that succeeded / failed", "cores busy",
				"records that never fail, records/s"), profile);

		report.target(String.format(Locale.ROOT, "%s ≥ 0.9× plain %s, nothing failing", LIBRARY, BLOCKING),
				libraryVsPlain.median(),
				Format.ratio(libraryVsPlain.median()) + " (" + Format.perSecond(throughput.get(LIBRARY + CALM).median())
						+ " vs " + Format.perSecond(throughput.get(BLOCKING + CALM).median()) + ")",
				true, 0.9);
		report.target(
				String.format(Locale.ROOT,
						"%s with %s of the records failing once ≥ 0.8× its throughput with " + "nothing failing",
						LIBRARY, share),
				libraryFailingVsCalm.median(),
				Format.ratio(libraryFailingVsCalm.median()) + " ("
						+ Format.perSecond(throughput.get(LIBRARY + FAILING).median()) + " vs "
						+ Format.perSecond(throughput.get(LIBRARY + CALM).median()) + ")",
				true, 0.8);
		report.note("Ratios are medians of the per-run ratios; each run measures every contender back to back.");
		report.note(String.format(Locale.ROOT,
				"%s vs %s, nothing failing, every run: %s; with failures vs without: "
						+ "%s (%s), %s (%s); %s vs %s with failures: %s.",
				LIBRARY, BLOCKING, libraryVsPlain.runs(Format::ratio), LIBRARY,
				libraryFailingVsCalm.runs(Format::ratio), BLOCKING, plainFailingVsCalm.runs(Format::ratio), LIBRARY,
				BLOCKING, Format.ratio(libraryVsPlainFailing.median())));
		report.note("Mean batch: the records a call got, over the calls (failed calls included). Calls per second and "
				+ "call slots busy are taken from the start of the first call until every record was done: the calls' "
				+ "time over the calls that could run at once (" + concurrency + ") times that span. A mean call above "
				+ "what it asked for is time the parked thread waited for a core on waking.");
		report.note("Records got per record: the records the calls got over the records of the set; above 1 where "
				+ "records were handed to the method again, after a failed call that did not run them. Next call on "
				+ "the thread: the mean time from the end of a call to the start of the next one on the same thread "
				+ "(the plain listener's consumer, the library's worker), after a call that succeeded and after one "
				+ "that failed. Cores busy: the CPU time of the whole process (the broker and every client included) "
				+ "from the start of the first call until every record was done, over that span.");
		report.note("Records that never fail: their throughput from the first to the last of them; with failures the "
				+ "whole set also waits for the last failed record's retry (the library's retry delay: " + delays
				+ ").");
		contenders.forEach((contender) -> {
			report.measured(contender + " records/s", median(measures, RECORDS_PER_SECOND, contender));
			report.measured(contender + " mean batch", median(measures, MEAN_BATCH, contender));
			report.measured(contender + " calls", median(measures, CALLS, contender));
			report.measured(contender + " failed calls", median(measures, FAILED_CALLS, contender));
		});
		report.measured("library vs plain", libraryVsPlain.median());
		report.measured("library with failures vs without", libraryFailingVsCalm.median());
		report.measured("plain with failures vs without", plainFailingVsCalm.median());
		return report;
	}

	/**
	 * Parks the calling thread for {@code nanos}, whatever wakes it early: the cost of a
	 * call that waits on something else, such as a database.
	 */
	private static void park(long nanos) throws InterruptedException {
		long deadline = System.nanoTime() + nanos;
		for (long left = nanos; left > 0; left = deadline - System.nanoTime()) {
			LockSupport.parkNanos(left);
			if (Thread.interrupted()) {
				throw new InterruptedException("Interrupted in a batch call");
			}
		}
	}

	private static double median(Map<String, Map<String, Series>> measures, String measure, String contender) {
		Map<String, Series> byContender = measures.get(measure);
		Series series = (byContender != null) ? byContender.get(contender) : null;
		return (series != null) ? series.median() : Double.NaN;
	}

	private static String percent(int part, int whole) {
		String value = String.format(Locale.ROOT, "%.2f", 100.0 * part / whole).replaceAll("\\.?0+$", "");
		return value + " %";
	}

	private static String percentOf(double share) {
		return Double.isNaN(share) ? "–" : String.format(Locale.ROOT, "%.0f %%", share * 100);
	}

	private static String millis2(double millis) {
		return Double.isNaN(millis) ? "–" : String.format(Locale.ROOT, "%.2f ms", millis);
	}

	/** What the calls of one contender's run did. */
	private static final class Calls {

		final LongAdder calls = new LongAdder();

		final LongAdder records = new LongAdder();

		final LongAdder failed = new LongAdder();

		final LongAdder nanos = new LongAdder();

		final AtomicInteger running = new AtomicInteger();

		final AtomicInteger mostAtOnce = new AtomicInteger();

		final AtomicLong firstStart = new AtomicLong(Long.MAX_VALUE);

		/** The process's CPU time when the first call started. */
		final AtomicLong firstCpu = new AtomicLong(Long.MIN_VALUE);

		/**
		 * Time between a call's end and the next call on the same thread, after a call
		 * that failed and not.
		 */
		final LongAdder gapAfterFailed = new LongAdder();

		final LongAdder gapsAfterFailed = new LongAdder();

		final LongAdder gapAfterSucceeded = new LongAdder();

		final LongAdder gapsAfterSucceeded = new LongAdder();

		/** The thread's last call: when it ended, and whether it failed. */
		private final ThreadLocal<long[]> last = ThreadLocal.withInitial(() -> new long[] { Long.MIN_VALUE, 0 });

		/** A call starts; returns when. */
		long started() {
			long now = System.nanoTime();
			if (this.firstStart.accumulateAndGet(now, Math::min) == now && this.firstCpu.get() == Long.MIN_VALUE) {
				this.firstCpu.compareAndSet(Long.MIN_VALUE, processCpuNanos());
			}
			this.mostAtOnce.accumulateAndGet(this.running.incrementAndGet(), Math::max);
			long[] last = this.last.get();
			if (last[0] != Long.MIN_VALUE) {
				if (last[1] != 0) {
					this.gapAfterFailed.add(now - last[0]);
					this.gapsAfterFailed.increment();
				}
				else {
					this.gapAfterSucceeded.add(now - last[0]);
					this.gapsAfterSucceeded.increment();
				}
			}
			return now;
		}

		void ended(long started, int size) {
			long now = System.nanoTime();
			this.running.decrementAndGet();
			this.nanos.add(now - started);
			this.calls.increment();
			this.records.add(size);
			long[] last = this.last.get();
			last[0] = now;
			last[1] = 0;
		}

		/** The call that just ended on this thread failed. */
		void failedCall() {
			this.failed.increment();
			this.last.get()[1] = 1;
		}

		static double meanMillis(LongAdder nanos, LongAdder count) {
			return (count.sum() > 0) ? nanos.sum() / 1e6 / count.sum() : Double.NaN;
		}

	}

}
