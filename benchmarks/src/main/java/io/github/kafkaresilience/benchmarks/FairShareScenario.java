package io.github.kafkaresilience.benchmarks;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

import io.github.kafkaresilience.internal.container.FairShare;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.container.TenantTally;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * P10, fair share under a tenant's flood: tenants B to E each send a few records a second
 * while the instance runs, and tenant A writes a large backlog at once, on many keys,
 * into the same partitions. Measured: the produce-to-handle latency of B to E during A's
 * flood against the same senders with no flood (calm), and A's throughput during the
 * flood against A's throughput alone. The library with {@code tenantHeader} takes records
 * in round robin over tenants and parks a tenant's records past its share of a
 * partition's in-flight bound, so that the records behind a flood are read; the same
 * listener without tenants, and Parallel Consumer with KEY ordering, take the flood's
 * records as they come.
 * <p>
 * One instance of each contender takes every phase of a run in turn, on one topic: B to E
 * settle, then are measured calm, then A floods while they go on sending; once A's flood
 * is handled the senders stop, and A writes the same number of records again with nothing
 * else sent (A alone). Every record's key gets its records in the order they were sent,
 * which the handler checks.
 */
final class FairShareScenario extends Scenario {

	/** The header whose value is a record's tenant. */
	static final String HEADER = "tenant";

	/** The tenant that floods. */
	static final String FLOODER = "A";

	/** The tenants that send steadily. */
	static final List<String> STEADY = List.of("B", "C", "D", "E");

	/** The library with tenants: records taken in round robin over them. */
	static final String TENANTS = ORDERED + "(tenantHeader = \"" + HEADER + "\")";

	/** The same listener, without tenants. */
	static final String NO_TENANTS = ORDERED + ", no tenants";

	static final String PARALLEL = SlowHandlerScenario.PARALLEL;

	static final List<String> CONTENDERS = List.of(TENANTS, NO_TENANTS, PARALLEL);

	private static final List<String> VALUES = List.of("flood p50", "flood p99", "flood max", "calm p99",
			"flood records/s", "alone records/s", "flood latencies", "calm latencies", "out of order",
			"A in flight max", "behind", "flood written ms");

	/** The seconds of the flood whose latencies the timeline shows one by one. */
	private static final int TIMELINE_SECONDS = 10;

	/**
	 * Each contender's p99 in each second of the flood, in its last run: where the
	 * latency of the steady tenants goes, and for how long.
	 */
	private final Map<String, List<Double>> timelines = new LinkedHashMap<>();

	FairShareScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	@Override
	ScenarioReport run() throws Exception {
		Plan plan = Plan.of(this.settings);
		ScenarioReport report = new ScenarioReport("P10", "Fair share under a tenant's flood");
		report.setup(String.format(Locale.ROOT, "one topic of %d partitions per contender and run; tenants %s send "
				+ "%d records/s each (%d records/s in all, in turn, each tenant over %,d keys of its own), tenant %s "
				+ "writes %,d records at once over %,d keys; the tenant is the record header '%s'; records of %d bytes; "
				+ "the handler sleeps %d ms", plan.partitions(), String.join(", ", STEADY), plan.tenantRate(),
				plan.steadyRate(), plan.tenantKeys(), FLOODER, plan.flood(), plan.floodKeys(), HEADER,
				Math.max(plan.valueBytes(), 2 * Long.BYTES), plan.handlerMs()));
		report.setup(String.format(Locale.ROOT, "phases, in one instance of each contender: %s to %s send from when "
				+ "the first of their records is handled, %d s to settle (not counted), %d s calm, then %s's flood is "
				+ "written while they go on, until its last record is handled; then they stop, and once all their records "
				+ "are handled %s writes %,d records again with nothing else sent (%s alone)", STEADY.get(0),
				STEADY.get(STEADY.size() - 1), plan.settleSeconds(), plan.calmSeconds(), FLOODER, FLOODER, plan.flood(),
				FLOODER));
		report.setup(String.format(Locale.ROOT, "%s: %d workers, the library's defaults otherwise "
				+ "(kafka.resilience.tenants.max-share 0.5 of max-in-flight-per-partition 1,000, every tenant of "
				+ "weight 1); %s: the same listener without tenantHeader; %s %s: maxConcurrency %d, periodic "
				+ "asynchronous consumer commits", TENANTS, plan.workers(), NO_TENANTS, PARALLEL,
				ParallelConsumerRunner.version(), plan.workers()));
		report.setup("latency: from just before the producer is handed a record of " + STEADY.get(0) + " to "
				+ STEADY.get(STEADY.size() - 1) + " (System.nanoTime() carried in its value) until the handler starts "
				+ "on it; flood: the records sent from just before " + FLOODER + "'s flood is written until its last "
				+ "record is handled; calm: those sent in the calm seconds; " + FLOODER + "'s throughput: from its "
				+ "first record handled to its last; medians over runs, a ratio the median of the per-run ratios");

		Map<String, Map<String, Series>> values = new LinkedHashMap<>();
		for (String contender : CONTENDERS) {
			Map<String, Series> series = new LinkedHashMap<>();
			VALUES.forEach((value) -> series.put(value, new Series()));
			values.put(contender, series);
		}
		String parallelUnavailable = null;
		// no warm-up run: the handler's sleeps and the senders' pace, not the JIT, set
		// the figures
		for (int run : runs(false)) {
			for (String contender : rotated(CONTENDERS, run)) {
				if (contender.equals(PARALLEL) && parallelUnavailable != null) {
					continue;
				}
				Map<String, Double> result = runOnce(report, plan, contender, run);
				if (contender.equals(PARALLEL) && report.excluded().containsKey(PARALLEL)) {
					parallelUnavailable = report.excluded().get(PARALLEL);
				}
				VALUES.forEach((value) -> values.get(contender).get(value).add(result.getOrDefault(value, Double.NaN)));
			}
		}

		List<List<String>> rows = new ArrayList<>();
		for (String contender : CONTENDERS) {
			Map<String, Series> series = values.get(contender);
			Series latencyRatio = Series.ratio(series.get("flood p99"), series.get("calm p99"));
			Series throughputRatio = Series.ratio(series.get("flood records/s"), series.get("alone records/s"));
			Series aloneVsPlain = Series.ratio(series.get("alone records/s"),
					values.get(NO_TENANTS).get("alone records/s"));
			String name = contender.equals(PARALLEL) ? PARALLEL + " " + ParallelConsumerRunner.version() : contender;
			if (contender.equals(PARALLEL) && parallelUnavailable != null) {
				rows.add(List.of(name, "not measured: " + parallelUnavailable, "–", "–", "–", "–", "–", "–", "–", "–",
						"–", "–", "–"));
				continue;
			}
			rows.add(List.of(name, Format.latency(series.get("flood p99").median()),
					series.get("flood p99").runs(Format::latency), Format.latency(series.get("calm p99").median()),
					Format.ratio(latencyRatio.median()), Format.latency(series.get("flood p50").median()),
					Format.latency(series.get("flood max").median()),
					Format.perSecond(series.get("flood records/s").median()),
					Format.perSecond(series.get("alone records/s").median()), Format.ratio(throughputRatio.median()),
					Format.ratio(aloneVsPlain.median()), series.get("out of order").runs(Format::count),
					contender.equals(TENANTS) ? Format.count(series.get("A in flight max").median()) : "–"));
			report.measured(contender + " flood p99 ms", series.get("flood p99").median());
			report.measured(contender + " calm p99 ms", series.get("calm p99").median());
			report.measured(contender + " p99 flood vs calm", latencyRatio.median());
			report.measured(contender + " A flood records/s", series.get("flood records/s").median());
			report.measured(contender + " A alone records/s", series.get("alone records/s").median());
			report.measured(contender + " A flood vs alone", throughputRatio.median());
			report.measured(contender + " A alone vs no tenants", aloneVsPlain.median());
			report.measured(contender + " flood latencies", series.get("flood latencies").median());
			report.measured(contender + " calm latencies", series.get("calm latencies").median());
			report.measured(contender + " out of order", series.get("out of order").max());
			if (contender.equals(TENANTS)) {
				report.target(
						STEADY.get(0) + "–" + STEADY.get(STEADY.size() - 1) + "'s produce-to-handle p99 during "
								+ FLOODER + "'s flood ≤ 2× their calm p99 (" + TENANTS + ")",
						latencyRatio.median(),
						Format.ratio(latencyRatio.median()) + " (" + Format.latency(series.get("flood p99").median())
								+ " vs " + Format.latency(series.get("calm p99").median()) + ")",
						false, 2.0);
				report.target(FLOODER + "'s throughput during the flood ≥ 0.9× " + FLOODER + " alone (" + TENANTS + ")",
						throughputRatio.median(),
						Format.ratio(throughputRatio.median()) + " ("
								+ Format.perSecond(series.get("flood records/s").median()) + " vs "
								+ Format.perSecond(series.get("alone records/s").median()) + ")",
						true, 0.9);
			}
		}
		String steady = STEADY.get(0) + "–" + STEADY.get(STEADY.size() - 1);
		report.table(List.of("contender", steady + " p99, flood", "every run", steady + " p99, calm", "flood vs calm",
				steady + " p50, flood", steady + " max, flood", FLOODER + " records/s, flood",
				FLOODER + " records/s, alone", "flood vs alone", FLOODER + " alone vs " + NO_TENANTS + " alone",
				"out of order, every run", FLOODER + " in flight, most seen"), rows);
		List<List<String>> behind = new ArrayList<>();
		for (String contender : CONTENDERS) {
			Map<String, Series> series = values.get(contender);
			behind.add(List.of(contender, series.get("calm latencies").runs(Format::count),
					series.get("flood latencies").runs(Format::count), Format.latency(series.get("behind").median()),
					Format.latency(series.get("flood written ms").median())));
		}
		report.table(List.of("contender", steady + " records, calm, every run", steady + " records, flood, every run",
				"sender behind schedule (max)", FLOODER + "'s flood written in"), behind);
		List<List<String>> timeline = new ArrayList<>();
		for (String contender : CONTENDERS) {
			List<Double> seconds = this.timelines.getOrDefault(contender, List.of());
			List<String> row = new ArrayList<>(List.of(contender));
			for (int second = 0; second < TIMELINE_SECONDS; second++) {
				row.add((second < seconds.size()) ? Format.latency(seconds.get(second)) : "–");
			}
			row.add((seconds.size() > TIMELINE_SECONDS)
					? Format.latency(seconds.subList(TIMELINE_SECONDS, seconds.size())
						.stream()
						.mapToDouble(Double::doubleValue)
						.filter((value) -> !Double.isNaN(value))
						.max()
						.orElse(Double.NaN))
					: "–");
			timeline.add(row);
		}
		List<String> header = new ArrayList<>(List.of("contender, last run"));
		for (int second = 1; second <= TIMELINE_SECONDS; second++) {
			header.add(steady + " p99, flood's second " + second);
		}
		header.add("highest p99 of a later second");
		report.table(header, timeline);
		report.note("Only " + TENANTS + " has targets: the same listener without tenants and Parallel Consumer are "
				+ "there to show what a flood costs the other tenants without them. Out of order: records handled after "
				+ "a later record of their key (any makes the run incomplete).");
		report.note(FLOODER + " in flight, most seen: the most of " + FLOODER + "'s records the library held in "
				+ "memory at once during the flood, sampled every 20 ms from its tenant counts; its share is "
				+ "max-share × max-in-flight-per-partition in each of the " + plan.partitions() + " partitions.");
		report.note("The broker, the senders and every contender share this JVM and the machine's cores; " + FLOODER
				+ "'s flood is written while the contender runs, and writing it takes CPU from the contender at "
				+ "first. The last table splits the flood's records of " + steady + " by the second they were sent "
				+ "in, from the start of the flood's writing.");
		return report;
	}

