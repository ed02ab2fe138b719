package io.github.kafkaresilience.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.outage.OutageBreaker;
import io.github.kafkaresilience.internal.outage.OutageSettings;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.KafkaException;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.FixedBackOff;

/**
 * P8, an outage of every key: records are sent at a steady rate while the contender runs,
 * and for some seconds in the middle every call of the handler fails with a transient
 * exception, whatever its key, as when a service the handler calls is down; before and
 * after, every call succeeds. Measures, for the records sent during the outage, how long
 * after its end each was handled, and what the outage cost: failed attempts and, for the
 * library, the lock and stage records it wrote and the records it dead-lettered.
 * <p>
 * The library runs in outage mode: its outage breaker opens when nearly every first
 * attempt fails across several keys, and it then holds its records instead of moving them
 * into the ladder, and runs the record held longest as a probe every second (by default);
 * once one succeeds, the held records run on half the workers for a second (the ramp-up),
 * then on all. It runs with the defaults, without the ramp ({@code ramp-up=0}, what the
 * ramp costs), and backing off ({@code max-probe-interval=30s}: the pause doubles per
 * failed probe up to 30 s). The blocking handler is a plain {@code @KafkaListener} whose
 * {@code DefaultErrorHandler} tries the failed record again every second without end,
 * which holds its partition: it writes nothing and resumes within a second of the
 * outage's end, the bound the library is measured against. {@code --p8-contenders}
 * chooses among them: {@code defaults}, {@code no-ramp}, {@code backing-off} and
 * {@code blocking}.
 * <p>
 * Each contender of each run is a new Spring application on a new topic; there is no
 * warm-up run: the times measured here are seconds, not the microseconds the JIT changes.
 */
final class OutageScenario extends Scenario {

	/** The library with the default outage settings. */
	static final String LIBRARY = ORDERED;

	/** The library resuming on every worker at once. */
	static final String NO_RAMP = ORDERED + ", ramp-up 0";

	/** The library backing off between failed probes up to 30 s. */
	static final String BACKING_OFF = ORDERED + ", max-probe-interval 30s";

	/** A plain listener that blocks its partition on the failed record. */
	static final String BLOCKING = PLAIN + " + DefaultErrorHandler";

	static final List<String> CONTENDERS = List.of(LIBRARY, NO_RAMP, BACKING_OFF, BLOCKING);

	/** The contenders' names in {@code --p8-contenders}. */
	static final List<String> SLUGS = List.of("defaults", "no-ramp", "backing-off", "blocking");

	/**
	 * How much later than the blocking handler's p99 the defaults may be done: one probe
	 * interval.
	 */
	private static final long ALLOWANCE_MILLIS = 1_000;

	/**
	 * How often the breaker and the held records are looked at while a library contender
	 * runs.
	 */
	private static final long SAMPLE_MILLIS = 20;

	/** The blocking handler's pause between two tries of the failed record. */
	private static final long BLOCKING_BACK_OFF_MILLIS = 1_000;

	OutageScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	@Override
	ScenarioReport run() throws Exception {
		int rate = this.settings.count("p8-rate");
		int seconds = this.settings.count("p8-seconds");
		int outageStart = this.settings.count("p8-outage-start-seconds");
		int outageSeconds = this.settings.count("p8-outage-seconds");
		int partitions = this.settings.count("p8-partitions");
		int keys = this.settings.count("p8-keys");
		String delays = this.settings.text("p8-delays");
		int valueBytes = this.settings.count("value-bytes");
		int concurrency = this.settings.count("concurrency");
		int total = rate * seconds;
		int outageFrom = rate * outageStart;
		int outageTo = rate * (outageStart + outageSeconds);
		int during = outageTo - outageFrom;
		int after = total - outageTo;
		int barriers = partitions * (1 + delays(delays).size());
		OutageSettings defaults = OutageSettings.DEFAULTS;
		ScenarioReport report = new ScenarioReport("P8", "Outage of every key");
		report.setup(String.format(Locale.ROOT, "%,d records/s of %d bytes for %d s (%,d records) into %d partitions "
				+ "while the contender runs, on %,d keys in turn; from %d s to %d s after the first record (the %,d "
				+ "records sent then) every call of the handler throws IllegalStateException(\"503\"), a transient "
				+ "failure, whatever the record or its attempt; before and after, every call succeeds; no-op handler",
				rate, Math.max(valueBytes, 2 * Long.BYTES), seconds, total, partitions, keys, outageStart,
				outageStart + outageSeconds, during));
		report.setup(String.format(Locale.ROOT, "%s: %d workers, retry delays %s, outage mode with its defaults (the "
				+ "breaker opens when, for %d ms from a transient failure on, at least %d first attempts and records "
				+ "held behind a failure, %.0f %% or more of them failed or held, across at least %d keys; it probes "
				+ "every %d s, less up to a fifth at random; once a probe succeeds the held records run on half the "
				+ "workers for %d s, then on all); %s: the same with kafka.resilience.outage.ramp-up=0; %s: the same "
				+ "with kafka.resilience.outage.max-probe-interval=30s, the pause doubling per failed probe up to "
				+ "30 s; sending starts once every partition's sync barrier has opened", LIBRARY, concurrency, delays,
				defaults.minimumDuration().toMillis(), defaults.minimumAttempts(), defaults.failureRate() * 100,
				defaults.minimumKeys(), defaults.probeInterval().toSeconds(), defaults.rampUp().toSeconds(), NO_RAMP,
				BACKING_OFF));
		report
			.setup(String.format(Locale.ROOT, "%s: a plain @KafkaListener with %d consumers and a DefaultErrorHandler "
					+ "with FixedBackOff(%d ms, unlimited attempts): the failed record is tried again every second, "
					+ "its partition blocked behind it; Spring Boot's and Spring Kafka's defaults otherwise; sending starts "
					+ "once every consumer has partitions of its own", BLOCKING, concurrency,
					BLOCKING_BACK_OFF_MILLIS));
		report.setup("done after the outage's end: for each record sent during the outage, from the moment the "
				+ "outage ended (the sender's clock, just before it sends the first record after it) until the handler "
				+ "started the call that succeeded on it; p50, p99 and max over those records, then the median over "
				+ "runs; a ratio is the median of the per-run ratios of the p99s; sent after the outage: produce-to-done "
				+ "latency of the records sent after it");
		report.setup("lock and stage records: every record in the ladder's lock topic and retry topics, read once the "
				+ "contender has stopped (the names come from the listener's LadderPlan); per record: those lock "
				+ "records over the records sent during the outage; out of order: records handled after a later record "
				+ "of their key; one of them, or a record dead-lettered, makes the run incomplete");

		List<String> chosen = List.of(this.settings.text("p8-contenders").split(","))
			.stream()
			.map(String::trim)
			.toList();
		List<String> contenders = CONTENDERS.stream().filter((contender) -> chosen.contains(slug(contender))).toList();
		Map<String, Map<String, Series>> series = new LinkedHashMap<>();
		for (String contender : CONTENDERS) {
			Map<String, Series> values = new LinkedHashMap<>();
			for (String name : List.of("p50", "p99", "max", "after p99", "resumed", "failed closed", "failed open",
					"calls", "lock records", "lock per record", "tombstones", "stage records", "dead-lettered",
					"out of order", "opened", "probe pause", "held max", "behind", "latencies")) {
				values.put(name, new Series());
			}
			series.put(contender, values);
		}
		for (int run : runs(false)) {
			for (String contender : rotated(contenders, run)) {
				Run result = runOnce(report, contender, run, rate, total, outageFrom, outageTo, partitions, keys,
						delays, valueBytes, concurrency, barriers);
				Map<String, Series> values = series.get(contender);
				boolean complete = result.complete();
				Latencies.Summary done = result.done().summary();
				Latencies.Summary afterwards = result.after().summary();
				values.get("p50").add(complete ? done.percentileMillis(0.50) : Double.NaN);
				values.get("p99").add(complete ? done.percentileMillis(0.99) : Double.NaN);
				values.get("max").add(complete ? done.maxMillis() : Double.NaN);
				values.get("after p99").add(complete ? afterwards.percentileMillis(0.99) : Double.NaN);
				values.get("resumed").add(result.resumedMillis());
				values.get("failed closed").add(result.failedClosed());
				values.get("failed open").add(result.failedOpen());
				values.get("calls").add(result.calls());
				values.get("lock records").add(result.lockRecords());
				values.get("lock per record").add(result.lockRecords() / during);
				values.get("tombstones").add(result.tombstones());
				values.get("stage records").add(result.stageRecords());
				values.get("dead-lettered").add(result.deadLettered());
				values.get("out of order").add(result.outOfOrder());
				values.get("opened").add(result.opened());
				values.get("probe pause").add(result.probePauseMillis());
				values.get("held max").add(result.heldMax());
				values.get("behind").add(result.behindMillis());
				values.get("latencies").add(done.count());
				this.logger
					.info(String.format(Locale.ROOT, "P8 %s %-42s %,d records sent during the outage: done after "
							+ "its end p50 %s, p99 %s, max %s; first success after it %s; sent after it: p99 %s from "
							+ "production; failed attempts %s with the breaker closed, %s open, of %s calls; lock records "
							+ "%s (%s tombstones), stage records %s, dead-lettered %s; %s out of order; breaker opened %s "
							+ "times, last probe pause %s, at most %s records held; sender at most %s behind",
							label(run), contender, done.count(), Format.latency(done.percentileMillis(0.50)),
							Format.latency(done.percentileMillis(0.99)), Format.latency(done.maxMillis()),
							Format.latency(result.resumedMillis()), Format.latency(afterwards.percentileMillis(0.99)),
							Format.count(result.failedClosed()), Format.count(result.failedOpen()),
							Format.count(result.calls()), Format.count(result.lockRecords()),
							Format.count(result.tombstones()), Format.count(result.stageRecords()),
							Format.count(result.deadLettered()), Format.count(result.outOfOrder()),
							Format.count(result.opened()), Format.latency(result.probePauseMillis()),
							Format.count(result.heldMax()), Format.latency(result.behindMillis())));
			}
		}

		Map<String, Series> blocking = series.get(BLOCKING);
		List<List<String>> latencyRows = new ArrayList<>();
		List<List<String>> costRows = new ArrayList<>();
		for (String contender : contenders) {
			Map<String, Series> values = series.get(contender);
			boolean library = !contender.equals(BLOCKING);
			Series vsBlocking = Series.ratio(values.get("p99"), blocking.get("p99"));
			latencyRows.add(List.of(contender, Format.latency(values.get("p50").median()),
					Format.latency(values.get("p99").median()), Format.latency(values.get("max").median()),
					values.get("p99").runs(Format::count), Format.ratio(vsBlocking.median()),
					Format.latency(values.get("resumed").median()), Format.latency(values.get("after p99").median()),
					Format.latency(values.get("behind").median())));
			costRows.add(List.of(contender,
					Format.count(values.get("failed closed").median()) + " / "
							+ (library ? Format.count(values.get("failed open").median()) : "–"),
					Format.count(values.get("calls").median()),
					library ? Format.count(values.get("lock records").median()) + " ("
							+ Format.count(values.get("tombstones").median()) + ")" : "–",
					library ? perRecord(values.get("lock per record").median()) : "–",
					library ? values.get("lock per record").runs(OutageScenario::perRecord) : "–",
					library ? Format.count(values.get("stage records").median()) : "–",
					library ? values.get("dead-lettered").runs(Format::count) : "–",
					values.get("out of order").runs(Format::count),
					library ? values.get("opened").runs(Format::count) : "–",
					library ? Format.latency(values.get("probe pause").median()) : "–",
					library ? Format.count(values.get("held max").median()) : "–"));
			report.measured(contender + " p50 ms", values.get("p50").median());
			report.measured(contender + " p99 ms", values.get("p99").median());
			report.measured(contender + " max ms", values.get("max").median());
			report.measured(contender + " latencies", values.get("latencies").median());
			report.measured(contender + " failed attempts",
					values.get("failed closed").median() + (library ? values.get("failed open").median() : 0));
			report.measured(contender + " out of order", values.get("out of order").max());
			if (!library) {
				continue;
			}
			Series late = Series.difference(values.get("p99"), blocking.get("p99"));
			double perRecord = values.get("lock per record").median();
			if (!contender.equals(BACKING_OFF)) {
				// backing off is chosen for a dependency that asks for it, at the cost of
				// noticing the return later
				double p99 = values.get("p99").median();
				report.target(
						"records sent during the outage done after its end: p99 ≤ "
								+ BLOCKING + "'s + " + ALLOWANCE_MILLIS + " ms (" + contender + ")",
						late.median() - ALLOWANCE_MILLIS,
						Format.latency(p99) + " vs " + Format.latency(blocking.get("p99").median()) + " + "
								+ Format.latency(ALLOWANCE_MILLIS) + " (" + Format.ratio(vsBlocking.median()) + " of "
								+ BLOCKING + "'s p99)",
						false, 0);
				report.target("lock records per record sent during the outage = 0 (" + contender + ")", perRecord,
						perRecord(perRecord) + " (" + Format.count(values.get("lock records").median())
								+ " lock records for " + Format.count(during) + " records)",
						false, 0);
			}
			report.measured(contender + " p99 vs blocking", vsBlocking.median());
			report.measured(contender + " p99 later than blocking ms", late.median());
			report.measured(contender + " lock records", values.get("lock records").median());
			report.measured(contender + " lock records per record", perRecord);
			report.measured(contender + " dead-lettered", values.get("dead-lettered").max());
			report.measured(contender + " times opened", values.get("opened").median());
		}
		report.table(List.of("contender", "done after the outage's end p50", "p99", "max", "p99, every run (ms)",
				"p99 vs " + BLOCKING, "first success after the end", "sent after the outage: produce-to-done p99",
				"sender behind schedule (max)"), latencyRows);
		report.table(List.of("contender", "failed attempts, breaker closed / open", "handler calls",
				"lock records (tombstones)", "lock records per record sent during the outage", "per record, every run",
				"stage records", "dead-lettered, every run", "out of order, every run", "breaker opened, every run",
				"last probe pause", "records held at most"), costRows);
		report.note(String.format(Locale.ROOT, "%,d records were sent during the outage and %,d after it. Failed "
				+ "attempts: handler calls that threw, split by whether the library's breaker was open when the call "
				+ "started (while it is open, the calls are its probes); the blocking handler has no breaker.", during,
				after));
		report.note("Breaker opened: how many times the library's outage breaker opened in the run; 0 means that it "
				+ "never held, and every key's records took the ladder as they did before outage mode. Last probe "
				+ "pause: from the last probe that failed to the one that succeeded, the probe interval in effect when "
				+ "the outage ended. Records held at most: the library's " + "held records, sampled every "
				+ SAMPLE_MILLIS + " ms; while it holds, its partitions are paused and "
				+ "the other records wait in Kafka.");
		report.note("The lock records are those of the whole run, tombstones included: the records sent after the "
				+ "outage that follow their key into the ladder count too.");
		return report;
	}

