package io.github.kafkaresilience.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerRecord;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * P2, a slow handler on a single partition: every record sleeps a fixed time, so
 * throughput comes only from handling keys concurrently. {@code @OrderedRetryListener}
 * against the ideal (every worker always busy), against Confluent's Parallel Consumer
 * with KEY ordering and the same concurrency, and against a plain {@code @KafkaListener}
 * (one record at a time).
 */
final class SlowHandlerScenario extends Scenario {

	static final String PARALLEL = "Parallel Consumer (KEY)";

	private static final List<String> CONTENDERS = List.of(ORDERED, PARALLEL, PLAIN);

	SlowHandlerScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	@Override
	ScenarioReport run() throws Exception {
		int records = this.settings.count("p2-records");
		int keys = this.settings.count("p2-keys");
		int sleepMs = this.settings.count("p2-sleep-ms");
		int workers = this.settings.count("p2-workers");
		int plainRecords = this.settings.count("p2-plain-records");
		int valueBytes = this.settings.count("value-bytes");
		double ideal = workers * 1000.0 / sleepMs;
		ScenarioReport report = new ScenarioReport("P2", "Slow handler: " + sleepMs + " ms per record, one partition");
		report.setup(String.format(Locale.ROOT,
				"%,d records of %d bytes over %,d keys in 1 partition; the handler " + "sleeps %d ms", records,
				valueBytes, keys, sleepMs));
		report
			.setup(String.format(Locale.ROOT, "@OrderedRetryListener: %d workers; Parallel Consumer %s: KEY ordering, "
					+ "maxConcurrency %d, periodic asynchronous consumer commits; @KafkaListener: one consumer (one "
					+ "partition), measured on the first %,d records only, since it handles one record at a time",
					workers, ParallelConsumerRunner.version(), workers, plainRecords));
		report.setup(String.format(Locale.ROOT, "ideal: %d workers × 1 record per %d ms = %,.0f records/s", workers,
				sleepMs, ideal));

		String topic = this.broker.newTopic("p2", 1);
		this.broker.fill(records,
				(i) -> new ProducerRecord<>(topic, Records.key("key-" + (i % keys)), Records.value(i, valueBytes)));

		Map<String, Series> throughput = new LinkedHashMap<>();
		CONTENDERS.forEach((contender) -> throughput.put(contender, new Series()));
		String parallelUnavailable = null;
		for (int run : runs(true)) {
			for (String contender : rotated(CONTENDERS, run)) {
				if (contender.equals(PARALLEL) && parallelUnavailable != null) {
					continue;
				}
				int limit = contender.equals(PLAIN) ? plainRecords : records;
				Tally tally = new Tally(0, limit);
				Workload workload = (record) -> {
					long seq = Records.seq(record.value());
					if (seq < limit) {
						Thread.sleep(sleepMs);
						tally.record(seq);
					}
				};
				String id = "p2-" + switch (contender) {
					case ORDERED -> "ordered";
					case PARALLEL -> "parallel";
					default -> "plain";
				} + "-" + label(run);
				double perSecond = measure(report, contender, run, tally, () -> {
					switch (contender) {
						case ORDERED -> {
							try (ConfigurableApplicationContext context = ListenerApplications
								.ordered(bootstrapServers(), topic, id, workers, workload)) {
								await(tally);
							}
						}
						case PARALLEL -> runParallelConsumer(topic, id, workers, workload, tally);
						default -> {
							try (ConfigurableApplicationContext context = ListenerApplications.plain(bootstrapServers(),
									topic, id, 1, workload)) {
								await(tally);
							}
						}
					}
				});
				if (contender.equals(PARALLEL) && report.excluded().containsKey(PARALLEL)) {
					parallelUnavailable = report.excluded().get(PARALLEL);
				}
				if (run > 0) {
					throughput.get(contender).add(perSecond);
				}
			}
		}

		Series ordered = throughput.get(ORDERED);
		Series parallel = throughput.get(PARALLEL);
		List<List<String>> rows = new ArrayList<>();
		rows.add(List.of("ideal", "–", Format.perSecond(ideal), "–", "1.00×",
				Format.ratio(Series.ratio(ordered, ideal).median())));
		for (String contender : CONTENDERS) {
			Series series = throughput.get(contender);
			String name = contender.equals(PARALLEL) ? PARALLEL + " " + ParallelConsumerRunner.version() : contender;
			if (contender.equals(PARALLEL) && parallelUnavailable != null) {
				rows.add(List.of(name, "–", "not measured: " + parallelUnavailable, "–", "–", "–"));
				continue;
			}
			rows.add(List.of(name, Format.count(contender.equals(PLAIN) ? plainRecords : records),
					Format.perSecond(series.median()), series.runs(Format::count),
					Format.ratio(Series.ratio(series, ideal).median()),
					contender.equals(ORDERED) ? "–" : Format.ratio(Series.ratio(ordered, series).median())));
		}
		report.table(List.of("contender", "records", "records/s (median)", "every run", "vs ideal",
				"@OrderedRetryListener vs it"), rows);
		Series orderedVsIdeal = Series.ratio(ordered, ideal);
		report.target("@OrderedRetryListener ≥ 0.98× ideal", orderedVsIdeal.median(),
				Format.ratio(orderedVsIdeal.median()), true, 0.98);
		if (parallelUnavailable != null) {
			report.target("@OrderedRetryListener ≥ 1.0× Parallel Consumer (KEY)", Double.NaN,
					"not measured: Parallel Consumer " + ParallelConsumerRunner.version()
							+ " does not run with kafka-clients " + Versions.kafkaClients(),
					true, 1.0);
		}
		else {
			Series orderedVsParallel = Series.ratio(ordered, parallel);
			report.target("@OrderedRetryListener ≥ 1.0× Parallel Consumer (KEY)", orderedVsParallel.median(),
					Format.ratio(orderedVsParallel.median()), true, 1.0);
		}
		report
			.note("Thread.sleep(" + sleepMs + ") sleeps a little longer than asked, so even a perfect scheduler stays "
					+ "slightly below the ideal.");
		throughput.forEach((contender, series) -> report.measured(contender + " records/s", series.median()));
		return report;
	}

}
