package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * P2A, the P2W workload with the wait done without a thread: every record's result
 * completes a fixed time after the call (a {@code CompletableFuture} a scheduled executor
 * completes, or a {@code Mono.delay}), on one partition with many keys, at an in-flight
 * bound of thousands and 4 workers. Against it: the library on virtual threads with a
 * blocking sleep, as many threads as the bound; Parallel Consumer's Reactor module at the
 * same concurrency; and a plain {@code @KafkaListener} returning the same future
 * (spring-kafka acknowledges out of order, and fetches no more until a poll's records are
 * acknowledged). CPU per record is the whole process's (broker included, the same for
 * every contender).
 */
final class AsyncHandlerScenario extends Scenario {

	enum Kind {

		FUTURE, MONO, VIRTUAL, PARALLEL_REACTOR, PLAIN_FUTURE

	}

	/**
	 * One contender.
	 *
	 * @param name its name in the report
	 * @param kind what it is
	 */
	record Contender(String name, Kind kind) {
	}

	AsyncHandlerScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	static List<Contender> contenders(int concurrency, int inFlight) {
		return List.of(new Contender(ORDERED + ", CompletableFuture, " + concurrency + " workers", Kind.FUTURE),
				new Contender(ORDERED + ", Mono.delay, " + concurrency + " workers", Kind.MONO),
				new Contender(ORDERED + ", " + Format.count(inFlight) + " virtual threads, Thread.sleep", Kind.VIRTUAL),
				new Contender(SlowHandlerScenario.PARALLEL + " reactor, " + Format.count(inFlight),
						Kind.PARALLEL_REACTOR),
				new Contender("@KafkaListener returning CompletableFuture", Kind.PLAIN_FUTURE));
	}

