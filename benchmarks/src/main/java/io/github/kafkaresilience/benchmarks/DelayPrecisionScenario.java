package io.github.kafkaresilience.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * P5, delay precision under load: records are sent at a steady rate while the instance
 * runs; every n-th one fails twice and so waits once in the 1 s stage and once in the 5 s
 * stage. Measures how late each retry runs after its due time (the stage record's
 * timestamp plus the stage delay).
 */
final class DelayPrecisionScenario extends Scenario {

	private static final Map<String, Long> STAGES = stages();

	DelayPrecisionScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	@Override
	ScenarioReport run() throws Exception {
		int rate = this.settings.count("p5-rate");
		int seconds = this.settings.count("p5-seconds");
		int failEvery = this.settings.count("p5-fail-every");
		int partitions = this.settings.count("p5-partitions");
		int keys = this.settings.count("p5-keys");
		int valueBytes = this.settings.count("value-bytes");
		int concurrency = this.settings.count("concurrency");
		int records = rate * seconds;
		int failing = records / failEvery;
		ScenarioReport report = new ScenarioReport("P5", "Delay precision under load");
		report.setup(String.format(Locale.ROOT, "%,d records/s of %d bytes for %d s (%,d records) into %d partitions "
				+ "while the instance runs; one record in %d (%,d in all, each on a key of its own) fails twice and "
				+ "succeeds on its third attempt; the healthy records share %,d keys; no-op handler", rate, valueBytes,
				seconds, records, partitions, failEvery, failing, keys));
		report.setup(
				"@OrderedRetryListener: " + concurrency + " workers, retry delays " + String.join(", ", STAGES.keySet())
						+ ", max-attempts 3; sending starts once every partition's sync barrier has opened");
		report.setup("lateness: when the handler starts the retry minus (the stage record's timestamp + the stage "
				+ "delay); p50 and p99 over all retries of a run, then the median over runs");

		Map<String, Series> p50 = new LinkedHashMap<>();
		Map<String, Series> p99 = new LinkedHashMap<>();
		Map<String, Series> max = new LinkedHashMap<>();
		Map<String, Series> samples = new LinkedHashMap<>();
		Series firstAttemptP99 = new Series();
		for (String stage : STAGES.keySet()) {
			p50.put(stage, new Series());
			p99.put(stage, new Series());
			max.put(stage, new Series());
			samples.put(stage, new Series());
		}
		for (int run : runs(false)) {
			String topic = this.broker.newTopic("p5-" + label(run), partitions);
			String id = "p5-" + label(run);
			// the listener's group is its id: its retry topics are named after it
			String stages = id + "." + topic + ".retry.";
			Map<String, Long> delayByTopic = new LinkedHashMap<>();
			Map<String, Queue<Long>> lateness = new LinkedHashMap<>();
			STAGES.forEach((stage, delay) -> {
				delayByTopic.put(stages + stage, delay);
				lateness.put(stages + stage, new ConcurrentLinkedQueue<>());
			});
			Tally all = new Tally(0, records);
			long[] firstAttempts = new long[records];
			AtomicInteger firstAttemptCount = new AtomicInteger();
			Workload workload = (record) -> {
				long now = System.currentTimeMillis();
				long seq = Records.seq(record.value());
				int retryCount = 0;
				if (record.topic().equals(topic)) {
					int slot = firstAttemptCount.getAndIncrement();
					if (slot < firstAttempts.length) {
						firstAttempts[slot] = now - record.timestamp();
					}
				}
				else {
					Integer count = ProtocolHeaders.retryCount(record.headers());
					retryCount = (count != null) ? count : 0;
					Long delay = delayByTopic.get(record.topic());
					if (delay != null && retryCount > 0) {
						lateness.get(record.topic()).add(now - (record.timestamp() + delay));
					}
				}
				if (seq % failEvery == failEvery - 1 && retryCount < 2) {
					throw new IllegalStateException("planned failure " + (retryCount + 1) + " of record " + seq);
				}
				all.record(seq);
			};
			BarrierWatch ready = new BarrierWatch(partitions * (1 + STAGES.size()));
			measure(report, ORDERED, run, all, () -> {
				try (ConfigurableApplicationContext context = ListenerApplications.ordered(bootstrapServers(), topic,
						id, concurrency, workload, List.of(ready),
						"kafka.resilience.retry.delays=" + String.join(",", STAGES.keySet()),
						"kafka.resilience.retry.max-attempts=3")) {
					// start sending once the instance consumes every partition: start-up
					// is not load
					if (!ready.await(timeout())) {
						throw new IllegalStateException(
								"The instance was not assigned every partition within " + timeout().toSeconds() + " s");
					}
					send(topic, records, rate, failEvery, keys, valueBytes);
					await(all);
				}
			});
			if (run > 0 && all.isComplete()) {
				long[] latencies = Arrays.copyOf(firstAttempts,
						Math.min(firstAttempts.length, firstAttemptCount.get()));
				Arrays.sort(latencies);
				double firstP99 = (latencies.length > 0)
						? latencies[Math.max(0, (int) Math.ceil(latencies.length * 0.99) - 1)] : Double.NaN;
				firstAttemptP99.add(firstP99);
				this.logger.info(String.format(Locale.ROOT, "P5 %s first attempts: p99 %,.0f ms from send to handler",
						label(run), firstP99));
				STAGES.keySet().forEach((stage) -> {
					List<Long> sorted = lateness.get(stages + stage).stream().sorted().toList();
					samples.get(stage).add(sorted.size());
					p50.get(stage).add(percentile(sorted, 0.50));
					p99.get(stage).add(percentile(sorted, 0.99));
					max.get(stage).add(sorted.isEmpty() ? Double.NaN : sorted.get(sorted.size() - 1));
					this.logger.info(String.format(Locale.ROOT,
							"P5 %s stage %s: %,d retries, lateness p50 %,.0f ms, " + "p99 %,.0f ms", label(run), stage,
							sorted.size(), percentile(sorted, 0.50), percentile(sorted, 0.99)));
				});
			}
		}

		List<List<String>> rows = new ArrayList<>();
		for (String stage : STAGES.keySet()) {
			rows.add(List.of(stage, Format.count(samples.get(stage).median()), Format.millis(p50.get(stage).median()),
					Format.millis(p99.get(stage).median()), Format.millis(max.get(stage).median()),
					p99.get(stage).runs(Format::count)));
			report.target("retry lateness p99 ≤ 1 s (" + stage + " stage)", p99.get(stage).median(),
					Format.millis(p99.get(stage).median()), false, 1000);
			report.measured(stage + " p50 ms", p50.get(stage).median());
			report.measured(stage + " p99 ms", p99.get(stage).median());
			report.measured(stage + " retries", samples.get(stage).median());
		}
		rows.add(List.of("first attempt (main topic, send → handler)", "–", "–",
				Format.millis(firstAttemptP99.median()), "–", firstAttemptP99.runs(Format::count)));
		report.table(List.of("stage", "retries per run", "lateness p50", "lateness p99", "lateness max",
				"p99, every run (ms)"), rows);
		report.note("The last row is the consumer's lag, not a delay: when it is high the instance did not keep up "
				+ "with the send rate, and the retries, read by the same consumer, are late by about as much.");
		report.measured("first attempt p99 ms", firstAttemptP99.median());
		return report;
	}

	/** Sends records at a steady rate, the failing ones on keys of their own. */
	private void send(String topic, int records, int rate, int failEvery, int keys, int valueBytes) {
		try (KafkaProducer<byte[], byte[]> producer = this.broker
			.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 5))) {
			long start = System.nanoTime();
			int sent = 0;
			while (sent < records) {
				long due = Math.min(records, (long) ((System.nanoTime() - start) / 1e9 * rate) + 1);
				for (; sent < due; sent++) {
					String key = (sent % failEvery == failEvery - 1) ? "retried-" + sent : "key-" + (sent % keys);
					producer.send(new ProducerRecord<>(topic, Records.key(key), Records.value(sent, valueBytes)));
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
			}
			producer.flush();
		}
	}

	private static double percentile(List<Long> sorted, double quantile) {
		if (sorted.isEmpty()) {
			return Double.NaN;
		}
		return sorted.get(Math.max(0, (int) Math.ceil(sorted.size() * quantile) - 1));
	}

	private static Map<String, Long> stages() {
		Map<String, Long> stages = new LinkedHashMap<>();
		stages.put("1s", 1_000L);
		stages.put("5s", 5_000L);
		return stages;
	}

}
