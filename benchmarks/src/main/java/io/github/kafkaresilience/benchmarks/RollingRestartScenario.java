package io.github.kafkaresilience.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.KafkaException;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.FixedBackOff;

/**
 * P9R, a rolling restart under load: a few instances of one group (applications in this
 * JVM) read a topic that records are sent to at a steady rate; after a steady stretch
 * each instance in turn is closed gracefully and started again, the next one once the new
 * one is ready, and sending goes on through the roll and for a few seconds after it. A
 * small share of the keys fail now and then, so that retries are under way when
 * partitions move. Measures, for the keys that never fail, the produce-to-handle latency
 * of the records sent during the roll, and, over every record, those handled twice and
 * those never handled; for the library and for a plain {@code @KafkaListener} with
 * {@code DefaultErrorHandler}, on the same handler and the same roll, in each group
 * protocol.
 * <p>
 * There is no warm-up run: the roll's rebalances, not the JIT, set the latencies
 * measured, and each contender runs under load for some seconds before its roll.
 */
final class RollingRestartScenario extends Scenario {

	/** A plain listener whose failed record is retried in place. */
	static final String BLOCKING = PLAIN + " + DefaultErrorHandler";

	static final List<String> CONTENDERS = List.of(ORDERED, BLOCKING);

	/** The plain listener's tries of a failed record, the first one included. */
	private static final int BLOCKING_ATTEMPTS = 10;

	private static final List<String> COLUMNS = List.of("p50", "p99", "max", "steady p99", "pause", "twice", "lost",
			"roll", "slowest restart", "behind", "latencies");

	RollingRestartScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	/**
	 * The name of a contender in one group protocol, as the report's completions give it.
	 */
	static String contender(String contender, String protocol) {
		return contender + ", " + protocol;
	}

	@Override
	ScenarioReport run() throws Exception {
		Plan plan = Plan.of(this.settings);
		ScenarioReport report = new ScenarioReport("P9R", "Rolling restart of " + plan.instances() + " instances under "
				+ Format.count(plan.rate()) + " records/s");
		describe(report, plan);
		Map<String, Map<String, Series>> series = new LinkedHashMap<>();
		for (String protocol : plan.protocols()) {
			for (String contender : CONTENDERS) {
				Map<String, Series> values = new LinkedHashMap<>();
				COLUMNS.forEach((column) -> values.put(column, new Series()));
				series.put(contender(contender, protocol), values);
			}
		}
		for (int run : runs(false)) {
			for (String protocol : plan.protocols()) {
				for (String contender : rotated(CONTENDERS, run)) {
					Map<String, Series> values = series.get(contender(contender, protocol));
					runOnce(report, plan, contender, protocol, run, values);
				}
			}
		}
		for (String protocol : plan.protocols()) {
			Map<String, Series> ordered = series.get(contender(ORDERED, protocol));
			Map<String, Series> blocking = series.get(contender(BLOCKING, protocol));
			Series ratio = Series.ratio(ordered.get("p99"), blocking.get("p99"));
			List<List<String>> rows = new ArrayList<>();
			for (String contender : CONTENDERS) {
				String name = contender(contender, protocol);
				Map<String, Series> values = series.get(name);
				rows.add(List.of(name, Format.latency(values.get("p50").median()),
						Format.latency(values.get("p99").median()), Format.latency(values.get("max").median()),
						values.get("p99").runs(Format::count),
						contender.equals(ORDERED) ? Format.ratio(ratio.median()) : "–",
						Format.latency(values.get("steady p99").median()), Format.latency(values.get("pause").median()),
						values.get("twice").runs(Format::count), values.get("lost").runs(Format::count),
						Format.seconds(values.get("roll").median()),
						Format.seconds(values.get("slowest restart").median()),
						Format.latency(values.get("behind").median())));
				report.measured(name + " p50 ms", values.get("p50").median());
				report.measured(name + " p99 ms", values.get("p99").median());
				report.measured(name + " max ms", values.get("max").median());
				report.measured(name + " latencies", values.get("latencies").median());
				report.measured(name + " handled twice", values.get("twice").max());
				report.measured(name + " never handled", values.get("lost").max());
				report.measured(name + " roll ms", values.get("roll").median());
			}
			report.table(List.of(protocol + " protocol", "roll p50", "roll p99", "roll max", "p99, every run (ms)",
					"p99 vs " + BLOCKING, "p99 before the roll", "longest key pause", "handled twice, every run",
					"never handled, every run", "roll took", "slowest restart", "sender behind schedule (max)"), rows);
			report.target(
					"never-failing keys' produce-to-handle p99 of the records sent during the roll ≤ " + BLOCKING
							+ "'s (" + protocol + " protocol)",
					ratio.median(), Format.ratio(ratio.median()) + " (" + Format.latency(ordered.get("p99").median())
							+ " vs " + Format.latency(blocking.get("p99").median()) + ")",
					false, 1.0);
			report.measured(contender(ORDERED, protocol) + " p99 vs blocking", ratio.median());
		}
		report.note("Roll p50, p99, max: over the records of never-failing keys sent from just before the first "
				+ "instance was closed until the last new instance was ready; p99 before the roll: the same over the "
				+ "steady stretch before it. Longest key pause: for two records of one never-failing key sent one after "
				+ "the other during the roll (" + Format.latency(1000.0 * plan.keys() / plan.rate())
				+ " apart), how much " + "longer the second waited than the first, the most of any pair.");
		report.note("Handled twice: records the handler succeeded on more than once, because their partition moved "
				+ "before their offsets were committed; never handled: records sent that no call succeeded on within "
				+ "the timeout after sending stopped (any makes the run incomplete); both over every record of the run. "
				+ "Roll took: from closing the first instance until the last new one was ready; slowest restart: the "
				+ "longest of one instance's close, start and wait until ready.");
		report.note("Every instance, the broker and the sender share this JVM and the machine's cores: an application "
				+ "starting during the roll takes CPU from the instances at work. The last column is how far the sender "
				+ "fell behind its schedule at worst; when it is large, the latencies are taken at a lower rate.");
		return report;
	}