	private Map<String, Double> runOnce(ScenarioReport report, Plan plan, String contender, int run)
			throws InterruptedException {
		String id = "p10-" + slug(contender) + "-" + label(run);
		String topic = this.broker.newTopic(id, plan.partitions());
		int capacity = (int) Math.min(Integer.MAX_VALUE,
				(long) plan.steadyRate() * (plan.settleSeconds() + plan.calmSeconds() + 3 * timeout().toSeconds()));
		HandleLog log = new HandleLog(capacity);
		Tally flood = new Tally(0, plan.flood());
		Tally alone = new Tally(plan.flood(), plan.flood());
		AtomicLongArray lastSeen = new AtomicLongArray(plan.keys());
		for (int key = 0; key < plan.keys(); key++) {
			lastSeen.set(key, -1);
		}
		LongAdder disordered = new LongAdder();
		Workload workload = (record) -> {
			long now = System.nanoTime();
			long seq = Records.seq(record.value());
			// the records of a key are sent in the order of their sequence numbers
			if (lastSeen.getAndAccumulate(plan.keyOf(seq), seq, Math::max) > seq) {
				disordered.increment();
			}
			if (plan.handlerMs() > 0) {
				Thread.sleep(plan.handlerMs());
			}
			if (seq >= plan.steadyBase()) {
				int n = (int) (seq - plan.steadyBase());
				log.attempted(n);
				log.succeeded(n, now - Records.sentNanos(record.value()));
			}
			else {
				flood.record(seq);
				alone.record(seq);
			}
		};
		int calmFrom = 0;
		int calmTo = 0;
		int floodTo = 0;
		int sent = 0;
		long[] floodInFlight = { -1 };
		double behind = Double.NaN;
		double written = Double.NaN;
		String error = null;
		try (Running running = start(contender, topic, id, plan, workload)) {
			PacedSender sender = new PacedSender(this.broker, topic, "p10-sender", plan.steadyRate(), capacity,
					(n, sentNanos) -> steadyRecord(topic, plan, n, sentNanos));
			boolean exhausted;
			try {
				sender.start();
				// the contender consumes once one of the senders' records is handled
				await(() -> log.distinct() > 0, running, "No record of " + STEADY + " was handled");
				TimeUnit.SECONDS.sleep(plan.settleSeconds()); // pacing, not a wait for a
																// result
				calmFrom = sender.sent();
				TimeUnit.SECONDS.sleep(plan.calmSeconds()); // pacing, not a wait for a
															// result
				calmTo = sender.sent();
				long writing = System.nanoTime();
				this.broker.fill(plan.flood(), (i) -> floodRecord(topic, plan, i));
				written = (System.nanoTime() - writing) / 1e6;
				await(() -> {
					floodInFlight[0] = Math.max(floodInFlight[0], running.inFlight(FLOODER));
					return flood.isComplete();
				}, running, FLOODER + "'s flood was not handled");
				floodTo = sender.sent();
			}
			finally {
				exhausted = sender.exhausted();
				sent = sender.stop();
				behind = sender.behindMillis();
			}
			if (exhausted) {
				throw new IllegalStateException(
						"The sender sent its " + capacity + " records before the flood was " + "handled");
			}
			int all = sent;
			await(() -> log.distinct() >= all, running, "Not every record of " + STEADY + " was handled");
			this.broker.fill(plan.flood(), (i) -> floodRecord(topic, plan, plan.flood() + i));
			await(alone::isComplete, running, FLOODER + " alone was not handled");
			if (disordered.sum() > 0) {
				throw new IllegalStateException(
						disordered.sum() + " records were handled after a later record of their key");
			}
		}
		catch (InterruptedException ex) {
			throw ex;
		}
		catch (ContenderUnavailableException ex) {
			report.excluded(contender, ex.getMessage());
			this.logger.warn("P10 " + label(run) + " " + contender + " left out: " + ex.getMessage());
			return Map.of();
		}
		catch (Exception | LinkageError ex) {
			error = describe(ex);
			this.logger.warn("P10 " + label(run) + " " + contender + " failed", ex);
		}
		long handled = (long) flood.distinct() + alone.distinct() + Math.min(log.distinct(), sent);
		long expected = 2L * plan.flood() + sent;
		report.completion(contender, run, handled, expected, error);
		boolean complete = error == null && handled == expected;
		Latencies.Summary calm = log.latencies(calmFrom, calmTo, (n) -> true);
		Latencies.Summary during = log.latencies(calmTo, floodTo, (n) -> true);
		Map<String, Double> result = new LinkedHashMap<>();
		result.put("flood p50", complete ? during.percentileMillis(0.50) : Double.NaN);
		result.put("flood p99", complete ? during.percentileMillis(0.99) : Double.NaN);
		result.put("flood max", complete ? during.maxMillis() : Double.NaN);
		result.put("calm p99", complete ? calm.percentileMillis(0.99) : Double.NaN);
		result.put("flood records/s", complete ? flood.perSecond() : Double.NaN);
		result.put("alone records/s", complete ? alone.perSecond() : Double.NaN);
		result.put("flood latencies", (double) during.count());
		result.put("calm latencies", (double) calm.count());
		result.put("out of order", (double) disordered.sum());
		result.put("A in flight max", (floodInFlight[0] >= 0) ? floodInFlight[0] : Double.NaN);
		result.put("behind", behind);
		result.put("flood written ms", written);
		List<Double> seconds = new ArrayList<>();
		for (int from = calmTo; complete && from < floodTo; from += plan.steadyRate()) {
			seconds.add(log.latencies(from, Math.min(floodTo, from + plan.steadyRate()), (n) -> true)
				.percentileMillis(0.99));
		}
		this.timelines.put(contender, seconds);
		this.logger.info(String.format(Locale.ROOT, "P10 %s %-40s %s-%s p99 in each second of the flood: %s",
				label(run), contender, STEADY.get(0), STEADY.get(STEADY.size() - 1),
				String.join(" · ", seconds.stream().map(Format::latency).toList())));
		this.logger.info(String.format(Locale.ROOT,
				"P10 %s %-40s %s-%s: flood p50 %s, p99 %s, max %s (%,d records), calm p99 %s (%,d records); %s: "
						+ "%s in the flood, %s alone; %,d out of order; sender at most %s behind%s",
				label(run), contender, STEADY.get(0), STEADY.get(STEADY.size() - 1),
				Format.latency(during.percentileMillis(0.50)), Format.latency(during.percentileMillis(0.99)),
				Format.latency(during.maxMillis()), during.count(), Format.latency(calm.percentileMillis(0.99)),
				calm.count(), FLOODER, Format.perSecond(flood.perSecond()), Format.perSecond(alone.perSecond()),
				disordered.sum(), Format.latency(behind), (error != null) ? "; " + error : ""));
		return result;
	}