	@Override
	ScenarioReport run() throws Exception {
		int records = this.settings.count("p2a-records");
		int keys = this.settings.count("p2a-keys");
		int waitMs = this.settings.count("p2a-wait-ms");
		int inFlight = this.settings.count("p2a-in-flight");
		int concurrency = this.settings.count("p2a-concurrency");
		int valueBytes = this.settings.count("value-bytes");
		double ideal = inFlight * 1000.0 / waitMs;
		ScenarioReport report = new ScenarioReport("P2A",
				"results that complete later: " + waitMs + " ms per record without a thread, one partition");
		report.setup(String.format(Locale.ROOT,
				"%,d records of %d bytes over %,d keys in 1 partition; each record's "
						+ "result completes %d ms after the call (a call to another service, made without a thread)",
				records, valueBytes, keys, waitMs));
		report.setup(String.format(Locale.ROOT, "@OrderedRetryListener returning a CompletableFuture (completed by one "
				+ "scheduled-executor thread) or a Mono.delay: %d workers, max-in-flight-per-partition %,d; on virtual "
				+ "threads (Java 21+): %,d workers that sleep %d ms, max-in-flight-per-partition %,d", concurrency,
				inFlight, inFlight, waitMs, inFlight));
		report.setup(String.format(Locale.ROOT, "Parallel Consumer %s with its Reactor module: KEY ordering, "
				+ "maxConcurrency %,d, Mono.delay; @KafkaListener: the same CompletableFuture method, max.poll.records "
				+ "%,d (spring-kafka acknowledges out of order and pauses until a poll's records are acknowledged)",
				ParallelConsumerRunner.reactorVersion(), inFlight, inFlight));
		report.setup(String.format(Locale.ROOT, "ideal: %,d in flight × 1 record per %d ms = %s", inFlight, waitMs,
				Format.perSecond(ideal)));

		List<Contender> contenders = contenders(concurrency, inFlight);
		String virtualUnavailable = IoBoundHandlerScenario.virtualThreadsAvailable() ? null
				: "needs Java 21+ (this JVM is Java " + Runtime.version().feature() + ")";
		List<Contender> runnable = new ArrayList<>();
		for (Contender contender : contenders) {
			if (contender.kind() == Kind.VIRTUAL && virtualUnavailable != null) {
				report.excluded(contender.name(), virtualUnavailable);
			}
			else {
				runnable.add(contender);
			}
		}
		String topic = this.broker.newTopic("p2a", 1);
		this.broker.fill(records,
				(i) -> new ProducerRecord<>(topic, Records.key("key-" + (i % keys)), Records.value(i, valueBytes)));

		Map<String, Series> throughput = new LinkedHashMap<>();
		Map<String, Series> cpu = new LinkedHashMap<>();
		Map<String, Series> inFlightMean = new LinkedHashMap<>();
		Map<String, Series> pendingMean = new LinkedHashMap<>();
		contenders.forEach((contender) -> {
			throughput.put(contender.name(), new Series());
			cpu.put(contender.name(), new Series());
			inFlightMean.put(contender.name(), new Series());
			pendingMean.put(contender.name(), new Series());
		});
		Duration wait = Duration.ofMillis(waitMs);
		String bound = "kafka.resilience.consumer.max-in-flight-per-partition=" + inFlight;
		for (int run : runs(true)) {
			for (Contender contender : rotated(runnable, run)) {
				if (report.excluded().containsKey(contender.name())) {
					continue;
				}
				Tally tally = new Tally(0, records);
				CpuWindow window = new CpuWindow(tally);
				String id = "p2a-" + contender.kind().name().toLowerCase(Locale.ROOT).replace('_', '-') + "-"
						+ label(run);
				double perSecond;
				Occupancy occupancy = new Occupancy(window);
				try (AsyncListenerApplications.AsyncWork work = new AsyncListenerApplications.AsyncWork(wait,
						window::record)) {
					perSecond = measure(report, contender.name(), run, tally, () -> {
						switch (contender.kind()) {
							case FUTURE -> runApplication(AsyncListenerApplications.Kind.ORDERED_FUTURE, topic, id,
									concurrency, work, tally, occupancy, bound);
							case MONO -> runApplication(AsyncListenerApplications.Kind.ORDERED_MONO, topic, id,
									concurrency, work, tally, occupancy, bound);
							case PLAIN_FUTURE -> runApplication(AsyncListenerApplications.Kind.PLAIN_FUTURE, topic, id,
									1, work, tally, null, "spring.kafka.consumer.max-poll-records=" + inFlight);
							case VIRTUAL -> {
								Workload sleeping = (record) -> {
									Thread.sleep(waitMs);
									window.record(Records.seq(record.value()));
								};
								try (ConfigurableApplicationContext context = ListenerApplications.ordered(
										bootstrapServers(), topic, id, inFlight, sleeping, bound,
										IoBoundHandlerScenario.VIRTUAL_THREADS + "=true")) {
									await(tally);
								}
							}
							case PARALLEL_REACTOR -> runParallelReactor(topic, id, inFlight, wait, window, tally);
						}
					});
				}
				if (run > 0 && !Double.isNaN(perSecond)) {
					throughput.get(contender.name()).add(perSecond);
					if (window.nanos() > 0) {
						cpu.get(contender.name()).add(window.nanos() / 1000.0 / records);
					}
					if (occupancy.samples() > 0) {
						inFlightMean.get(contender.name()).add(occupancy.meanInFlight());
						pendingMean.get(contender.name()).add(occupancy.meanPending());
					}
				}
			}
		}

		Series future = throughput.get(contenders.get(0).name());
		List<List<String>> rows = new ArrayList<>();
		for (Contender contender : contenders) {
			String excluded = report.excluded().get(contender.name());
			if (excluded != null) {
				rows.add(List.of(contender.name(), "–", "not run: " + excluded, "–", "–", "–"));
				continue;
			}
			Series series = throughput.get(contender.name());
			rows.add(List.of(contender.name(), Format.perSecond(series.median()), series.runs(Format::count),
					Format.ratio(Series.ratio(series, ideal).median()),
					Format.micros(cpu.get(contender.name()).median()),
					(contender.kind() == Kind.FUTURE) ? "–" : Format.ratio(Series.ratio(future, series).median())));
			report.measured(contender.name() + " records/s", series.median());
		}
		report.table(List.of("contender", "records/s (median)", "every run", "vs ideal", "CPU per record (process)",
				"CompletableFuture listener vs this"), rows);

		Series vsIdeal = Series.ratio(future, ideal);
		report.target(
				String.format(Locale.ROOT, "@OrderedRetryListener returning a CompletableFuture ≥ 0.8× ideal (%s)",
						Format.perSecond(ideal)),
				vsIdeal.median(), Format.ratio(vsIdeal.median()) + " (" + Format.perSecond(future.median()) + ")", true,
				0.8);
		versus(report, "≥ 1.0× the library on " + Format.count(inFlight) + " virtual threads", future,
				throughput.get(contenders.get(2).name()), report.excluded().get(contenders.get(2).name()), 1.0);
		versus(report, "≥ 1.5× Parallel Consumer reactor at " + Format.count(inFlight), future,
				throughput.get(contenders.get(3).name()), report.excluded().get(contenders.get(3).name()), 1.5);
		List<List<String>> occupancyRows = new ArrayList<>();
		for (Contender contender : contenders) {
			Series held = inFlightMean.get(contender.name());
			if (held.median() == held.median()) {
				occupancyRows.add(List.of(contender.name(), Format.count(Math.round(held.median())),
						Format.count(Math.round(pendingMean.get(contender.name()).median())),
						Format.count(Math.round(throughput.get(contender.name()).median() * waitMs / 1000.0))));
			}
		}
		if (!occupancyRows.isEmpty()) {
			report.table(
					List.of("contender", "records taken, mean (bound " + Format.count(inFlight) + ")",
							"results pending, mean",
							"in the " + waitMs + " ms wait, mean (Little's law: records/s × " + waitMs + " ms)"),
					occupancyRows);
			report.note("Occupancy: the partition's records taken (what max-in-flight-per-partition bounds) and the "
					+ "listener's pending results, sampled every " + Occupancy.INTERVAL_MILLIS + " ms from the run's "
					+ "first record to its last; the median run's mean.");
		}
		report.note("CPU per record: the process's CPU time (the broker and every client) from the run's first "
				+ "record to its last, divided by the records; the broker's share is the same for every contender.");
		return report;
	}

