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
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 * and are killed hard and restarted at seeded moments, and so, on a cluster of broker
 * processes, are brokers. The checker then reads every topic and verifies the protocol's
 * promise.
 */
final class ChaosRun {

	/** The shared in-process broker of the JVM: where a run goes unless given other brokers. */
	static final Brokers SHARED_BROKER = new Brokers() {

		@Override
		public String bootstrapServers() {
			return SharedBroker.bootstrapServers();
		}

		@Override
		public void createTopic(String topic, int partitions, Map<String, String> configs) {
			SharedBroker.createTopic(topic, partitions, configs);
		}

		@Override
		public void sendAll(String topic, List<String[]> keyValues) {
			SharedBroker.sendAll(topic, keyValues);
		}

		@Override
		public List<ConsumerRecord<byte[], byte[]>> readAll(String topic) {
			return SharedBroker.readAll(topic, true);
		}

	};

	/**
	 * What a run needs of the brokers it runs on: where they are, topics, producing and
	 * reading back, and (for a cluster of broker processes) killing and restarting one.
	 */
	interface Brokers {

		String bootstrapServers();

		/** Creates a topic replicated as the brokers' default. */
		void createTopic(String topic, int partitions, Map<String, String> configs);

		/** Sends records (key, value pairs) without waiting for each, then waits for all. */
		void sendAll(String topic, List<String[]> keyValues);

		/**
		 * Every committed record of a topic (all partitions), read from the beginning to the
		 * current end: records of aborted or open transactions (dual-write 'transaction') are
		 * left out, as the application's consumers and lock tailer leave them out.
		 */
		List<ConsumerRecord<byte[], byte[]>> readAll(String topic);

		/** Brokers, each of which {@link #kill(int)} may pick. */
		default int size() {
			return 1;
		}

		/** Kills a broker hard (index from 0 to {@code size() - 1}). */
		default void kill(int broker) {
			throw new UnsupportedOperationException("Only a cluster of broker processes can kill a broker");
		}

		/** Starts a killed broker again and waits until the cluster is whole. */
		default void restart(int broker) {
			throw new UnsupportedOperationException("Only a cluster of broker processes can restart a broker");
		}

	}

	/**
	 * @param seed the seed of every random choice
	 * @param records records to produce
	 * @param keys distinct keys
	 * @param transientRate share of records failing transiently 1 to 3 times
	 * @param permanentRate share of records failing permanently
	 * @param instances instances running at once
	 * @param kills hard kills (each followed by a restart of the same instance)
	 * @param brokerKills hard kills of a broker, each followed after a seeded downtime by its
	 * restart; one at a time (a kill waits until the previous victim is back and in sync)
	 * @param properties application properties ({@code name=value}) added to those of every
	 * instance
	 * @param timeout how long the run may take once every record is produced and every broker
	 * is back
	 */
	record Plan(long seed, int records, int keys, double transientRate, double permanentRate, int instances, int kills,
			int brokerKills, List<String> properties, Duration timeout) {

		Plan {
			properties = List.copyOf(properties);
		}

		/** A plan without broker kills or extra application properties. */
		Plan(long seed, int records, int keys, double transientRate, double permanentRate, int instances, int kills,
				Duration timeout) {
			this(seed, records, keys, transientRate, permanentRate, instances, kills, 0, List.of(), timeout);
		}

		Plan withBrokerKills(int brokerKills) {
			return new Plan(this.seed, this.records, this.keys, this.transientRate, this.permanentRate, this.instances,
					this.kills, brokerKills, this.properties, this.timeout);
		}

		/** This plan with more application properties ({@code name=value}), for example a dual-write mode. */
		Plan withProperties(String... properties) {
			List<String> all = new ArrayList<>(this.properties);
			all.addAll(List.of(properties));
			return new Plan(this.seed, this.records, this.keys, this.transientRate, this.permanentRate, this.instances,
					this.kills, this.brokerKills, all, this.timeout);
		}

	}

	record Report(List<String> violations, int records, long duplicates, int deadLetters, Duration wallTime, long seed,
			int brokers, int brokerKills) {

		@Override
		public String toString() {
			return "chaos seed=" + this.seed + " records=" + this.records
					+ ((this.brokers > 1) ? " brokers=" + this.brokers + " broker-kills=" + this.brokerKills : "")
					+ " duplicates=" + this.duplicates + " dlq=" + this.deadLetters + " wall=" + this.wallTime.toMillis()
					+ " ms violations=" + this.violations.size()
					+ (this.violations.isEmpty() ? "" : " first: " + this.violations.subList(0, Math.min(10, this.violations.size())));
		}

	}

	private ChaosRun() {
	}

	/** Runs a plan on the shared in-process broker. */
	static Report run(Plan plan) throws InterruptedException {
		return run(plan, SHARED_BROKER);
	}

