package io.github.kafkaresilience.benchmarks;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * P2W, an I/O-bound handler at high concurrency: every record waits a fixed time (a
 * sleep, standing for a call to another service) on one partition with many keys, so
 * throughput comes only from how many records run at once. P2 asks whether the library
 * keeps 16 workers busy; P2W asks it of hundreds and thousands, where a platform thread
 * per worker starts to cost. The library runs on platform threads at the first
 * concurrency and on virtual threads at each, against Confluent's Parallel Consumer with
 * KEY ordering at the same concurrency.
 * <p>
 * Virtual threads need Java 21: on an older JVM those contenders are reported as not run,
 * not as failed. The handler notes on which kind of thread it ran, so that the report
 * says so when a library without the virtual-thread switch ran a "virtual threads"
 * contender on platform threads.
 */
final class IoBoundHandlerScenario extends Scenario {

	/** The library's switch to virtual worker threads (Java 21+). */
	static final String VIRTUAL_THREADS = "kafka.resilience.consumer.virtual-threads";

	/**
	 * The records/s the library is to reach on virtual threads at the highest
	 * concurrency.
	 */
	private static final double VIRTUAL_TARGET = 60_000;

	/** The library's default {@code max-in-flight-per-partition}. */
	private static final int DEFAULT_IN_FLIGHT = 1000;

	/** {@code Thread.isVirtual()}, which Java 17 does not have; {@code null} there. */
	private static final @Nullable MethodHandle IS_VIRTUAL = isVirtualHandle();

	enum Kind {

		PLATFORM, VIRTUAL, PARALLEL

	}

	/**
	 * One contender of the scenario.
	 *
	 * @param name its name in the report
	 * @param kind the library on platform or virtual threads, or Parallel Consumer
	 * @param concurrency the records it runs at once at most
	 */
	record Contender(String name, Kind kind, int concurrency) {

		boolean parallel() {
			return this.kind == Kind.PARALLEL;
		}

	}

	IoBoundHandlerScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	/**
	 * The contenders for these concurrencies: the library on platform threads at the
	 * first, then at each the library on virtual threads and Parallel Consumer.
	 */
	static List<Contender> contenders(List<Integer> concurrencies) {
		List<Contender> contenders = new ArrayList<>();
		contenders.add(new Contender(name(Kind.PLATFORM, concurrencies.get(0)), Kind.PLATFORM, concurrencies.get(0)));
		for (int concurrency : concurrencies) {
			contenders.add(new Contender(name(Kind.VIRTUAL, concurrency), Kind.VIRTUAL, concurrency));
			contenders.add(new Contender(name(Kind.PARALLEL, concurrency), Kind.PARALLEL, concurrency));
		}
		return contenders;
	}

	static String name(Kind kind, int concurrency) {
		return switch (kind) {
			case PLATFORM -> ORDERED + ", " + Format.count(concurrency) + " platform threads";
			case VIRTUAL -> ORDERED + ", " + Format.count(concurrency) + " virtual threads";
			case PARALLEL -> SlowHandlerScenario.PARALLEL + ", " + Format.count(concurrency);
		};
	}

	/** Whether this JVM has virtual threads (Java 21+). */
	static boolean virtualThreadsAvailable() {
		return Runtime.version().feature() >= 21;
	}

