package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

import io.github.kafkaresilience.internal.container.FairShare;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * P10R, a rate limit: a backlog far larger than the limit lets through in a second, read
 * by the library with {@code rateLimit}, which holds the records in its queue until their
 * turn without holding a worker, and by the same listener without it whose handler blocks
 * on a Resilience4j {@link RateLimiter} first, holding the worker while it waits.
 * Measured: the rate achieved, the most calls in any one second, and the process's CPU
 * time a second while the limit holds the records back.
 */
final class RateLimitScenario extends Scenario {

	/** The library with {@code rateLimit}. */
	static final String LIBRARY = ORDERED + "(rateLimit)";

	/** The library without a rate limit, its handler blocking on Resilience4j's. */
	static final String RESILIENCE4J = ORDERED + ", Resilience4j RateLimiter in the handler";

	static final List<String> CONTENDERS = List.of(LIBRARY, RESILIENCE4J);

	/**
	 * CPU is taken between these shares of the records handled: the start and the end,
	 * when workers fill up or run dry, are left out.
	 */
	private static final double CPU_FROM = 0.1;

	private static final double CPU_TO = 0.9;

	private static final long SECOND = 1_000_000_000L;

	private static final List<String> VALUES = List.of("records/s", "max in a second", "cpu", "idle cpu");

	RateLimitScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	/**
	 * The most calls the library may make in any one second with a record listener, as
	 * docs/CONFIGURATION.md states it: the limit, plus the permits that catching up may
	 * book late (2 ms' worth, at least one), plus one. A record listener's batch is its
	 * one record, so it adds nothing.
	 */
	static int allowed(int rate) {
		return rate + catchUp(rate) + 1;
	}

	/** The permits a limit of {@code rate} may book late: 2 ms' worth, at least one. */
	static int catchUp(int rate) {
		return (int) Math.max(1, rate * 2L / 1000);
	}

