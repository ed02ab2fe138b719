package io.github.kafkaresilience.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * P3L, the latency of the healthy keys during a failure storm: records are sent at a
 * steady rate while the instance runs, one in n of them fails once (each on a key of its
 * own), and the produce-to-handle latency of the records on keys that never fail is
 * compared with the same records in {@code compensate} mode with nothing failing.
 * <p>
 * Unlike P3 the records are not written up front: the latency of a record that waited in
 * a backlog says how long the backlog was, not how long the record took. The send rate is
 * meant to stay well below what the instance can handle, so that a record waits only for
 * what the instance does while it arrives. The first seconds of sending are not counted:
 * an instance creates its producers when it first writes (in {@code transaction} mode its
 * first commit initialises the transactions of its whole pool), and that once-only wait
 * would otherwise decide the p99 of a storm that lasts seconds; the report shows it
 * apart.
 * <p>
 * Spring Kafka's {@code @RetryableTopic} takes the same storm with the same delays,
 * beside the library's modes: a comparison, without a target.
 */
final class HealthyKeyLatencyScenario extends Scenario {

	/** The baseline: the same records, sent the same way, with nothing failing. */
	static final String BASELINE = "compensate, no failures";

	/** Spring Kafka's non-blocking retries during the storm. */
	static final String RETRYABLE_STORM = RETRYABLE + ", storm";

	static final List<String> CONTENDERS = List.of(BASELINE, "compensate, storm", "transaction, storm",
			RETRYABLE_STORM);

	HealthyKeyLatencyScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	@Override
	ScenarioReport run() throws Exception {
		int rate = this.settings.count("p3l-rate");
		int records = this.settings.count("p3l-records");
		int settleSeconds = this.settings.count("p3l-settle-seconds");
		int failEvery = this.settings.count("p3l-fail-every");
		int partitions = this.settings.count("p3l-partitions");
		int keys = this.settings.count("p3l-keys");
		String delays = this.settings.text("p3l-delays");
		int handlerMs = this.settings.count("p3l-handler-ms");
		int valueBytes = this.settings.count("value-bytes");
		int concurrency = this.settings.count("concurrency");
		int settling = (int) Math.min(Integer.MAX_VALUE - (long) records, (long) rate * settleSeconds);
		int sent = settling + records;
		int healthy = records - (failingBefore(sent, failEvery) - failingBefore(settling, failEvery));
		int barriers = partitions * (1 + delays.split(",").length);
		ScenarioReport report = new ScenarioReport("P3L", "Healthy-key latency during a failure storm");
		report.setup(String.format(Locale.ROOT, "%,d records/s of %d bytes for %d s to settle, then %.1f s measured "
				+ "(%,d records), into %d partitions while the instance runs; in the storm one record in %d (each on a "
				+ "key of its own) fails once with a transient exception and succeeds on its retry; the %,d healthy "
				+ "records measured share %,d keys with the rest; %s", rate, Math.max(valueBytes, 2 * Long.BYTES),
				settleSeconds, (double) records / rate, records, partitions, failEvery, healthy, keys,
				(handlerMs > 0) ? "the handler sleeps " + handlerMs + " ms on every attempt" : "no-op handler"));
		report.setup("@OrderedRetryListener: " + concurrency + " workers, retry delays " + delays + "; sending starts "
				+ "once every partition's sync barrier has opened; the baseline is compensate with the same records and "
				+ "nothing failing");
		report.setup(RETRYABLE_STORM + ": a plain @KafkaListener with Spring Kafka's non-blocking retries on the same "
				+ "delays (one retry topic per delay, then a dead-letter topic, each with " + partitions
				+ " partitions " + "like the main topic), set up by a RetryTopicConfiguration bean; concurrency "
				+ concurrency + " in each "
				+ "of its containers, Spring Boot's and Spring Kafka's defaults otherwise; sending starts once every "
				+ "container has all its partitions; a comparison, without a target");
		report.setup("latency: from just before the producer is handed a healthy record (System.nanoTime() carried in "
				+ "its value) until the handler starts on it; p50, p99 and max over every healthy record sent after "
				+ "the settling seconds, then the median over runs; a ratio is the median of the per-run ratios of the "
				+ "p99s; the longest latency while settling (when the instance creates its producers) is shown "
				+ "apart");

		Map<String, Series> p50 = new LinkedHashMap<>();
		Map<String, Series> p99 = new LinkedHashMap<>();
		Map<String, Series> max = new LinkedHashMap<>();
		Map<String, Series> settlingMax = new LinkedHashMap<>();
		Map<String, Series> behind = new LinkedHashMap<>();
		Map<String, Series> samples = new LinkedHashMap<>();
		for (String contender : CONTENDERS) {
			p50.put(contender, new Series());
			p99.put(contender, new Series());
			max.put(contender, new Series());
			settlingMax.put(contender, new Series());
			behind.put(contender, new Series());
			samples.put(contender, new Series());
		}
		for (int run : runs(true)) {
			for (String contender : rotated(CONTENDERS, run)) {
				String mode = contender.substring(0, contender.indexOf(','));
				boolean storm = contender.endsWith("storm");
				boolean retryable = contender.equals(RETRYABLE_STORM);
				String id = "p3l-" + (retryable ? "retryable" : mode) + (storm ? "-storm-" : "-calm-") + label(run);
				String topic = this.broker.newTopic(id, partitions);
				Tally all = new Tally(0, sent);
				Latencies settled = new Latencies(0, settling);
				Latencies latencies = new Latencies(settling, records);
				Workload workload = (record) -> {
					long now = System.nanoTime();
					long seq = Records.seq(record.value());
					boolean firstAttempt = record.topic().equals(topic);
					boolean failingKey = fails(seq, failEvery);
					if (firstAttempt && !failingKey) {
						long latency = now - Records.sentNanos(record.value());
						settled.record(seq, latency);
						latencies.record(seq, latency);
					}
					if (handlerMs > 0) {
						Thread.sleep(handlerMs);
					}
					if (storm && failingKey && firstAttempt) {
						throw new IllegalStateException("planned transient failure of record " + seq);
					}
					all.record(seq);
				};
				BarrierWatch ready = new BarrierWatch(barriers);
				double[] behindMs = { Double.NaN };
				measure(report, contender, run, all, () -> {
					try (ConfigurableApplicationContext context = retryable
							? ListenerApplications.retryable(bootstrapServers(), topic, id, concurrency, delays(delays),
									partitions, workload)
							: ListenerApplications.ordered(bootstrapServers(), topic, id, concurrency, workload,
									List.of(ready), "kafka.resilience.dual-write=" + mode,
									"kafka.resilience.retry.delays=" + delays)) {
						// start sending once the instance consumes every partition:
						// start-up is not latency
						if (!(retryable ? ListenerApplications.awaitAssignment(context, partitions, timeout())
								: ready.await(timeout()))) {
							throw new IllegalStateException("The instance was not assigned every partition within "
									+ timeout().toSeconds() + " s");
						}
						behindMs[0] = send(topic, sent, rate, failEvery, keys, valueBytes);
						await(all);
					}
				});
				if (run > 0) {
					Latencies.Summary summary = latencies.summary();
					boolean complete = all.isComplete();
					p50.get(contender).add(complete ? summary.percentileMillis(0.50) : Double.NaN);
					p99.get(contender).add(complete ? summary.percentileMillis(0.99) : Double.NaN);
					max.get(contender).add(complete ? summary.maxMillis() : Double.NaN);
					settlingMax.get(contender).add(complete ? settled.summary().maxMillis() : Double.NaN);
					behind.get(contender).add(behindMs[0]);
					samples.get(contender).add(summary.count());
					this.logger.info(String.format(Locale.ROOT,
							"P3L %s %-24s %,d healthy records: latency p50 %s, p99 %s, "
									+ "max %s (%s while settling); sender at most %s behind its schedule",
							label(run), contender, summary.count(), Format.latency(summary.percentileMillis(0.50)),
							Format.latency(summary.percentileMillis(0.99)), Format.latency(summary.maxMillis()),
							Format.latency(settled.summary().maxMillis()), Format.latency(behindMs[0])));
				}
			}
		}

		Series baseline = p99.get(BASELINE);
		List<List<String>> rows = new ArrayList<>();
		for (String contender : CONTENDERS) {
			Series ratio = Series.ratio(p99.get(contender), baseline);
			rows.add(List.of(contender, Format.latency(p50.get(contender).median()),
					Format.latency(p99.get(contender).median()), Format.latency(max.get(contender).median()),
					p99.get(contender).runs(Format::latency), Format.ratio(ratio.median()),
					Format.latency(settlingMax.get(contender).median()),
					Format.latency(behind.get(contender).median())));
			if (contender.equals(RETRYABLE_STORM)) {
				report.measured(contender + " p99 vs baseline", ratio.median());
			}
			else if (!contender.equals(BASELINE)) {
				String mode = contender.substring(0, contender.indexOf(','));
				report.target(
						"healthy keys' produce-to-handle p99 during the storm ≤ 2× compensate with nothing failing ("
								+ mode + ")",
						ratio.median(),
						Format.ratio(ratio.median()) + " (" + Format.latency(p99.get(contender).median()) + " vs "
								+ Format.latency(baseline.median()) + ")",
						false, 2.0);
				report.measured(contender + " p99 vs baseline", ratio.median());
			}
			report.measured(contender + " p50 ms", p50.get(contender).median());
			report.measured(contender + " p99 ms", p99.get(contender).median());
			report.measured(contender + " max ms", max.get(contender).median());
			report.measured(contender + " latencies", samples.get(contender).median());
		}
		report.table(List.of("contender", "latency p50", "latency p99", "latency max", "p99, every run",
				"p99 vs compensate, no failures", "max while settling", "sender behind schedule (max)"), rows);
		report.note("Healthy records only, on their first and only attempt. Each contender reads a topic of its own, "
				+ "sent to while it runs; each run measures every contender back to back, in an order that rotates.");
		report.note("Max while settling: the longest latency of a healthy record sent in the first " + settleSeconds
				+ " s, while the instance creates its producers for its first writes (in transaction mode its first "
				+ "commit initialises the transactions of its whole pool of producers); a cost of an instance's "
				+ "start, left out of the other columns.");
		report.note("The last column is how far the sender fell behind its schedule at worst: when it is large the "
				+ "machine could not keep the rate, and the latencies are taken at a lower one.");
		return report;
	}