	@Override
	ScenarioReport run() throws Exception {
		int records = this.settings.count("p2w-records");
		int keys = this.settings.count("p2w-keys");
		int handlerMs = this.settings.count("p2w-handler-ms");
		List<Integer> concurrencies = this.settings.counts("p2w-concurrency");
		int valueBytes = this.settings.count("value-bytes");
		int first = concurrencies.get(0);
		int last = concurrencies.get(concurrencies.size() - 1);
		ScenarioReport report = new ScenarioReport("P2W",
				"I/O-bound handler at high concurrency: " + handlerMs + " ms per record, one partition");
		report.setup(String.format(Locale.ROOT, "%,d records of %d bytes over %,d keys in 1 partition; the handler "
				+ "sleeps %d ms (a call to another service)", records, valueBytes, keys, handlerMs));
		report
			.setup(String.format(Locale.ROOT, "@OrderedRetryListener: as many workers as the concurrency, on platform "
					+ "threads at %,d and on virtual threads (%s=true, Java 21+) at each of %s; max-in-flight-per-partition "
					+ "raised to twice the workers where the default %,d is less, so that one partition holds enough keys in "
					+ "flight to keep every worker busy", first, VIRTUAL_THREADS, concurrencies, DEFAULT_IN_FLIGHT));
		report
			.setup(String.format(Locale.ROOT, "Parallel Consumer %s: KEY ordering, maxConcurrency as the concurrency, "
					+ "periodic asynchronous consumer commits", ParallelConsumerRunner.version()));
		report.setup(String.format(Locale.ROOT, "ideal: concurrency × 1 record per %d ms (%s)", handlerMs,
				String.join(", ",
						concurrencies.stream()
							.map((concurrency) -> Format.count(concurrency) + ": "
									+ Format.perSecond(ideal(concurrency, handlerMs)))
							.toList())));

		List<Contender> contenders = contenders(concurrencies);
		List<Contender> runnable = new ArrayList<>();
		String virtualUnavailable = virtualThreadsAvailable() ? null
				: "needs Java 21+ (this JVM is Java " + Runtime.version().feature() + ")";
		for (Contender contender : contenders) {
			if (contender.kind() == Kind.VIRTUAL && virtualUnavailable != null) {
				report.excluded(contender.name(), virtualUnavailable);
			}
			else {
				runnable.add(contender);
			}
		}

		String topic = this.broker.newTopic("p2w", 1);
		this.broker.fill(records,
				(i) -> new ProducerRecord<>(topic, Records.key("key-" + (i % keys)), Records.value(i, valueBytes)));

		Map<String, Series> throughput = new LinkedHashMap<>();
		Map<String, Set<String>> threads = new LinkedHashMap<>();
		contenders.forEach((contender) -> {
			throughput.put(contender.name(), new Series());
			threads.put(contender.name(), new LinkedHashSet<>());
		});
		String parallelUnavailable = null;
		for (int run : runs(true)) {
			for (Contender contender : rotated(runnable, run)) {
				if (contender.parallel() && parallelUnavailable != null) {
					continue;
				}
				Tally tally = new Tally(0, records);
				AtomicReference<String> ranOn = new AtomicReference<>();
				Workload workload = (record) -> {
					if (ranOn.get() == null) {
						ranOn.compareAndSet(null, threadKind(Thread.currentThread()));
					}
					Thread.sleep(handlerMs);
					tally.record(Records.seq(record.value()));
				};
				int concurrency = contender.concurrency();
				String id = "p2w-" + contender.kind().name().toLowerCase(Locale.ROOT) + "-" + concurrency + "-"
						+ label(run);
				String inFlight = "kafka.resilience.consumer.max-in-flight-per-partition="
						+ Math.max(DEFAULT_IN_FLIGHT, 2 * concurrency);
				double perSecond = measure(report, contender.name(), run, tally, () -> {
					switch (contender.kind()) {
						case PLATFORM -> {
							try (ConfigurableApplicationContext context = ListenerApplications
								.ordered(bootstrapServers(), topic, id, concurrency, workload, inFlight)) {
								await(tally);
							}
						}
						case VIRTUAL -> {
							try (ConfigurableApplicationContext context = ListenerApplications.ordered(
									bootstrapServers(), topic, id, concurrency, workload, inFlight,
									VIRTUAL_THREADS + "=true")) {
								await(tally);
							}
						}
						case PARALLEL -> runParallelConsumer(topic, id, concurrency, workload, tally);
					}
				});
				if (contender.parallel() && report.excluded().containsKey(contender.name())) {
					parallelUnavailable = report.excluded().get(contender.name());
				}
				if (ranOn.get() != null) {
					threads.get(contender.name()).add(ranOn.get());
				}
				if (run > 0) {
					throughput.get(contender.name()).add(perSecond);
				}
			}
		}

		List<List<String>> rows = new ArrayList<>();
		for (Contender contender : contenders) {
			String name = contender.parallel()
					? name(Kind.PARALLEL, contender.concurrency()).replace(SlowHandlerScenario.PARALLEL,
							SlowHandlerScenario.PARALLEL + " " + ParallelConsumerRunner.version())
					: contender.name();
			double ideal = ideal(contender.concurrency(), handlerMs);
			String reason = (contender.kind() == Kind.VIRTUAL && virtualUnavailable != null)
					? "not run: " + virtualUnavailable : (contender.parallel() && parallelUnavailable != null)
							? "not measured: " + parallelUnavailable : null;
			if (reason != null) {
				rows.add(List.of(name, "–", reason, "–", Format.perSecond(ideal), "–", "–"));
				continue;
			}
			Series series = throughput.get(contender.name());
			Series parallel = throughput.get(name(Kind.PARALLEL, contender.concurrency()));
			rows.add(List.of(name, String.join(", ", threads.get(contender.name())), Format.perSecond(series.median()),
					series.runs(Format::count), Format.perSecond(ideal),
					Format.ratio(Series.ratio(series, ideal).median()),
					contender.parallel() ? "–" : Format.ratio(Series.ratio(series, parallel).median())));
			report.measured(contender.name() + " records/s", series.median());
		}
		report.table(List.of("contender", "handler ran on", "records/s (median)", "every run", "ideal", "vs ideal",
				"vs Parallel Consumer at the same concurrency"), rows);

		Series platform = throughput.get(name(Kind.PLATFORM, first));
		Series platformVsIdeal = Series.ratio(platform, ideal(first, handlerMs));
		report.target(
				String.format(Locale.ROOT, "@OrderedRetryListener at %,d (platform threads) ≥ 0.95× ideal", first),
				platformVsIdeal.median(),
				Format.ratio(platformVsIdeal.median()) + " (" + Format.perSecond(platform.median()) + ")", true, 0.95);
		vsParallel(report,
				String.format(Locale.ROOT,
						"@OrderedRetryListener at %,d (platform threads) ≥ 1.0× Parallel " + "Consumer (KEY) at %,d",
						first, first),
				platform, throughput.get(name(Kind.PARALLEL, first)), null, parallelUnavailable);
		Series virtual = throughput.get(name(Kind.VIRTUAL, last));
		String target = String.format(Locale.ROOT, "@OrderedRetryListener at %,d on virtual threads ≥ %s", last,
				Format.perSecond(VIRTUAL_TARGET).replace("/s", " records/s"));
		if (virtualUnavailable != null) {
			report.target(target, Double.NaN, "not run: " + virtualUnavailable, true, VIRTUAL_TARGET);
		}
		else {
			report.target(target, virtual.median(), Format.perSecond(virtual.median()), true, VIRTUAL_TARGET);
		}
		vsParallel(report,
				String.format(Locale.ROOT,
						"@OrderedRetryListener at %,d on virtual threads ≥ 1.0× Parallel " + "Consumer (KEY) at %,d",
						last, last),
				virtual, throughput.get(name(Kind.PARALLEL, last)), virtualUnavailable, parallelUnavailable);

		report.note("Thread.sleep(" + handlerMs + ") sleeps a little longer than asked, and every one of the many "
				+ "sleepers that wake at once waits for one of the machine's cores, so the ideal is out of reach well "
				+ "before the concurrency is.");
		report.note("Handler ran on: the kind of thread the handler found itself on in the first record of each run. A "
				+ "\"virtual threads\" contender that ran on platform threads was given a library that does not know "
				+ VIRTUAL_THREADS + ": it ignores the property.");
		return report;
	}