	/**
	 * Runs a plan on the given brokers: the last report of the checker, clean if every promise
	 * was kept within the plan's timeout.
	 */
	static Report run(Plan plan, Brokers brokers) throws InterruptedException {
		if (plan.brokerKills() > 0 && brokers.size() < 2) {
			throw new IllegalArgumentException("A plan with broker kills needs a cluster of several brokers, not " + brokers.size());
		}
		long start = System.nanoTime();
		Random random = new Random(plan.seed());
		String topic = "t" + UUID.randomUUID().toString().substring(0, 8);
		brokers.createTopic(topic, 3, Map.of());
		brokers.createTopic(AuditedApplication.auditTopic(topic), 1, Map.of());
		List<String> properties = new ArrayList<>(List.of("kafka.resilience.retry.delays=1s,2s",
				"kafka.resilience.retry.max-attempts=4"));
		properties.addAll(plan.properties());
		List<InstanceProcess> running = new ArrayList<>();
		for (int i = 0; i < plan.instances(); i++) {
			running.add(InstanceProcess.start(brokers.bootstrapServers(), topic, "chaos-" + i, properties));
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
		// drawn after every earlier choice, so plans without broker kills replay as before
		Map<Integer, BrokerKill> brokerKillAt = new HashMap<>();
		while (brokerKillAt.size() < plan.brokerKills()) {
			int batch = 2 + random.nextInt(batches - 4);
			BrokerKill kill = new BrokerKill(random.nextInt(brokers.size()), Duration.ofMillis(5000 + random.nextInt(10_000)));
			brokerKillAt.putIfAbsent(batch, kill);
		}
		ScheduledExecutorService restarts = Executors.newSingleThreadScheduledExecutor();
		Future<?> restart = CompletableFuture.completedFuture(null);
		try {
			int batchSize = (all.size() + batches - 1) / batches;
			for (int b = 0; b < batches; b++) {
				List<String[]> batch = all.subList(Math.min(all.size(), b * batchSize), Math.min(all.size(), (b + 1) * batchSize));
				brokers.sendAll(topic, batch);
				if (brokerKillAt.containsKey(b)) {
					BrokerKill kill = brokerKillAt.get(b);
					awaitDone(restart); // one broker down at a time: min.insync.replicas 2 of 3
					brokers.kill(kill.broker());
					long killed = System.nanoTime();
					int batchNumber = b;
					// creating the situation: the broker stays down while records keep arriving
					restart = restarts.schedule(() -> {
						brokers.restart(kill.broker());
						System.out.println("chaos seed=" + plan.seed() + ": broker " + kill.broker() + " killed after batch "
								+ batchNumber + ", down " + kill.downtime().toMillis() + " ms, back and in sync after "
								+ Duration.ofNanos(System.nanoTime() - killed).toMillis() + " ms");
					}, kill.downtime().toMillis(), TimeUnit.MILLISECONDS);
				}
				if (killAt.contains(b)) {
					int victim = random.nextInt(running.size());
					running.get(victim).kill();
					Thread.sleep(500 + random.nextInt(1500)); // creating the situation: the instance stays down a while
					running.set(victim, InstanceProcess.start(brokers.bootstrapServers(), topic, "chaos-" + victim, properties));
				}
				Thread.sleep(200); // paces production: records keep arriving while instances die and return
			}
			awaitDone(restart);
			AtomicReference<Report> last = new AtomicReference<>();
			// a check reads every topic from the start: on a big run, checking every second
			// would keep a core of a 2-core machine busy, away from the run it checks
			Duration checkInterval = Duration.ofMillis(Math.max(1000, plan.records() / 5));
			try {
				await().atMost(plan.timeout()).pollInterval(checkInterval)
					.until(() -> last.updateAndGet((r) -> check(plan, brokers, topic, expected, start)).violations().isEmpty());
			}
			catch (ConditionTimeoutException ex) {
				// the last report says what is still broken
			}
			return last.get();
		}
		finally {
			restarts.shutdownNow();
			running.forEach(InstanceProcess::close);
		}
	}

	/** A broker to kill and how long it stays down. */
	private record BrokerKill(int broker, Duration downtime) {
	}

	private static void awaitDone(Future<?> restart) throws InterruptedException {
		try {
			restart.get(5, TimeUnit.MINUTES);
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new IllegalStateException("A killed broker did not come back", ex);
		}
	}

	/** Reads the audit, dead-letter and lock topics and lists every broken promise. */
	static Report check(Plan plan, Brokers brokers, String topic, Map<String, String> expected, long start) {
		List<String> violations = new ArrayList<>();
		Map<String, List<String>> firstSuccessesByKey = new HashMap<>();
		Set<String> succeeded = new HashSet<>();
		long successes = 0;
		for (ConsumerRecord<byte[], byte[]> record : brokers.readAll(AuditedApplication.auditTopic(topic))) {
			AuditedApplication.Audit audit = AuditedApplication.Audit.parse(record);
			if (audit.ok()) {
				successes++;
				if (succeeded.add(audit.value())) {
					firstSuccessesByKey.computeIfAbsent(audit.key(), (k) -> new ArrayList<>()).add(audit.value());
				}
			}
		}
		Map<String, String> deadLetters = new HashMap<>();
		for (ConsumerRecord<byte[], byte[]> record : brokers.readAll(topic + ".dlq")) {
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
		int liveLocks = liveLocks(brokers, topic);
		if (liveLocks != 0) {
			violations.add(liveLocks + " live locks left");
		}
		return new Report(violations, expected.size(), successes - succeeded.size(), deadLetters.size(),
				Duration.ofNanos(System.nanoTime() - start), plan.seed(), brokers.size(), plan.brokerKills());
	}

	/** Live locks after replaying the whole lock topic of the shared broker. */
	static int liveLocks(String topic) {
		return liveLocks(SHARED_BROKER, topic);
	}

	/** Live locks after replaying the whole lock topic. */
	static int liveLocks(Brokers brokers, String topic) {
		LockTable table = new LockTable();
		for (ConsumerRecord<byte[], byte[]> record : brokers.readAll(topic + ".locks")) {
			String id = LockCodec.decodeId(record.key());
			table.apply(record.partition(), record.offset(), id,
					(record.value() != null) ? LockCodec.decode(id, record.headers(), record.value()) : null);
		}
		return table.size();
	}

}
