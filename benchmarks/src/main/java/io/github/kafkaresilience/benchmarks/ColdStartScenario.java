package io.github.kafkaresilience.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.LongAdder;

import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockCodec;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.Ownership;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.utils.Bytes;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * P4, cold start: an instance starts against a lock topic that holds many live locks (as
 * after a long outage of a downstream service). Measures how long until every partition's
 * sync barrier has opened, and how much heap the lock table holds per live lock.
 */
final class ColdStartScenario extends Scenario {

	private static final String DELAYS = "1s";

	/**
	 * The consumer group (and listener and instance id) of every run on the filled lock
	 * topic.
	 */
	private static final String LOCKED_GROUP = "p4-locked";

	ColdStartScenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		super(broker, settings);
	}

	@Override
	ScenarioReport run() throws Exception {
		int locks = this.settings.count("p4-locks");
		int partitions = this.settings.count("p4-partitions");
		int barriers = partitions * (1 + DELAYS.split(",").length);
		ScenarioReport report = new ScenarioReport("P4", "Cold start with " + Format.count(locks) + " live locks");
		report.setup(String.format(Locale.ROOT,
				"a compacted lock topic of %d partitions holding %,d live locks (one per "
						+ "key, written with the library's LockCodec) before the instance starts; an empty main topic; "
						+ "retry delays %s, so %d partitions (main and retry topic) each wait behind a sync barrier",
				partitions, locks, DELAYS, barriers));
		report.setup("cold start: from the start of the Spring application until the last of its partitions' barriers "
				+ "opened; barrier wait: the longest wait of one partition, from its assignment");
		report.setup("heap per live lock: used heap after full GCs with the instance running, minus the same with an "
				+ "identical instance on an empty lock topic (measured just before, in the same JVM), divided by the "
				+ "locks; the broker shares this JVM, so small differences are noise");

		String emptyTopic = this.broker.newTopic("p4-empty", partitions);
		String topic = this.broker.newTopic("p4-locked", partitions);
		// every run starts an instance of one group, whose ladder's lock topic is filled
		// once
		String lockTopic = LOCKED_GROUP + "." + topic + ".locks";
		Ownership owner = new Ownership(LOCKED_GROUP, true, List.of());
		this.broker.createTopic(lockTopic, partitions,
				Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
		LongAdder lockBytes = new LongAdder();
		long started = System.nanoTime();
		Instant now = Instant.now();
		this.broker.fill(locks, (i) -> {
			Bytes key = Bytes.wrap(Records.key("cold-" + i));
			int partition = i % partitions;
			Lock lock = new Lock(UUID.randomUUID().toString(), key, partition, i / partitions, 1,
					(long) (i / partitions), null, 1, null, now);
			ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(lockTopic, partition, null,
					LockCodec.encodeId(lock.id()), LockCodec.encode(lock),
					LockCodec.headers(key, "benchmark-loader", owner));
			lockBytes.add(record.key().length + record.value().length + LockCodec.BUSINESS_KEY.length()
					+ key.get().length + LockCodec.COORDINATOR_ID.length() + "benchmark-loader".length()
					+ Ownership.HEADER.length() + LOCKED_GROUP.length());
			return record;
		});
		this.logger.info(String.format(Locale.ROOT, "P4 wrote %,d lock records in %,.0f ms", locks,
				(System.nanoTime() - started) / 1e6));

		Series coldStart = new Series();
		Series longestWait = new Series();
		Series perLock = new Series();
		Series tableHeap = new Series();
		for (int run : runs(false)) {
			String contender = Format.count(locks) + " live locks";
			long emptyHeap;
			BarrierWatch emptyWatch = new BarrierWatch(barriers);
			try (ConfigurableApplicationContext context = start(emptyTopic, "p4-empty-" + label(run), emptyWatch)) {
				if (!emptyWatch.await(timeout())) {
					report.completion("empty lock topic", run, emptyWatch.opened(), barriers,
							"barriers did not open within " + timeout().toSeconds() + " s");
					continue;
				}
				emptyHeap = usedHeapAfterGc();
			}
			BarrierWatch watch = new BarrierWatch(barriers);
			long start = System.nanoTime();
			try (ConfigurableApplicationContext context = start(topic, LOCKED_GROUP, watch)) {
				boolean opened = watch.await(timeout());
				LockRegistry registry = context.getBean(LockCoordinator.class)
					.registries()
					.stream()
					.filter((candidate) -> candidate.mainTopic().equals(topic))
					.findFirst()
					.orElse(null);
				int loaded = (registry != null) ? registry.size() : 0;
				String error = !opened ? "barriers did not open within " + timeout().toSeconds() + " s"
						: (loaded != locks) ? "the lock table holds " + loaded + " locks" : null;
				report.completion(contender, run, loaded, locks, error);
				if (error != null) {
					this.logger.warn("P4 " + label(run) + ": " + error);
					continue;
				}
				double startMs = millisBetween(start, watch.lastOpenedNanos());
				long used = usedHeapAfterGc();
				coldStart.add(startMs);
				longestWait.add(watch.longestWaitNanos() / 1e6);
				tableHeap.add(used - emptyHeap);
				perLock.add((double) (used - emptyHeap) / locks);
				this.logger.info(String.format(Locale.ROOT,
						"P4 %s cold start %,.0f ms, longest barrier wait %,.0f ms, " + "%,.0f bytes per lock",
						label(run), startMs, watch.longestWaitNanos() / 1e6, (double) (used - emptyHeap) / locks));
			}
		}

		List<List<String>> rows = new ArrayList<>();
		rows.add(List.of("cold start (application start → every barrier open)", Format.millis(coldStart.median()),
				coldStart.runs(Format::count)));
		rows.add(List.of("longest barrier wait of one partition", Format.millis(longestWait.median()),
				longestWait.runs(Format::count)));
		rows.add(List.of("heap per live lock", Format.bytes(perLock.median()), perLock.runs(Format::count)));
		rows.add(List.of("heap of the lock table", Format.mebibytes(tableHeap.median()),
				tableHeap.runs((bytes) -> Format.mebibytes(bytes).replace(" MiB", ""))));
		report.table(List.of("measurement", "median", "every run (ms, bytes, MiB)"), rows);
		report.target("cold start ≤ 10 s", coldStart.median(), Format.seconds(coldStart.median()), false, 10_000);
		report.target("heap ≤ 200 bytes per live lock", perLock.median(), Format.bytes(perLock.median()), false, 200);
		report.note(String.format(Locale.ROOT, "A lock record is %,.0f bytes on average (id, JSON value, headers).",
				lockBytes.sum() / (double) Math.max(1, locks)));
		report.measured("cold start ms", coldStart.median());
		report.measured("longest barrier wait ms", longestWait.median());
		report.measured("heap bytes per lock", perLock.median());
		return report;
	}

	private ConfigurableApplicationContext start(String topic, String id, BarrierWatch watch) {
		return ListenerApplications.ordered(bootstrapServers(), topic, id, this.settings.count("concurrency"),
				(record) -> {
				}, List.of(watch), "kafka.resilience.retry.delays=" + DELAYS, "kafka.resilience.reaper.enabled=false");
	}

	private static long usedHeapAfterGc() {
		MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
		long used = Long.MAX_VALUE;
		for (int i = 0; i < 3; i++) {
			memory.gc();
			used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
		}
		return used;
	}

}