	private static void vsParallel(ScenarioReport report, String target, Series ordered, Series parallel,
			@Nullable String orderedUnavailable, @Nullable String parallelUnavailable) {
		if (orderedUnavailable != null) {
			report.target(target, Double.NaN, "not run: " + orderedUnavailable, true, 1.0);
		}
		else if (parallelUnavailable != null) {
			report.target(target, Double.NaN, "not measured: Parallel Consumer " + ParallelConsumerRunner.version()
					+ " does not run with kafka-clients " + Versions.kafkaClients(), true, 1.0);
		}
		else {
			Series ratio = Series.ratio(ordered, parallel);
			report.target(target, ratio.median(), Format.ratio(ratio.median()) + " ("
					+ Format.perSecond(ordered.median()) + " vs " + Format.perSecond(parallel.median()) + ")", true,
					1.0);
		}
	}

	private static double ideal(int concurrency, int handlerMs) {
		return concurrency * 1000.0 / handlerMs;
	}

	/** {@code virtual} or {@code platform}. */
	private static String threadKind(Thread thread) {
		if (IS_VIRTUAL == null) {
			return "platform";
		}
		try {
			return ((boolean) IS_VIRTUAL.invokeExact(thread)) ? "virtual" : "platform";
		}
		catch (Throwable ex) {
			throw new IllegalStateException("Thread.isVirtual() failed", ex);
		}
	}

	private static @Nullable MethodHandle isVirtualHandle() {
		try {
			return MethodHandles.publicLookup()
				.findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
		}
		catch (NoSuchMethodException | IllegalAccessException ex) {
			return null;
		}
	}

}