	private void describe(ScenarioReport report, Plan plan) {
		report
			.setup(String.format(Locale.ROOT, "%d instances of one group, each an application of its own in this JVM, "
					+ "on a new topic of %d partitions; %,d records/s of %d bytes over %,d keys in turn (record n on key n mod "
					+ "%,d), sent from when every instance holds partitions: %d s steady, then the roll, then %d s more; "
					+ "group protocols: %s, each with its default assignor; no-op handler", plan.instances(),
					plan.partitions(), plan.rate(), Math.max(plan.valueBytes(), 2 * Long.BYTES), plan.keys(),
					plan.keys(), plan.steadySeconds(), plan.afterSeconds(), String.join(", ", plan.protocols())));
		report.setup((plan.flakyEvery() > 0) ? String.format(Locale.ROOT, "one key in %d is flaky (%,d keys): one "
				+ "record in %d of each flaky key, staggered over the keys, fails once, on the first call of the handler "
				+ "on it, with a transient exception, and succeeds on the next (about %.1f records/s); the other keys "
				+ "never fail, and only their records are measured", plan.flakyEvery(), plan.flakyKeys(),
				plan.failEvery(), (double) plan.rate() / plan.flakyEvery() / plan.failEvery())
				: "no key fails: every record is measured");
		report.setup(String.format(Locale.ROOT, "%s: %d workers an instance, retry delays %s, the same "
				+ "kafka.resilience.instance-id for an instance and the one that replaces it; ready: its listener holds "
				+ "partitions of the topic and none of its sync barriers is closed", ORDERED, plan.workers(),
				plan.delays()));
		report.setup(String.format(Locale.ROOT, "%s: a plain @KafkaListener with %d consumer(s) an instance and a "
				+ "DefaultErrorHandler with FixedBackOff(%d ms, %d attempts) given as a bean: the failed record is tried "
				+ "again in place and its partition waits; Spring Boot's and Spring Kafka's defaults otherwise; ready: "
				+ "its listener holds partitions of the topic", BLOCKING, plan.plainConsumers(),
				plan.plainBackOffMillis(), BLOCKING_ATTEMPTS));
		report.setup("the roll: instance 0's application closed gracefully, a new one started in its place, and once "
				+ "that one is ready the next instance, to the last; latency: from just before the producer is handed a "
				+ "record (System.nanoTime() carried in its value) until the handler starts the call that succeeds on "
				+ "it; medians over runs, the ratio the median of the per-run ratios of the p99s");
	}