	@Override
	ScenarioReport run() throws Exception {
		int records = this.settings.count("p10r-records");
		int rate = this.settings.count("p10r-rate");
		int periodMs = this.settings.count("p10r-period-ms");
		int workers = this.settings.count("p10r-workers");
		int handlerMs = this.settings.count("p10r-handler-ms");
		int partitions = this.settings.count("p10r-partitions");
		int keys = this.settings.count("p10r-keys");
		int valueBytes = this.settings.count("value-bytes");
		int perPeriod = (int) Math.max(1, (long) rate * periodMs / 1000);
		ScenarioReport report = new ScenarioReport("P10R", "Rate limit: " + rate + " records/s");
		report.setup(String.format(Locale.ROOT, "%,d records of %d bytes over %,d keys in %d partitions, written "
				+ "before the contenders start (%.0f s of records at the limit); the handler sleeps %d ms; %d workers",
				records, valueBytes, keys, partitions, (double) records / rate, handlerMs, workers));
		report.setup(String.format(Locale.ROOT, "%s: rateLimit = \"%d\", the library's defaults otherwise; the "
				+ "records wait in its queue for their turn, holding no worker", LIBRARY, rate));
		report.setup(String.format(Locale.ROOT, "%s: the same listener without rateLimit; its handler first calls "
				+ "acquirePermission() on a Resilience4j %s RateLimiter with limitForPeriod=%d, "
				+ "limitRefreshPeriod=%d ms (%d records/s) and a timeoutDuration of the suite's timeout, so a worker "
				+ "waits there for its permit", RESILIENCE4J, Versions.resilience4jRateLimiter(), perPeriod, periodMs,
				perPeriod * 1000 / periodMs));
		report.setup(String.format(Locale.ROOT, "a call: when the handler's work starts (after acquirePermission() "
				+ "returns, for Resilience4j); rate: records from the first one handled to the last; most calls in any "
				+ "1 s: over every window of one second of the run; CPU while throttling: the process's CPU time (the "
				+ "broker's included) a second of wall time, from %.0f %% to %.0f %% of the records handled; at rest: "
				+ "the same over 1 s before the contender starts", CPU_FROM * 100, CPU_TO * 100));

		String topic = this.broker.newTopic("p10r", partitions);
		this.broker.fill(records,
				(i) -> new ProducerRecord<>(topic, Records.key("key-" + (i % keys)), Records.value(i, valueBytes)));

		Map<String, Map<String, Series>> values = new LinkedHashMap<>();
		for (String contender : CONTENDERS) {
			Map<String, Series> series = new LinkedHashMap<>();
			VALUES.forEach((value) -> series.put(value, new Series()));
			values.put(contender, series);
		}
		// no warm-up run: the limit, not the JIT, sets the pace
		for (int run : runs(false)) {
			for (String contender : rotated(CONTENDERS, run)) {
				Map<String, Double> result = runOnce(report, contender, run, topic, records, rate, perPeriod, periodMs,
						workers, handlerMs);
				VALUES.forEach((value) -> values.get(contender).get(value).add(result.getOrDefault(value, Double.NaN)));
			}
		}

		Series reference = values.get(RESILIENCE4J).get("cpu");
		List<List<String>> rows = new ArrayList<>();
		for (String contender : CONTENDERS) {
			Map<String, Series> series = values.get(contender);
			Series vsLimit = Series.ratio(series.get("records/s"), rate);
			Series cpuRatio = Series.ratio(series.get("cpu"), reference);
			rows.add(List.of(contender, Format.perSecond(series.get("records/s").median()),
					series.get("records/s").runs(Format::count), Format.ratio(vsLimit.median()),
					Format.count(series.get("max in a second").median()),
					series.get("max in a second").runs(Format::count), cpu(series.get("cpu").median()),
					series.get("cpu").runs(RateLimitScenario::cpu), cpu(series.get("idle cpu").median()),
					contender.equals(RESILIENCE4J) ? "–" : Format.ratio(cpuRatio.median())));
			report.measured(contender + " records/s", series.get("records/s").median());
			report.measured(contender + " max in any second", series.get("max in a second").median());
			report.measured(contender + " CPU ms/s", series.get("cpu").median());
			report.measured(contender + " CPU ms/s at rest", series.get("idle cpu").median());
			if (contender.equals(LIBRARY)) {
				double achieved = series.get("records/s").median();
				double deviation = Math.abs(achieved / rate - 1);
				report.target(
						String.format(Locale.ROOT, "achieved rate within %,d ± 5 %% records/s (%s)", rate, LIBRARY),
						deviation,
						Format.perSecond(achieved) + " ("
								+ (Double.isNaN(achieved) ? "–"
										: String.format(Locale.ROOT, "%+.1f %%", (achieved / rate - 1) * 100))
								+ ")",
						false, 0.05);
				double most = series.get("max in a second").median();
				report.target(String.format(Locale.ROOT,
						"most handler calls in any 1 s ≤ %,d: the limit plus one batch, a record listener's being the "
								+ "%d permit(s) catching up may book late plus one (%s)",
						allowed(rate), catchUp(rate), LIBRARY), most, Format.count(most), false, allowed(rate));
				report.target("process CPU a second while throttling ≤ " + RESILIENCE4J + "'s (" + LIBRARY + ")",
						cpuRatio.median(), Format.ratio(cpuRatio.median()) + " (" + cpu(series.get("cpu").median())
								+ " vs " + cpu(reference.median()) + ")",
						false, 1.0);
				report.measured(contender + " CPU vs Resilience4j", cpuRatio.median());
			}
		}
		report.table(List.of("contender", "records/s (median)", "every run", "vs the limit", "most calls in any 1 s",
				"every run", "CPU while throttling", "every run", "CPU at rest", "CPU vs Resilience4j"), rows);
		report.note("CPU is the whole process's: the broker's fetches and the contender's consumers take their share "
				+ "whatever the limiter, so the difference between the contenders is what their waiting costs; CPU at "
				+ "rest is the floor under both.");
		report.note("Resilience4j's limiter lets " + perPeriod + " calls through at the start of each " + periodMs
				+ " ms period, so its calls come in bursts; the library spaces its permits 1/" + rate
				+ " s apart, and books one " + "taken up to 2 ms late for its due time.");
		return report;
	}