	/** Starts a contender; once this returns it consumes every partition of the topic. */
	private Running start(String contender, String topic, String id, Plan plan, Workload workload) throws Exception {
		if (contender.equals(PARALLEL)) {
			ParallelConsumerRunner.Running parallel;
			try {
				parallel = ParallelConsumerRunner.start(bootstrapServers(), topic, id, plan.workers(), workload);
			}
			catch (RuntimeException | LinkageError ex) {
				throw new ContenderUnavailableException(describe(ex), ex);
			}
			return new Running() {

				@Override
				public void check() throws ContenderUnavailableException {
					try {
						parallel.check();
					}
					catch (IllegalStateException ex) {
						throw new ContenderUnavailableException(describe(ex), ex);
					}
				}

				@Override
				public void close() {
					parallel.close();
				}

			};
		}
		ConfigurableApplicationContext context = contender.equals(TENANTS)
				? ListenerApplications.fair(bootstrapServers(), topic, id, plan.workers(), HEADER, "", workload,
						List.of())
				: ListenerApplications.ordered(bootstrapServers(), topic, id, plan.workers(), workload);
		Running running = new Running() {

			@Override
			public long inFlight(String tenant) {
				RetryContainer container = context.getBean(ListenerRegistry.class).container(id);
				FairShare share = (container != null) ? container.fairShare() : null;
				TenantTally tally = (share != null) ? share.tenantTally() : null;
				return (tally != null && tally.isTagged(tenant)) ? tally.figuresOf(tenant).inFlight() : -1;
			}

			@Override
			public void close() {
				context.close();
			}

		};
		try {
			// every partition held and every sync barrier open
			await(() -> {
				RetryContainer container = context.getBean(ListenerRegistry.class).container(id);
				return container != null && container.closedBarriers().isEmpty()
						&& container.assignment()
							.stream()
							.filter((partition) -> partition.topic().equals(topic))
							.count() == plan.partitions();
			}, running, "The instance was not assigned every partition");
		}
		catch (Exception ex) {
			running.close();
			throw ex;
		}
		return running;
	}