	private void runOnce(ScenarioReport report, Plan plan, String contender, String protocol, int run,
			Map<String, Series> values) throws InterruptedException {
		boolean library = contender.equals(ORDERED);
		String name = contender(contender, protocol);
		String id = "p9r-" + (library ? "ordered" : "blocking") + "-" + protocol + "-" + label(run);
		String topic = this.broker.newTopic(id, plan.partitions());
		int capacity = (int) Math.min(Integer.MAX_VALUE,
				(long) plan.rate() * (plan.steadySeconds() + plan.afterSeconds() + timeout().toSeconds()));
		HandleLog log = new HandleLog(capacity);
		IntPredicate measured = (seq) -> !plan.flakyKey(seq);
		Workload workload = (record) -> {
			long now = System.nanoTime();
			long seq = Records.seq(record.value());
			if (log.attempted(seq) && plan.failsOnce(seq)) {
				throw new IllegalStateException("planned transient failure of record " + seq);
			}
			log.succeeded(seq, now - Records.sentNanos(record.value()));
		};
		RollingGroup.Launcher launcher = (index) -> library
				? ListenerApplications.ordered(bootstrapServers(), topic, id, plan.workers(), workload,
						"kafka.resilience.instance-id=" + id + "-" + index,
						"kafka.resilience.retry.delays=" + plan.delays(),
						"spring.kafka.consumer.properties.group.protocol=" + protocol)
				: ListenerApplications.plain(bootstrapServers(), topic, id, plan.plainConsumers(), workload,
						List.of(blockingErrorHandler(plan)),
						"spring.kafka.consumer.properties.group.protocol=" + protocol);
		int rollFrom = 0;
		int rollTo = 0;
		int sent = 0;
		long rollNanos = -1;
		long slowest = -1;
		double behind = Double.NaN;
		String error = null;
		try (RollingGroup group = new RollingGroup(id, topic, library, launcher)) {
			group.start(plan.instances(), plan.partitions(), timeout());
			PacedSender sender = new PacedSender(this.broker, topic, plan.rate(), plan.keys(), plan.valueBytes(),
					capacity);
			boolean exhausted;
			try {
				sender.start();
				TimeUnit.SECONDS.sleep(plan.steadySeconds()); // the steady stretch:
																// pacing, not a wait for
																// a result
				rollFrom = sender.sent();
				long rollStarted = System.nanoTime();
				for (int i = 0; i < plan.instances(); i++) {
					RollingGroup.Restart restart = group.restart(i, timeout());
					slowest = Math.max(slowest, restart.totalNanos());
					this.logger.info(String.format(Locale.ROOT,
							"P9R %s %s: instance %d closed in %s, started in %s, " + "ready %s later", label(run), name,
							i, Format.seconds(restart.closeNanos() / 1e6), Format.seconds(restart.startNanos() / 1e6),
							Format.seconds(restart.readyNanos() / 1e6)));
				}
				rollTo = sender.sent();
				rollNanos = System.nanoTime() - rollStarted;
				TimeUnit.SECONDS.sleep(plan.afterSeconds()); // load after the roll:
																// pacing, not a wait for
																// a result
			}
			finally {
				exhausted = sender.exhausted();
				sent = sender.stop();
				behind = sender.behindMillis();
			}
			if (exhausted) {
				throw new IllegalStateException("The sender sent its " + capacity + " records before the roll and the "
						+ "seconds after it were over");
			}
			if (!log.await(sent, timeout())) {
				error = "timed out after " + timeout().toSeconds() + " s";
			}
		}
		catch (InterruptedException ex) {
			throw ex;
		}
		catch (Exception | LinkageError ex) {
			error = describe(ex);
			this.logger.warn("P9R " + label(run) + " " + name + " failed", ex);
		}
		report.completion(name, run, Math.min(log.distinct(), sent), sent, error);
		boolean complete = error == null && log.distinct() >= sent;
		Latencies.Summary roll = log.latencies(rollFrom, rollTo, measured);
		Latencies.Summary steady = log.latencies(0, rollFrom, measured);
		double pause = log.longestPauseMillis(rollFrom, rollTo, plan.keys(), measured);
		int twice = log.handledMoreThanOnce(sent);
		int lost = sent - Math.min(log.distinct(), sent);
		values.get("p50").add(complete ? roll.percentileMillis(0.50) : Double.NaN);
		values.get("p99").add(complete ? roll.percentileMillis(0.99) : Double.NaN);
		values.get("max").add(complete ? roll.maxMillis() : Double.NaN);
		values.get("steady p99").add(complete ? steady.percentileMillis(0.99) : Double.NaN);
		values.get("pause").add(complete ? pause : Double.NaN);
		values.get("twice").add(twice);
		values.get("lost").add(lost);
		values.get("roll").add((rollNanos >= 0) ? rollNanos / 1e6 : Double.NaN);
		values.get("slowest restart").add((slowest >= 0) ? slowest / 1e6 : Double.NaN);
		values.get("behind").add(behind);
		values.get("latencies").add(roll.count());
		this.logger.info(String.format(Locale.ROOT, "P9R %s %-40s %,d records sent, %,d during the roll (%s); "
				+ "never-failing keys during the roll: p50 %s, p99 %s, max %s (%,d records), before it p99 %s; longest "
				+ "key pause %s; %,d handled twice, %,d never handled; sender at most %s behind%s", label(run), name,
				sent, rollTo - rollFrom, Format.seconds(rollNanos / 1e6), Format.latency(roll.percentileMillis(0.50)),
				Format.latency(roll.percentileMillis(0.99)), Format.latency(roll.maxMillis()), roll.count(),
				Format.latency(steady.percentileMillis(0.99)), Format.latency(pause), twice, lost,
				Format.latency(behind), (error != null) ? "; " + error : ""));
	}

