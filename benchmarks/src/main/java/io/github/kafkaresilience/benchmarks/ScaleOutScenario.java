package io.github.kafkaresilience.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.utils.Utils;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * P9, scaling out: the workload of P2 (a handler that sleeps, many keys) on a topic of a
 * few partitions, read by 1, 2 and 4 instances of one group (applications in this JVM),
 * with each group protocol. The records are produced once every instance holds partitions
 * of the main topic, so each run measures that many instances at work; a run's throughput
 * is compared with one instance's times the number of instances.
 */
final class ScaleOutScenario extends Scenario {

	ScaleOutScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	@Override
	ScenarioReport run() throws Exception {
		int records = this.settings.count("p9-records");
		int keys = this.settings.count("p9-keys");
		int partitions = this.settings.count("p9-partitions");
		int sleepMs = this.settings.count("p9-sleep-ms");
		int workers = this.settings.count("p9-workers");
		int valueBytes = this.settings.count("value-bytes");
		List<Integer> sizes = this.settings.counts("p9-instances");
		List<String> protocols = List.of(this.settings.text("p9-protocols").split(","))
			.stream()
			.map(String::trim)
			.toList();
		ScenarioReport report = new ScenarioReport("P9",
				"Scale-out: 1 to " + sizes.get(sizes.size() - 1) + " instances, " + sleepMs + " ms per record");
		report.setup(String.format(Locale.ROOT,
				"%,d records of %d bytes over %,d keys in %d partitions, produced once "
						+ "every instance holds partitions of the topic; the handler sleeps %d ms",
				records, valueBytes, keys, partitions, sleepMs));
		report.setup(String.format(Locale.ROOT, "@OrderedRetryListener: %d workers an instance; instances: %s, each an "
				+ "application of its own in this JVM, in one group; group protocols: %s with their default assignors",
				workers, sizes, String.join(", ", protocols)));
		report
			.setup(String.format(Locale.ROOT, "one instance's ideal: %d workers × 1 record per %d ms = %,.0f records/s",
					workers, sleepMs, workers * 1000.0 / sleepMs));

		Map<String, Series> throughput = new LinkedHashMap<>();
		for (String protocol : protocols) {
			for (int size : sizes) {
				throughput.put(contender(protocol, size), new Series());
			}
		}
		// no warm-up run: a sleeping handler, not the JIT, sets the pace
		for (int run : runs(false)) {
			for (String protocol : protocols) {
				for (int size : sizes) {
					String contender = contender(protocol, size);
					String topic = this.broker.newTopic("p9", partitions);
					String id = "p9-" + protocol + "-" + size + "-" + label(run);
					Tally tally = new Tally(0, records);
					Workload workload = (record) -> {
						Thread.sleep(sleepMs);
						tally.record(Records.seq(record.value()));
					};
					double perSecond = measure(report, contender, run, tally, () -> {
						List<ConfigurableApplicationContext> instances = new ArrayList<>();
						try {
							for (int i = 0; i < size; i++) {
								instances.add(ListenerApplications.ordered(bootstrapServers(), topic, id, workers,
										workload, "kafka.resilience.instance-id=" + id + "-" + i,
										"spring.kafka.consumer.properties.group.protocol=" + protocol));
							}
							awaitEveryInstanceHoldsTheTopic(instances, id, topic, partitions);
							this.broker.fill(records, (i) -> new ProducerRecord<>(topic,
									Records.key("key-" + (i % keys)), Records.value(i, valueBytes)));
							await(tally);
						}
						finally {
							instances.forEach(ConfigurableApplicationContext::close);
						}
					});
					if (run > 0) {
						throughput.get(contender).add(perSecond);
					}
				}
			}
		}

		List<List<String>> rows = new ArrayList<>();
		for (String protocol : protocols) {
			Series one = throughput.get(contender(protocol, sizes.get(0)));
			for (int size : sizes) {
				Series series = throughput.get(contender(protocol, size));
				Series scaled = Series.ratio(series, one.median() * size / sizes.get(0));
				rows.add(List.of(protocol, Integer.toString(size), Format.perSecond(series.median()),
						series.runs(Format::count), Format.ratio(scaled.median())));
				report.measured(contender(protocol, size) + " records/s", series.median());
				if (size > sizes.get(0)) {
					report.target(
							String.format(Locale.ROOT, "%d instances ≥ 0.95 × %d × %d instance(s) (%s protocol)", size,
									size / sizes.get(0), sizes.get(0), protocol),
							scaled.median(), Format.ratio(scaled.median()), true, 0.95);
				}
			}
		}
		report.table(List.of("group protocol", "instances", "records/s (median)", "every run",
				"vs " + sizes.get(0) + " instance(s) × N"), rows);
		int[] perPartition = new int[partitions];
		for (int i = 0; i < records; i++) {
			perPartition[Utils.toPositive(Utils.murmur2(Records.key("key-" + (i % keys)))) % partitions]++;
		}
		int busiest = Arrays.stream(perPartition).max().orElse(0);
		report
			.note(String.format(Locale.ROOT, "The keys put %s records in the %d partitions (the default partitioner): "
					+ "with one partition an instance, the busiest instance has %,d records against a mean of %,.0f, so no "
					+ "consumer gets past %s of one instance's throughput times %d there.",
					Arrays.stream(perPartition).mapToObj(Format::count).toList(), partitions, busiest,
					(double) records / partitions, Format.ratio((double) records / partitions / busiest), partitions));
		report.note("Every instance runs in this JVM, on the machine's cores, with the broker: where the workers' "
				+ "sleeps are not the bottleneck, the cores are.");
		return report;
	}

	private static String contender(String protocol, int size) {
		return "@OrderedRetryListener, " + protocol + ", " + size + " instance" + ((size == 1) ? "" : "s");
	}

	/**
	 * Waits until the group settled with every partition of the topic held and every
	 * instance holding some.
	 */
	private void awaitEveryInstanceHoldsTheTopic(List<ConfigurableApplicationContext> instances, String id,
			String topic, int partitions) throws InterruptedException {
		long deadline = System.nanoTime() + timeout().toNanos();
		while (System.nanoTime() < deadline) {
			long held = 0;
			boolean everyInstance = true;
			for (ConfigurableApplicationContext instance : instances) {
				RetryContainer container = instance.getBean(ListenerRegistry.class).container(id);
				long ofTopic = (container != null)
						? container.assignment().stream().filter((tp) -> tp.topic().equals(topic)).count() : 0;
				everyInstance &= ofTopic > 0 && container.closedBarriers().isEmpty();
				held += ofTopic;
			}
			if (everyInstance && held == partitions) {
				return;
			}
			TimeUnit.MILLISECONDS.sleep(50); // the group's rebalance, not a result
		}
		throw new IllegalStateException("The " + instances.size() + " instances of '" + id
				+ "' did not all hold partitions of '" + topic + "' within " + timeout().toSeconds() + " s");
	}

}