	private Map<String, Double> runOnce(ScenarioReport report, String contender, int run, String topic, int records,
			int rate, int perPeriod, int periodMs, int workers, int handlerMs) throws InterruptedException {
		boolean library = contender.equals(LIBRARY);
		String id = "p10r-" + (library ? "library" : "resilience4j") + "-" + label(run);
		Tally tally = new Tally(0, records);
		AtomicLongArray calls = new AtomicLongArray(2 * records);
		AtomicInteger callCount = new AtomicInteger();
		AtomicReference<Mark> from = new AtomicReference<>();
		AtomicReference<Mark> to = new AtomicReference<>();
		int fromCount = Math.max(1, (int) (records * CPU_FROM));
		int toCount = Math.max(fromCount + 1, (int) (records * CPU_TO));
		RateLimiter limiter = library ? null
				: RateLimiter.of(id,
						RateLimiterConfig.custom()
							.limitForPeriod(perPeriod)
							.limitRefreshPeriod(Duration.ofMillis(periodMs))
							.timeoutDuration(timeout())
							.build());
		Workload workload = (record) -> {
			if (limiter != null && !limiter.acquirePermission()) {
				throw new IllegalStateException("No permit within " + timeout().toSeconds() + " s");
			}
			int call = callCount.getAndIncrement();
			if (call < calls.length()) {
				calls.set(call, System.nanoTime());
			}
			if (handlerMs > 0) {
				Thread.sleep(handlerMs);
			}
			tally.record(Records.seq(record.value()));
			int done = tally.distinct();
			if (done >= fromCount && from.get() == null) {
				from.compareAndSet(null, Mark.now());
			}
			if (done >= toCount && to.get() == null) {
				to.compareAndSet(null, Mark.now());
			}
		};
		Mark restFrom = Mark.now();
		TimeUnit.SECONDS.sleep(1); // the process at rest: a measurement, not a wait
		Mark restTo = Mark.now();
		double perSecond = measure(report, contender, run, tally, () -> {
			try (ConfigurableApplicationContext context = library
					? ListenerApplications.fair(bootstrapServers(), topic, id, workers, "", Integer.toString(rate),
							workload, List.of())
					: ListenerApplications.ordered(bootstrapServers(), topic, id, workers, workload)) {
				if (library) {
					RetryContainer container = context.getBean(ListenerRegistry.class).container(id);
					FairShare share = (container != null) ? container.fairShare() : null;
					double limit = (share != null) ? share.rateLimit() : 0;
					if (limit != rate) {
						throw new IllegalStateException(
								"Listener '" + id + "' hands out " + limit + " records/s at most, not " + rate);
					}
				}
				await(tally);
			}
		});
		Map<String, Double> result = new LinkedHashMap<>();
		if (Double.isNaN(perSecond)) {
			return result;
		}
		int made = Math.min(callCount.get(), calls.length());
		long[] times = new long[made];
		for (int i = 0; i < made; i++) {
			times[i] = calls.get(i);
		}
		result.put("records/s", perSecond);
		result.put("max in a second", (double) mostInASecond(times));
		result.put("cpu", Mark.cpuMillisPerSecond(from.get(), to.get()));
		result.put("idle cpu", Mark.cpuMillisPerSecond(restFrom, restTo));
		this.logger.info(String.format(Locale.ROOT,
				"P10R %s %-40s %s, %,d calls at most in any 1 s; CPU %s while throttling, %s at rest", label(run),
				contender, Format.perSecond(perSecond), mostInASecond(times), cpu(result.get("cpu")),
				cpu(result.get("idle cpu"))));
		return result;
	}

	/** The most of these moments ({@link System#nanoTime()}) in any one second. */
	static int mostInASecond(long[] nanos) {
		long[] sorted = nanos.clone();
		Arrays.sort(sorted);
		int most = 0;
		int end = 0;
		for (int start = 0; start < sorted.length; start++) {
			while (end < sorted.length && sorted[end] - sorted[start] < SECOND) {
				end++;
			}
			most = Math.max(most, end - start);
		}
		return most;
	}

	/** CPU milliseconds a second. */
	private static String cpu(double millisPerSecond) {
		return Double.isNaN(millisPerSecond) ? "–" : String.format(Locale.ROOT, "%,.0f ms/s", millisPerSecond);
	}

	/**
	 * A moment and the process's CPU time then.
	 *
	 * @param nanos {@link System#nanoTime()}
	 * @param cpuNanos the process's CPU time, -1 where the JVM does not tell
	 */
	private record Mark(long nanos, long cpuNanos) {

		static Mark now() {
			return new Mark(System.nanoTime(), processCpuNanos());
		}

		/** CPU milliseconds a second of wall time between two moments. */
		static double cpuMillisPerSecond(@Nullable Mark from, @Nullable Mark to) {
			if (from == null || to == null || from.cpuNanos() < 0 || to.cpuNanos() < 0 || to.nanos() <= from.nanos()) {
				return Double.NaN;
			}
			return (to.cpuNanos() - from.cpuNanos()) * 1000.0 / (to.nanos() - from.nanos());
		}

	}

}