	private static DefaultErrorHandler blockingErrorHandler(Plan plan) {
		DefaultErrorHandler errorHandler = new DefaultErrorHandler(
				new FixedBackOff(plan.plainBackOffMillis(), BLOCKING_ATTEMPTS - 1));
		// every failure is planned: no stack trace for each
		errorHandler.setLogLevel(KafkaException.Level.DEBUG);
		return errorHandler;
	}

	/**
	 * The settings of P9R and which records fail.
	 *
	 * @param instances instances of the group
	 * @param partitions partitions of the topic
	 * @param rate records sent per second
	 * @param keys distinct keys, taken in turn
	 * @param steadySeconds sending before the roll
	 * @param afterSeconds sending after the roll
	 * @param flakyEvery one key in n is flaky, 0 for none
	 * @param failEvery one record in n of a flaky key fails once
	 * @param workers the library's workers an instance
	 * @param delays the library's retry delays
	 * @param plainConsumers the plain listener's consumers an instance
	 * @param plainBackOffMillis the plain listener's pause before it tries a failed
	 * record again
	 * @param valueBytes the size of each value
	 * @param protocols the group protocols
	 */
	record Plan(int instances, int partitions, int rate, int keys, int steadySeconds, int afterSeconds, int flakyEvery,
			int failEvery, int workers, String delays, int plainConsumers, int plainBackOffMillis, int valueBytes,
			List<String> protocols) {

		static Plan of(BenchmarkSettings settings) {
			return new Plan(settings.count("p9r-instances"), settings.count("p9r-partitions"),
					settings.count("p9r-rate"), settings.count("p9r-keys"), settings.count("p9r-steady-seconds"),
					settings.count("p9r-after-seconds"), settings.count("p9r-flaky-every"),
					settings.count("p9r-fail-every"), settings.count("concurrency"), settings.text("p9r-delays"),
					settings.count("p9r-plain-consumers"), settings.count("p9r-plain-back-off-ms"),
					settings.count("value-bytes"),
					List.of(settings.text("p9r-protocols").split(",")).stream().map(String::trim).toList());
		}

		/** Whether the key of record {@code seq} is flaky. */
		boolean flakyKey(long seq) {
			return this.flakyEvery > 0 && (seq % this.keys) % this.flakyEvery == this.flakyEvery - 1;
		}

		/**
		 * Whether record {@code seq} fails on its first call: one in {@code failEvery} of
		 * a flaky key's records, each flaky key starting at a different one.
		 */
		boolean failsOnce(long seq) {
			long key = seq % this.keys;
			return flakyKey(seq) && (seq / this.keys + key / this.flakyEvery) % this.failEvery == 0;
		}

		int flakyKeys() {
			return (this.flakyEvery > 0) ? this.keys / this.flakyEvery : 0;
		}

	}

}