	/** The contender's name in {@code --p8-contenders}. */
	static String slug(String contender) {
		return SLUGS.get(CONTENDERS.indexOf(contender));
	}

	/**
	 * Lock records per record, with the digits that tell a few records apart from none.
	 */
	private static String perRecord(double value) {
		if (Double.isNaN(value)) {
			return "–";
		}
		return String.format(Locale.ROOT, (value > 0 && value < 0.01) ? "%.5f" : "%.3f", value);
	}

	private Run runOnce(ScenarioReport report, String contender, int run, int rate, int total, int outageFrom,
			int outageTo, int partitions, int keys, String delays, int valueBytes, int concurrency, int barriers)
			throws InterruptedException {
		String id = "p8-" + slug(contender) + "-" + label(run);
		String topic = this.broker.newTopic(id, partitions);
		Outage outage = new Outage();
		Tally all = new Tally(0, total);
		Latencies done = new Latencies(outageFrom, outageTo - outageFrom);
		Latencies after = new Latencies(outageTo, total - outageTo);
		AtomicReference<OutageBreaker> breaker = new AtomicReference<>();
		AtomicLongArray lastDone = new AtomicLongArray(keys);
		for (int key = 0; key < keys; key++) {
			lastDone.set(key, -1);
		}
		LongAdder disordered = new LongAdder();
		LongAdder calls = new LongAdder();
		LongAdder failedClosed = new LongAdder();
		LongAdder failedOpen = new LongAdder();
		AtomicLong lastFailedProbe = new AtomicLong(Long.MIN_VALUE);
		AtomicLong successfulProbe = new AtomicLong(Long.MIN_VALUE);
		AtomicLong firstSuccessAfter = new AtomicLong(Long.MIN_VALUE);
		Workload workload = (record) -> {
			long now = System.nanoTime();
			long seq = Records.seq(record.value());
			calls.increment();
			OutageBreaker current = breaker.get();
			boolean open = current != null && current.isOpen();
			if (outage.down) {
				if (open) {
					failedOpen.increment();
					lastFailedProbe.accumulateAndGet(now, Math::max);
				}
				else {
					failedClosed.increment();
				}
				throw new IllegalStateException("503");
			}
			if (open) {
				successfulProbe.compareAndSet(Long.MIN_VALUE, now);
			}
			long ended = outage.endNanos;
			if (ended != Long.MIN_VALUE) {
				firstSuccessAfter.compareAndSet(Long.MIN_VALUE, now);
			}
			// the records of a key are sent in the order of their sequence numbers
			if (lastDone.getAndAccumulate((int) (seq % keys), seq, Math::max) > seq) {
				disordered.increment();
			}
			if (ended != Long.MIN_VALUE) {
				done.record(seq, now - ended);
			}
			after.record(seq, now - Records.sentNanos(record.value()));
			all.record(seq);
		};
		boolean library = !contender.equals(BLOCKING);
		AtomicReference<LadderPlan> plan = new AtomicReference<>();
		double[] behind = { Double.NaN };
		long[] opened = { -1 };
		Sampler sampler = new Sampler();
		long[] counts = { -1, -1, -1, -1 };
		measure(report, contender, run, all, () -> {
			if (library) {
				BarrierWatch ready = new BarrierWatch(barriers);
				List<String> properties = new ArrayList<>(List.of("kafka.resilience.retry.delays=" + delays));
				if (contender.equals(NO_RAMP)) {
					properties.add("kafka.resilience.outage.ramp-up=0");
				}
				else if (contender.equals(BACKING_OFF)) {
					properties.add("kafka.resilience.outage.max-probe-interval=30s");
				}
				try (ConfigurableApplicationContext context = ListenerApplications.ordered(bootstrapServers(), topic,
						id, concurrency, workload, List.of(ready), properties.toArray(String[]::new))) {
					if (!ready.await(timeout())) {
						throw new IllegalStateException(
								"The instance was not assigned every partition within " + timeout().toSeconds() + " s");
					}
					ListenerRegistry registry = context.getBean(ListenerRegistry.class);
					RetryContainer container = registry.container(id);
					if (container == null || container.outageBreaker() == null) {
						throw new IllegalStateException("Listener '" + id + "' has no outage breaker");
					}
					plan.set(registry.plans(id).get(0));
					breaker.set(container.outageBreaker());
					sampler.start(container);
					try {
						behind[0] = send(topic, total, rate, outageFrom, outageTo, keys, valueBytes, outage);
						await(all);
					}
					finally {
						sampler.stop();
					}
					opened[0] = container.outageBreaker().timesOpened();
				}
				// read once the instance has stopped: its last releases are written
				LadderPlan ladder = plan.get();
				BenchmarkBroker.TopicCount locks = this.broker.count(ladder.lockTopic(), timeout());
				long staged = 0;
				for (LadderPlan.Stage stage : ladder.stages()) {
					staged += this.broker.count(stage.topic(), timeout()).records();
				}
				counts[0] = locks.records();
				counts[1] = locks.tombstones();
				counts[2] = staged;
				counts[3] = this.broker.count(ladder.dlqTopic(), timeout()).records();
				if (counts[3] > 0) {
					throw new IllegalStateException(counts[3] + " records were dead-lettered");
				}
			}
			else {
				DefaultErrorHandler errorHandler = new DefaultErrorHandler(
						new FixedBackOff(BLOCKING_BACK_OFF_MILLIS, FixedBackOff.UNLIMITED_ATTEMPTS));
				// every failed try is expected: no stack trace for each
				errorHandler.setLogLevel(KafkaException.Level.DEBUG);
				try (ConfigurableApplicationContext context = ListenerApplications.plain(bootstrapServers(), topic, id,
						concurrency, workload, List.of(errorHandler))) {
					// every consumer with partitions of its own: until the group has
					// settled, the
					// first consumer may hold them all, and block them all behind one
					// record
					if (!ListenerApplications.awaitSpreadAssignment(context, partitions, timeout())) {
						throw new IllegalStateException("The listener's consumers were not each assigned partitions "
								+ "within " + timeout().toSeconds() + " s");
					}
					behind[0] = send(topic, total, rate, outageFrom, outageTo, keys, valueBytes, outage);
					await(all);
				}
			}
			if (disordered.sum() > 0) {
				throw new IllegalStateException(
						disordered.sum() + " records were handled after a later record of their " + "key");
			}
		});
		long probe = successfulProbe.get();
		long failedProbe = lastFailedProbe.get();
		double probePause = (probe != Long.MIN_VALUE && failedProbe != Long.MIN_VALUE && failedProbe < probe)
				? (probe - failedProbe) / 1e6 : Double.NaN;
		return new Run(all.isComplete() && disordered.sum() == 0 && counts[3] <= 0, done, after,
				millisBetween(outage.endNanos, firstSuccessAfter.get()), calls.sum(), failedClosed.sum(),
				failedOpen.sum(), (counts[0] >= 0) ? counts[0] : Double.NaN, (counts[1] >= 0) ? counts[1] : Double.NaN,
				(counts[2] >= 0) ? counts[2] : Double.NaN, (counts[3] >= 0) ? counts[3] : Double.NaN, disordered.sum(),
				(opened[0] >= 0) ? opened[0] : Double.NaN, probePause, library ? sampler.heldMax() : Double.NaN,
				behind[0]);
	}

