package io.github.kafkaresilience.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerRecord;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * P1, the happy path: a no-op handler over a pre-filled topic.
 * {@code @OrderedRetryListener} against a plain {@code @KafkaListener} and against a raw
 * {@code KafkaConsumer} poll loop, the most a single consumer gets out of this broker.
 * <p>
 * A contender's pass over the topic is split into back-to-back windows of equal record
 * counts and its throughput in a run is the median window: a single window of about a
 * second swung the per-run ratio from 0.8× to 1.6×, moved by the ramp-up, the partitions
 * that finish last, a garbage collection or a burst of other work on the machine, and the
 * median of several windows of one pass leaves such a window out without paying for more
 * application starts.
 * <p>
 * A run makes several passes of every contender, interleaved (each pass starts with the
 * next contender), and reports each contender's median pass: one pass in a run of five
 * once went at half speed from its first window to its last, which the median of its
 * windows cannot leave out, and the per-run ratios then spread by ±58 %.
 */
final class HappyPathScenario extends Scenario {

	static final String RAW = "raw KafkaConsumer poll loop";

	private static final List<String> CONTENDERS = List.of(RAW, PLAIN, ORDERED);

	HappyPathScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	@Override
	ScenarioReport run() throws Exception {
		int records = this.settings.count("p1-records");
		int partitions = this.settings.count("p1-partitions");
		int keys = this.settings.count("p1-keys");
		int valueBytes = this.settings.count("value-bytes");
		int concurrency = this.settings.count("concurrency");
		int consumers = this.settings.count("p1-listener-consumers");
		int windows = this.settings.count("p1-windows");
		int passes = this.settings.count("p1-passes");
		ScenarioReport report = new ScenarioReport("P1", "Happy path: no-op handler");
		report.setup(String.format(Locale.ROOT,
				"%,d records of %d bytes over %,d keys in %d partitions, consumed from "
						+ "the start of the topic by a new group; no-op handler",
				records, valueBytes, keys, partitions));
		report.setup("@OrderedRetryListener: " + concurrency + " workers, one consumer; @KafkaListener: " + consumers
				+ " consumer(s), record listener, Spring Kafka's defaults; raw loop: one KafkaConsumer, client defaults");
		report.setup(String.format(Locale.ROOT, "throughput: records per second from the first record handled to the "
				+ "last (start-up and group join are not counted), split into %d back-to-back windows of %,d records; a "
				+ "pass's value is its median window; %d interleaved passes of every contender per run, a run's value is "
				+ "the contender's median pass; the heap is collected before each pass", windows, records / windows,
				passes));

		String topic = this.broker.newTopic("p1", partitions);
		long started = System.nanoTime();
		this.broker.fill(records,
				(i) -> new ProducerRecord<>(topic, Records.key("key-" + (i % keys)), Records.value(i, valueBytes)));
		this.logger.info(String.format(Locale.ROOT, "P1 wrote %,d records in %,.0f ms", records,
				(System.nanoTime() - started) / 1e6));

		Map<String, Series> throughput = new LinkedHashMap<>();
		CONTENDERS.forEach((contender) -> throughput.put(contender, new Series()));
		for (int run : runs(true)) {
			Map<String, Series> perPass = new LinkedHashMap<>();
			CONTENDERS.forEach((contender) -> perPass.put(contender, new Series()));
			for (int pass = 1; pass <= passes; pass++) {
				for (String contender : rotated(CONTENDERS, run + pass - 1)) {
					collectGarbage();
					Tally tally = new Tally(0, records, windows);
					Workload workload = (record) -> tally.record(Records.seq(record.value()));
					String id = "p1-"
							+ contender.replaceAll("[^A-Za-z]+", "-").replaceAll("^-|-$", "").toLowerCase(Locale.ROOT)
							+ "-" + label(run) + "-" + pass;
					double wholePass = measure(report, contender, run, tally, () -> {
						switch (contender) {
							case RAW -> RawConsumerLoop.run(bootstrapServers(), topic, id, workload, tally, timeout());
							case PLAIN -> {
								try (ConfigurableApplicationContext context = ListenerApplications
									.plain(bootstrapServers(), topic, id, consumers, workload)) {
									await(tally);
								}
							}
							default -> {
								try (ConfigurableApplicationContext context = ListenerApplications
									.ordered(bootstrapServers(), topic, id, concurrency, workload)) {
									await(tally);
								}
							}
						}
					});
					Series windowed = Series.of(tally.windowsPerSecond());
					double perSecond = Double.isNaN(wholePass) ? Double.NaN : windowed.median();
					this.logger.info(String.format(Locale.ROOT, "P1 %s pass %d %-32s median window %s; windows %s",
							label(run), pass, contender, Format.perSecond(perSecond), windowed.runs(Format::count)));
					perPass.get(contender).add(perSecond);
				}
			}
			for (String contender : CONTENDERS) {
				double median = perPass.get(contender).median();
				this.logger.info(String.format(Locale.ROOT, "P1 %s %-32s median pass %s; passes %s", label(run),
						contender, Format.perSecond(median), perPass.get(contender).runs(Format::count)));
				if (run > 0) {
					throughput.get(contender).add(median);
				}
			}
		}

		Series orderedVsPlain = Series.ratio(throughput.get(ORDERED), throughput.get(PLAIN));
		// agreement needs a few runs to mean anything
		double spread = (orderedVsPlain.measured() >= 3) ? orderedVsPlain.spread() : Double.NaN;
		List<List<String>> rows = new ArrayList<>();
		for (String contender : CONTENDERS) {
			Series series = throughput.get(contender);
			rows.add(List.of(contender, Format.perSecond(series.median()), series.runs(Format::count),
					Format.ratio(Series.ratio(series, throughput.get(PLAIN)).median()),
					Format.ratio(Series.ratio(series, throughput.get(RAW)).median())));
		}
		report.table(List.of("contender", "records/s (median)", "every run (median pass)", "vs @KafkaListener",
				"vs raw loop"), rows);
		report.target("@OrderedRetryListener ≥ 1.0× plain @KafkaListener", orderedVsPlain.median(),
				Format.ratio(orderedVsPlain.median()), true, 1.0);
		report.target("per-run ratios vs plain @KafkaListener agree within ±10 % of their median (≥ 3 runs)", spread,
				Double.isNaN(spread) ? "–" : Format.spread(spread) + " (" + Format.ratio(orderedVsPlain.min()) + " to "
						+ Format.ratio(orderedVsPlain.max()) + ")",
				false, 0.10);
		report.note("Ratios are medians of the per-run ratios; each run measures every contender back to back.");
		report.note("@OrderedRetryListener vs @KafkaListener, every run: " + orderedVsPlain.runs(Format::ratio)
				+ (Double.isNaN(spread) ? "; too few runs to say how well they agree."
						: "; they lie within " + Format.spread(spread) + " of their median."));
		throughput.forEach((contender, series) -> report.measured(contender + " records/s", series.median()));
		report.measured("ordered vs plain spread", spread);
		return report;
	}

	/**
	 * Collects what the previous contender left on the heap, so that its garbage is not
	 * collected, and paid for, in the next one's window.
	 */
	private static void collectGarbage() {
		ManagementFactory.getMemoryMXBean().gc();
	}

}
