package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import java.util.concurrent.atomic.AtomicReference;

import io.github.kafkaresilience.ladder.RetryHeaders;
import io.github.kafkaresilience.lock.LockCodec;
import io.github.kafkaresilience.lock.LockTable;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.awaitility.core.ConditionTimeoutException;

import static org.awaitility.Awaitility.await;

/**
 * A seeded chaos run: records carry (key, sequence) and a rule the handler follows (succeed,
 * fail transiently N times, fail permanently); application instances run in JVMs of their own
 * and are killed hard and restarted at seeded moments. The checker then reads every topic and
 * verifies the protocol's promise.
 */
final class ChaosRun {

	/**
	 * @param seed the seed of every random choice
	 * @param records records to produce
	 * @param keys distinct keys
	 * @param transientRate share of records failing transiently 1 to 3 times
	 * @param permanentRate share of records failing permanently
	 * @param instances instances running at once
	 * @param kills hard kills (each followed by a restart of the same instance)
	 * @param timeout how long the run may take
	 */
	record Plan(long seed, int records, int keys, double transientRate, double permanentRate, int instances, int kills,
			Duration timeout) {
	}

	record Report(List<String> violations, int records, long duplicates, int deadLetters, Duration wallTime, long seed) {

		@Override
		public String toString() {
			return "chaos seed=" + this.seed + " records=" + this.records + " duplicates=" + this.duplicates + " dlq="
					+ this.deadLetters + " wall=" + this.wallTime.toMillis() + " ms violations=" + this.violations.size()
					+ (this.violations.isEmpty() ? "" : " first: " + this.violations.subList(0, Math.min(10, this.violations.size())));
		}

	}

	private ChaosRun() {
	}

	static Report run(Plan plan) throws InterruptedException {
		long start = System.nanoTime();
		Random random = new Random(plan.seed());
		String topic = SharedBroker.newTopic(3);
		SharedBroker.createTopic(AuditedApplication.auditTopic(topic), 1, Map.of());
		String[] properties = { "kafka.resilience.retry.delays=1s,2s", "kafka.resilience.retry.max-attempts=4" };
		List<InstanceProcess> running = new ArrayList<>();
		for (int i = 0; i < plan.instances(); i++) {
			running.add(InstanceProcess.start(topic, "chaos-" + i, properties));
		}
		Map<String, String> expected = new LinkedHashMap<>(); // value -> "ok" or "p"
		List<String[]> all = new ArrayList<>();
		int[] sequence = new int[plan.keys()];
		for (int i = 0; i < plan.records(); i++) {
			int key = random.nextInt(plan.keys());
			double roll = random.nextDouble();
			String rule = (roll < plan.permanentRate()) ? "p"
					: (roll < plan.permanentRate() + plan.transientRate()) ? "t" + (1 + random.nextInt(3)) : "ok";
			String value = "key" + key + ":" + (sequence[key]++) + ":" + rule;
			expected.put(value, rule.equals("p") ? "p" : "ok");
			all.add(new String[] { "key" + key, value });
		}
		int batches = 20;
		Set<Integer> killAt = new HashSet<>();
		while (killAt.size() < plan.kills()) {
			killAt.add(2 + random.nextInt(batches - 4));
		}
		try {
			int batchSize = (all.size() + batches - 1) / batches;
			for (int b = 0; b < batches; b++) {
				List<String[]> batch = all.subList(Math.min(all.size(), b * batchSize), Math.min(all.size(), (b + 1) * batchSize));
				SharedBroker.sendAll(topic, batch);
				if (killAt.contains(b)) {
					int victim = random.nextInt(running.size());
					running.get(victim).kill();
					Thread.sleep(500 + random.nextInt(1500)); // creating the situation: the instance stays down a while
					running.set(victim, InstanceProcess.start(topic, "chaos-" + victim, properties));
				}
				Thread.sleep(200); // paces production: records keep arriving while instances die and return
			}
			AtomicReference<Report> last = new AtomicReference<>();
			try {
				await().atMost(plan.timeout()).pollInterval(Duration.ofSeconds(1))
					.until(() -> last.updateAndGet((r) -> check(plan, topic, expected, start)).violations().isEmpty());
			}
			catch (ConditionTimeoutException ex) {
				// the last report says what is still broken
			}
			return last.get();
		}
		finally {
			running.forEach(InstanceProcess::close);
		}
	}

	/** Reads the audit, dead-letter and lock topics and lists every broken promise. */
	static Report check(Plan plan, String topic, Map<String, String> expected, long start) {
		List<String> violations = new ArrayList<>();
		Map<String, List<String>> firstSuccessesByKey = new HashMap<>();
		Set<String> succeeded = new HashSet<>();
		long successes = 0;
		for (ConsumerRecord<byte[], byte[]> record : SharedBroker.readAll(AuditedApplication.auditTopic(topic))) {
			AuditedApplication.Audit audit = AuditedApplication.Audit.parse(record);
			if (audit.ok()) {
				successes++;
				if (succeeded.add(audit.value())) {
					firstSuccessesByKey.computeIfAbsent(audit.key(), (k) -> new ArrayList<>()).add(audit.value());
				}
			}
		}
		Map<String, String> deadLetters = new HashMap<>();
		for (ConsumerRecord<byte[], byte[]> record : SharedBroker.readAll(topic + ".dlq")) {
			deadLetters.put(new String(record.value(), StandardCharsets.UTF_8), RetryHeaders.text(record.headers(), RetryHeaders.DLQ_REASON));
		}
		Map<String, List<String>> producedByKey = new HashMap<>();
		expected.forEach((value, outcome) -> {
			String key = value.substring(0, value.indexOf(':'));
			if (outcome.equals("p")) {
				if (!"permanent".equals(deadLetters.get(value))) {
					violations.add(value + " should be dead-lettered as permanent but is " + deadLetters.get(value));
				}
			}
			else {
				producedByKey.computeIfAbsent(key, (k) -> new ArrayList<>()).add(value);
				if (!succeeded.contains(value)) {
					violations.add(value + " never succeeded" + (deadLetters.containsKey(value) ? " (dead-lettered: "
							+ deadLetters.get(value) + ")" : ""));
				}
			}
		});
		producedByKey.forEach((key, values) -> {
			List<String> first = firstSuccessesByKey.getOrDefault(key, List.of()).stream()
				.filter((v) -> !expected.getOrDefault(v, "ok").equals("p"))
				.toList();
			List<String> done = values.stream().filter(succeeded::contains).toList();
			if (!first.equals(done)) {
				violations.add("key " + key + " handled out of order: " + first + " instead of " + done);
			}
		});
		int liveLocks = liveLocks(topic);
		if (liveLocks != 0) {
			violations.add(liveLocks + " live locks left");
		}
		return new Report(violations, expected.size(), successes - succeeded.size(), deadLetters.size(),
				Duration.ofNanos(System.nanoTime() - start), plan.seed());
	}

	/** Live locks after replaying the whole lock topic. */
	static int liveLocks(String topic) {
		LockTable table = new LockTable();
		for (ConsumerRecord<byte[], byte[]> record : SharedBroker.readAll(topic + ".locks")) {
			String id = LockCodec.decodeId(record.key());
			table.apply(record.partition(), record.offset(), id,
					(record.value() != null) ? LockCodec.decode(id, record.headers(), record.value()) : null);
		}
		return table.size();
	}

}
