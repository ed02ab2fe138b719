package io.github.kafkaresilience.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerRecord;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * P1, the happy path: a no-op handler over a pre-filled topic. {@code @OrderedRetryListener}
 * against a plain {@code @KafkaListener} and against a raw {@code KafkaConsumer} poll loop,
 * the most a single consumer gets out of this broker.
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
		ScenarioReport report = new ScenarioReport("P1", "Happy path: no-op handler");
		report.setup(String.format(Locale.ROOT, "%,d records of %d bytes over %,d keys in %d partitions, consumed from "
				+ "the start of the topic by a new group; no-op handler", records, valueBytes, keys, partitions));
		report.setup("@OrderedRetryListener: " + concurrency + " workers, one consumer; @KafkaListener: " + consumers
				+ " consumer(s), record listener, Spring Kafka's defaults; raw loop: one KafkaConsumer, client defaults");
		report.setup("throughput: records per second from the first record handled to the last (start-up and group "
				+ "join are not counted)");

		String topic = this.broker.newTopic("p1", partitions);
		long started = System.nanoTime();
		this.broker.fill(records,
				(i) -> new ProducerRecord<>(topic, Records.key("key-" + (i % keys)), Records.value(i, valueBytes)));
		this.logger.info(String.format(Locale.ROOT, "P1 wrote %,d records in %,.0f ms", records,
				(System.nanoTime() - started) / 1e6));

		Map<String, Series> throughput = new LinkedHashMap<>();
		CONTENDERS.forEach((contender) -> throughput.put(contender, new Series()));
		for (int run : runs(true)) {
			for (String contender : rotated(CONTENDERS, run)) {
				Tally tally = new Tally(0, records);
				Workload workload = (record) -> tally.record(Records.seq(record.value()));
				String id = "p1-" + contender.replaceAll("[^A-Za-z]+", "-").replaceAll("^-|-$", "").toLowerCase(Locale.ROOT)
						+ "-" + label(run);
				double perSecond = measure(report, contender, run, tally, () -> {
					switch (contender) {
						case RAW -> RawConsumerLoop.run(bootstrapServers(), topic, id, workload, tally, timeout());
						case PLAIN -> {
							try (ConfigurableApplicationContext context = ListenerApplications.plain(bootstrapServers(), topic,
									id, consumers, workload)) {
								await(tally);
							}
						}
						default -> {
							try (ConfigurableApplicationContext context = ListenerApplications.ordered(bootstrapServers(),
									topic, id, concurrency, workload)) {
								await(tally);
							}
						}
					}
				});
				if (run > 0) {
					throughput.get(contender).add(perSecond);
				}
			}
		}

		Series orderedVsPlain = Series.ratio(throughput.get(ORDERED), throughput.get(PLAIN));
		List<List<String>> rows = new ArrayList<>();
		for (String contender : CONTENDERS) {
			Series series = throughput.get(contender);
			rows.add(List.of(contender, Format.perSecond(series.median()), series.runs(Format::count),
					Format.ratio(Series.ratio(series, throughput.get(PLAIN)).median()),
					Format.ratio(Series.ratio(series, throughput.get(RAW)).median())));
		}
		report.table(List.of("contender", "records/s (median)", "every run", "vs @KafkaListener", "vs raw loop"), rows);
		report.target("@OrderedRetryListener ≥ 0.95× plain @KafkaListener", orderedVsPlain.median(),
				Format.ratio(orderedVsPlain.median()), true, 0.95);
		report.note("Ratios are medians of the per-run ratios; each run measures every contender back to back.");
		throughput.forEach((contender, series) -> report.measured(contender + " records/s", series.median()));
		return report;
	}

}