	private void runApplication(AsyncListenerApplications.Kind kind, String topic, String id, int concurrency,
			AsyncListenerApplications.AsyncWork work, Tally tally, @Nullable Occupancy occupancy, String... properties)
			throws InterruptedException {
		try (ConfigurableApplicationContext context = AsyncListenerApplications.start(kind, bootstrapServers(), topic,
				id, concurrency, work, properties)) {
			Thread sampler = null;
			if (occupancy != null) {
				RetryContainer container = context.getBean(ListenerRegistry.class).container(id);
				if (container != null) {
					sampler = occupancy.sample(container, tally);
				}
			}
			try {
				await(tally);
			}
			finally {
				if (sampler != null) {
					sampler.interrupt();
					sampler.join();
				}
			}
		}
	}

	/**
	 * How full the library's partition is while the run's records flow: sampled from the
	 * first record handled to the last.
	 */
	static final class Occupancy {

		static final int INTERVAL_MILLIS = 2;

		private final CpuWindow window;

		private long samples;

		private long inFlight;

		private long pending;

		Occupancy(CpuWindow window) {
			this.window = window;
		}

		Thread sample(RetryContainer container, Tally tally) {
			Thread sampler = new Thread(() -> {
				while (!Thread.currentThread().isInterrupted() && !tally.isComplete()) {
					if (this.window.started()) {
						Integer results = container.pendingResults();
						synchronized (this) {
							this.samples++;
							this.inFlight += container.load().busiestPartitionInFlight();
							this.pending += (results != null) ? results : 0;
						}
					}
					try {
						Thread.sleep(INTERVAL_MILLIS);
					}
					catch (InterruptedException ex) {
						return;
					}
				}
			}, "p2a-occupancy");
			sampler.setDaemon(true);
			sampler.start();
			return sampler;
		}

		synchronized long samples() {
			return this.samples;
		}

		synchronized double meanInFlight() {
			return (double) this.inFlight / this.samples;
		}

		synchronized double meanPending() {
			return (double) this.pending / this.samples;
		}

	}

	private void runParallelReactor(String topic, String group, int concurrency, Duration wait, CpuWindow window,
			Tally tally) throws Exception {
		try {
			ParallelConsumerRunner.react(bootstrapServers(), topic, group, concurrency,
					(record) -> Mono.delay(wait).doOnNext((tick) -> window.record(Records.seq(record.value()))), tally,
					timeout());
		}
		catch (InterruptedException ex) {
			throw ex;
		}
		catch (Exception | LinkageError ex) {
			throw new ContenderUnavailableException(describe(ex), ex);
		}
	}

	private static void versus(ScenarioReport report, String target, Series future, Series other,
			@Nullable String excluded, double limit) {
		String name = "@OrderedRetryListener returning a CompletableFuture " + target;
		if (excluded != null || other.median() != other.median()) {
			report.target(name, Double.NaN, "not measured: " + ((excluded != null) ? excluded : "no run completed"),
					true, limit);
			return;
		}
		Series ratio = Series.ratio(future, other);
		report.target(name, ratio.median(), Format.ratio(ratio.median()) + " (" + Format.perSecond(future.median())
				+ " vs " + Format.perSecond(other.median()) + ")", true, limit);
	}

	/**
	 * Counts a run's records, and the process's CPU time from its first record to its
	 * last: not the application's start or stop.
	 */
	static final class CpuWindow {

		private final Tally tally;

		private volatile long start = -1;

		private volatile long end = -1;

		CpuWindow(Tally tally) {
			this.tally = tally;
		}

		void record(long seq) {
			if (this.start < 0) {
				synchronized (this) {
					if (this.start < 0) {
						this.start = processCpuNanos();
					}
				}
			}
			this.tally.record(seq);
			if (this.end < 0 && this.tally.isComplete()) {
				synchronized (this) {
					if (this.end < 0) {
						this.end = processCpuNanos();
					}
				}
			}
		}

		/**
		 * The CPU time between the first record and the last, or -1 when the run did not
		 * complete.
		 */
		/** Whether the run's first record was handled. */
		boolean started() {
			return this.start >= 0;
		}

		long nanos() {
			return (this.start >= 0 && this.end >= this.start) ? this.end - this.start : -1;
		}

	}

}
