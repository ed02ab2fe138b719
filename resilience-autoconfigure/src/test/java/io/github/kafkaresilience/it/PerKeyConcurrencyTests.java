package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import io.github.kafkaresilience.internal.metrics.ListenerMetrics;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Records of different keys of one partition run at once on the listener's workers;
 * records of one key run one after the other, in order, and the committed offset only
 * covers records that are done.
 */
@UsesSharedBroker
class PerKeyConcurrencyTests {

	private static final Log logger = LogFactory.getLog(PerKeyConcurrencyTests.class);

	private static final int KEYS = 200;

	private static final int PER_KEY = 20;

	@Test
	void sixteenWorkersWithRandomLatencyKeepEveryKeyInOrder() {
		String topic = SharedBroker.newTopic(2);
		Script script = Script.forTopic(topic).withLatency(5);
		long seed = Long.getLong("test.seed", System.nanoTime());
		Random random = new Random(seed);
		List<String[]> records = new ArrayList<>();
		for (int i = 0; i < PER_KEY; i++) {
			for (int k = 0; k < KEYS; k++) {
				records.add(new String[] { "k" + k, "k" + k + "-" + i });
			}
		}
		// 2 % of the records fail once: their keys take the ladder while the others run
		// on
		for (String[] record : records) {
			if (random.nextInt(100) < 2) {
				script.failTransiently(record[1], 1);
			}
		}
		try (ConfigurableApplicationContext context = TestApplication.start(topic,
				"kafka.resilience.consumer.concurrency=16", "kafka.resilience.retry.delays=1s")) {
			SharedBroker.sendAll(topic, records);
			await().atMost(Duration.ofSeconds(120))
				.until(() -> script.firstSuccessesByKey().values().stream().mapToInt(List::size).sum() == records
					.size());
			logger.info("Seed " + seed + ": at most " + script.mostRunningAtOnce() + " handlers ran at once");

			Map<String, List<String>> byKey = script.firstSuccessesByKey();
			for (int k = 0; k < KEYS; k++) {
				int key = k;
				assertThat(byKey.get("k" + k)).as("key k%d, seed %d", k, seed)
					.containsExactlyElementsOf(
							IntStream.range(0, PER_KEY).mapToObj((i) -> "k" + key + "-" + i).toList());
			}
			assertThat(script.sameKeyOverlaps()).as("handlings of one key that overlapped").isZero();
			assertThat(script.mostRunningAtOnce()).as("handlers that ran at once").isBetween(8, 16);
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
				assertThat(OrderedRetryIntegrationTests.liveLocks(context, topic)).isZero();
				assertThat(
						SharedBroker.committed("g-" + topic, topic, 0) + SharedBroker.committed("g-" + topic, topic, 1))
					.isEqualTo(records.size());
			});
		}
	}

	@Test
	void aHotKeyShowsInTheKeyDepthMeterWhileOtherKeysFinish() {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic).withLatency(4);
		List<String[]> records = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			records.add(new String[] { "hot", "hot-" + i });
			if (i < 100) {
				records.add(new String[] { "cold" + i, "cold-" + i });
			}
		}
		try (ConfigurableApplicationContext context = TestApplication.start(topic,
				"kafka.resilience.consumer.concurrency=4")) {
			SimpleMeterRegistry meters = new SimpleMeterRegistry();
			context.getBean(ListenerMetrics.class).bindTo(meters);
			Gauge depth = meters.get("kafka.resilience.consumer.key.depth.max").tag("listener", "it-" + topic).gauge();
			AtomicLong deepest = new AtomicLong();
			SharedBroker.sendAll(topic, records);
			await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(5)).until(() -> {
				deepest.accumulateAndGet((long) depth.value(), Math::max);
				return script.firstSuccesses("hot").size() == 300;
			});
			assertThat(deepest.get()).as("deepest key queue seen").isGreaterThanOrEqualTo(100);
			Instant lastCold = script.journal()
				.stream()
				.filter((a) -> a.key().startsWith("cold"))
				.map(Script.Attempt::at)
				.max(Instant::compareTo)
				.orElseThrow();
			Instant lastHot = script.journal()
				.stream()
				.filter((a) -> a.key().equals("hot"))
				.map(Script.Attempt::at)
				.max(Instant::compareTo)
				.orElseThrow();
			assertThat(lastCold).as("the cold keys did not wait for the hot one").isBefore(lastHot);
			await().atMost(Duration.ofSeconds(10)).until(() -> depth.value() == 0);
		}
	}

	@Test
	void stoppingDrainsRunningHandlersAndCommitsExactlyWhatIsDone() {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic).withLatency(60);
		List<String[]> records = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			records.add(new String[] { "k" + i, Integer.toString(i) });
		}
		ConfigurableApplicationContext context = TestApplication.start(topic, "kafka.resilience.consumer.concurrency=8",
				"kafka.resilience.consumer.commit-interval=1h");
		try {
			SharedBroker.sendAll(topic, records);
			await().atMost(Duration.ofSeconds(60)).until(() -> script.journal().size() >= 40);
		}
		finally {
			context.close();
		}
		// records and offsets coincide: the value of the record at offset n is n
		Set<Integer> handled = new HashSet<>();
		script.journal().forEach((attempt) -> handled.add(Integer.parseInt(attempt.value())));
		int boundary = 0;
		while (handled.contains(boundary)) {
			boundary++;
		}
		assertThat(handled).hasSizeLessThan(records.size());
		// only the final commit on stop can have committed (the interval is an hour): it
		// covers every record done, up to the first one not done, and nothing beyond
		assertThat(SharedBroker.committed("g-" + topic, topic, 0)).isEqualTo(boundary);
	}

	@Test
	void anInstanceKilledMidRunLosesNoRecordBelowTheOffsetItCommitted() {
		String topic = SharedBroker.newTopic(3);
		String audit = AuditedApplication.auditTopic(topic);
		SharedBroker.createTopic(audit, 1, Map.of());
		List<String[]> records = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			for (int k = 0; k < KEYS; k++) {
				records.add(new String[] { "k" + k, "k" + k + ":" + i + ":ok" });
			}
		}
		SharedBroker.sendAll(topic, records);
		String[] properties = { "kafka.resilience.consumer.concurrency=16", "test.max-latency-ms=20" };
		Map<Integer, Long> committed = new HashMap<>();
		try (InstanceProcess first = InstanceProcess.start(topic, "first", properties)) {
			await().atMost(Duration.ofSeconds(90))
				.pollInterval(Duration.ofMillis(200))
				.until(() -> MultiInstanceTests.audits(topic).size() >= records.size() / 5);
			first.kill();
		}
		for (int partition = 0; partition < 3; partition++) {
			committed.put(partition, SharedBroker.committed("g-" + topic, topic, partition));
		}
		Set<String> handled = new HashSet<>();
		MultiInstanceTests.audits(topic).forEach((line) -> handled.add(line.value()));
		long below = 0;
		for (ConsumerRecord<byte[], byte[]> record : SharedBroker.readAll(topic)) {
			if (record.offset() < committed.get(record.partition())) {
				below++;
				assertThat(handled)
					.as("record %d/%d below the committed offset %s", record.partition(), record.offset(), committed)
					.contains(new String(record.value(), StandardCharsets.UTF_8));
			}
		}
		logger.info("Killed after " + handled.size() + " handled records; committed " + committed + " (" + below
				+ " records below)");
		assertThat(below).as("the kill came mid-run, after commits").isBetween(1L, (long) records.size() - 1);

		try (InstanceProcess second = InstanceProcess.start(topic, "second", properties)) {
			await().atMost(Duration.ofSeconds(120))
				.pollInterval(Duration.ofMillis(500))
				.until(() -> MultiInstanceTests.audits(topic)
					.stream()
					.map(AuditedApplication.Audit::value)
					.distinct()
					.count() == records.size());
		}
		Map<String, List<String>> byKey = new HashMap<>();
		MultiInstanceTests.audits(topic).forEach((line) -> {
			List<String> values = byKey.computeIfAbsent(line.key(), (k) -> new ArrayList<>());
			if (!values.contains(line.value())) {
				values.add(line.value());
			}
		});
		for (int k = 0; k < KEYS; k++) {
			int key = k;
			assertThat(byKey.get("k" + k)).containsExactlyElementsOf(
					IntStream.range(0, 50).mapToObj((i) -> "k" + key + ":" + i + ":ok").toList());
		}
	}

}