	/**
	 * Sends the records at a steady rate, each with the time it was handed to the
	 * producer, the record with sequence number n on key n modulo {@code keys}; the
	 * outage starts just before record {@code outageFrom} is sent and ends just before
	 * record {@code outageTo} is.
	 * @return how far, at most, a record was handed over after its due time, in
	 * milliseconds
	 */
	private double send(String topic, int records, int rate, int outageFrom, int outageTo, int keys, int valueBytes,
			Outage outage) {
		// no linger, as in P3L: a record leaves as soon as the previous request is
		// answered
		try (KafkaProducer<byte[], byte[]> producer = this.broker
			.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0))) {
			producer.partitionsFor(topic);
			long start = System.nanoTime();
			long behind = 0;
			int sent = 0;
			while (sent < records) {
				long elapsed = System.nanoTime() - start;
				long due = Math.min(records, elapsed * rate / 1_000_000_000L + 1);
				for (; sent < due; sent++) {
					long now = System.nanoTime();
					if (sent == outageFrom) {
						outage.down = true;
					}
					else if (sent == outageTo) {
						outage.endNanos = now;
						outage.down = false;
					}
					behind = Math.max(behind, now - (start + sent * 1_000_000_000L / rate));
					producer.send(new ProducerRecord<>(topic, Records.key("key-" + (sent % keys)),
							Records.timedValue(sent, now, valueBytes)));
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
			}
			producer.flush();
			if (outage.down) {
				// the outage lasted until the last record was sent
				outage.endNanos = System.nanoTime();
				outage.down = false;
			}
			return behind / 1e6;
		}
	}

	/** When every call of the handler fails: set by the sender, read by the handler. */
	private static final class Outage {

		volatile boolean down;

		volatile long endNanos = Long.MIN_VALUE;

	}

	/** Looks at a library container's held records while a contender runs. */
	private static final class Sampler {

		private final AtomicLong heldMax = new AtomicLong();

		private volatile boolean running;

		private Thread thread;

		void start(RetryContainer container) {
			this.running = true;
			this.thread = new Thread(() -> {
				while (this.running) {
					this.heldMax.accumulateAndGet(container.heldRecords(), Math::max);
					LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(SAMPLE_MILLIS));
				}
			}, "p8-sampler");
			this.thread.setDaemon(true);
			this.thread.start();
		}

		void stop() throws InterruptedException {
			this.running = false;
			if (this.thread != null) {
				this.thread.join();
			}
		}

		long heldMax() {
			return this.heldMax.get();
		}

	}

	/**
	 * What one contender measured in one run.
	 *
	 * @param complete whether every record was handled, in order per key, none
	 * dead-lettered
	 * @param done for each record sent during the outage, from its end until the record
	 * was done
	 * @param after for each record sent after the outage, from its production until it
	 * was done
	 * @param resumedMillis from the outage's end until the first call that succeeded
	 * @param calls every call of the handler
	 * @param failedClosed calls that failed with the breaker closed (every failed call of
	 * the blocking handler)
	 * @param failedOpen calls that failed with the breaker open: the probes
	 * @param lockRecords records in the lock topic, {@code NaN} for the blocking handler
	 * @param tombstones of them, tombstones
	 * @param stageRecords records in the retry topics
	 * @param deadLettered records in the dead-letter topic
	 * @param outOfOrder records handled after a later record of their key
	 * @param opened how many times the breaker opened
	 * @param probePauseMillis from the last failed probe to the one that succeeded
	 * @param heldMax the most records held at once, sampled
	 * @param behindMillis how far the sender fell behind its schedule at most
	 */
	private record Run(boolean complete, Latencies done, Latencies after, double resumedMillis, double calls,
			double failedClosed, double failedOpen, double lockRecords, double tombstones, double stageRecords,
			double deadLettered, double outOfOrder, double opened, double probePauseMillis, double heldMax,
			double behindMillis) {
	}

}