	/**
	 * Waits until {@code done}, checking that the contender still runs.
	 * @throws IllegalStateException when the timeout passes first
	 */
	private void await(BooleanSupplier done, Running running, String failure) throws Exception {
		long deadline = System.nanoTime() + timeout().toNanos();
		while (!done.getAsBoolean()) {
			running.check();
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException(failure + " within " + timeout().toSeconds() + " s");
			}
			TimeUnit.MILLISECONDS.sleep(20); // the contender, not a result of this thread
		}
	}

	private static ProducerRecord<byte[], byte[]> floodRecord(String topic, Plan plan, long seq) {
		return new ProducerRecord<>(topic, null, Records.key("a-" + (seq % plan.floodKeys())),
				Records.value(seq, plan.valueBytes()), List.of(tenant(FLOODER)));
	}

	private static ProducerRecord<byte[], byte[]> steadyRecord(String topic, Plan plan, int n, long sentNanos) {
		String tenant = STEADY.get(n % STEADY.size());
		int key = (n / STEADY.size()) % plan.tenantKeys();
		return new ProducerRecord<>(topic, null, Records.key(tenant.toLowerCase(Locale.ROOT) + "-" + key),
				Records.timedValue(plan.steadyBase() + n, sentNanos, plan.valueBytes()), List.of(tenant(tenant)));
	}

	private static Header tenant(String tenant) {
		return new RecordHeader(HEADER, tenant.getBytes(StandardCharsets.UTF_8));
	}

	private static String slug(String contender) {
		return contender.equals(TENANTS) ? "tenants" : contender.equals(NO_TENANTS) ? "no-tenants" : "parallel";
	}

	/** A contender while it runs. */
	private interface Running extends AutoCloseable {

		/** Throws when the contender stopped by itself. */
		default void check() throws Exception {
		}

		/**
		 * How many records of a tenant the contender holds in memory now, -1 when it does
		 * not tell.
		 */
		default long inFlight(String tenant) {
			return -1;
		}

		@Override
		void close();

	}

	/**
	 * The sizes of P10 and the records' sequence numbers: A's flood from 0, A alone after
	 * it, the steady tenants' records after both.
	 *
	 * @param flood records of A's flood, and of A alone
	 * @param floodKeys A's keys
	 * @param tenantRate records a second of each steady tenant
	 * @param tenantKeys keys of each steady tenant
	 * @param handlerMs how long the handler sleeps
	 * @param workers workers of the library, maxConcurrency of Parallel Consumer
	 * @param partitions partitions of the topic
	 * @param settleSeconds sending before the calm seconds
	 * @param calmSeconds the calm seconds
	 * @param valueBytes the size of each value
	 */
	record Plan(int flood, int floodKeys, int tenantRate, int tenantKeys, int handlerMs, int workers, int partitions,
			int settleSeconds, int calmSeconds, int valueBytes) {

		static Plan of(BenchmarkSettings settings) {
			return new Plan(settings.count("p10-flood-records"), settings.count("p10-flood-keys"),
					settings.count("p10-tenant-rate"), settings.count("p10-tenant-keys"),
					settings.count("p10-handler-ms"), settings.count("p10-workers"), settings.count("p10-partitions"),
					settings.count("p10-settle-seconds"), settings.count("p10-calm-seconds"),
					settings.count("value-bytes"));
		}

		int steadyRate() {
			return this.tenantRate * STEADY.size();
		}

		/** The sequence number of the steady tenants' first record. */
		long steadyBase() {
			return 2L * this.flood;
		}

		/** Every key: A's, then each steady tenant's. */
		int keys() {
			return this.floodKeys + STEADY.size() * this.tenantKeys;
		}

		/** The index of the key of record {@code seq}, as {@link #keys()} counts them. */
		int keyOf(long seq) {
			if (seq < steadyBase()) {
				return (int) (seq % this.floodKeys);
			}
			long n = seq - steadyBase();
			return this.floodKeys + (int) (n % STEADY.size()) * this.tenantKeys
					+ (int) ((n / STEADY.size()) % this.tenantKeys);
		}

	}

}