	/** Whether record {@code seq} is one of the storm's (each on a key of its own). */
	private static boolean fails(long seq, int failEvery) {
		return seq % failEvery == failEvery - 1;
	}

	/** How many of the records before {@code seq} are the storm's. */
	private static int failingBefore(int seq, int failEvery) {
		return seq / failEvery;
	}

	/**
	 * Sends the records at a steady rate, each with the time it was handed to the
	 * producer.
	 * @return how far, at most, a record was handed over after its due time, in
	 * milliseconds
	 */
	private double send(String topic, int records, int rate, int failEvery, int keys, int valueBytes) {
		// no linger: a record leaves as soon as the previous request is answered, so the
		// time
		// the producer holds it on purpose is not part of every latency
		try (KafkaProducer<byte[], byte[]> producer = this.broker
			.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0))) {
			long start = System.nanoTime();
			long behind = 0;
			int sent = 0;
			while (sent < records) {
				long elapsed = System.nanoTime() - start;
				long due = Math.min(records, elapsed * rate / 1_000_000_000L + 1);
				for (; sent < due; sent++) {
					String key = fails(sent, failEvery) ? "storm-" + sent : "key-" + (sent % keys);
					long now = System.nanoTime();
					behind = Math.max(behind, now - (start + sent * 1_000_000_000L / rate));
					producer
						.send(new ProducerRecord<>(topic, Records.key(key), Records.timedValue(sent, now, valueBytes)));
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
			}
			producer.flush();
			return behind / 1e6;
		}
	}

}
