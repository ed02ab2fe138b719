package io.github.kafkaresilience.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
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

import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.lock.LockCodec;
import io.github.kafkaresilience.internal.lock.TestLockTable;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Bytes;
import org.awaitility.core.ConditionTimeoutException;

import static org.awaitility.Awaitility.await;

/**
 * A seeded chaos run: records carry (key, sequence) and a rule the handler follows
 * (succeed, fail transiently N times, fail permanently); application instances run in
 * JVMs of their own and are killed hard and restarted at seeded moments, and so, on a
 * cluster of broker processes, are brokers. The checker then reads every topic and
 * verifies the protocol's promise.
 */
final class ChaosRun {

	/** The shared broker of the JVM: where a run goes unless given other brokers. */
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

	};

	/**
	 * What a run needs of the brokers it runs on: where they are, topics, producing and
	 * reading back, and (for a cluster of broker processes) killing and restarting one.
	 */
	interface Brokers {

		String bootstrapServers();

		/** Creates a topic replicated as the brokers' default. */
		void createTopic(String topic, int partitions, Map<String, String> configs);

		/**
		 * Sends records (key, value pairs) without waiting for each, then waits for all.
		 */
		void sendAll(String topic, List<String[]> keyValues);

		/**
		 * Every committed record of a topic (all partitions), read from the beginning to
		 * the current end: records of aborted or open transactions (dual-write
		 * 'transaction') are left out, as the application's consumers and lock tailer
		 * leave them out.
		 */
		default List<ConsumerRecord<byte[], byte[]>> readAll(String topic) {
			return TopicTail.readAll(bootstrapServers(), topic, true);
		}

		/**
		 * A reader of the committed records of a topic, in steps (see
		 * {@link #readAll(String)}).
		 */
		default TopicTail tail(String topic) {
			return new TopicTail(bootstrapServers(), topic, true);
		}

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
	 * @param brokerKills hard kills of a broker, each followed after a seeded downtime by
	 * its restart; one at a time (a kill waits until the previous victim is back and in
	 * sync)
	 * @param properties application properties ({@code name=value}) added to those of
	 * every instance
	 * @param timeout how long the run may take once every record is produced and every
	 * broker is back
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

		/**
		 * This plan with more application properties ({@code name=value}), for example a
		 * dual-write mode.
		 */
		Plan withProperties(String... properties) {
			List<String> all = new ArrayList<>(this.properties);
			all.addAll(List.of(properties));
			return new Plan(this.seed, this.records, this.keys, this.transientRate, this.permanentRate, this.instances,
					this.kills, this.brokerKills, all, this.timeout);
		}

	}

	/**
	 * @param diagnosis the live locks of the first keys with a record not yet done, empty
	 * when every record is done
	 */
	record Report(List<String> violations, int records, long duplicates, int deadLetters, Duration wallTime, long seed,
			int brokers, int brokerKills, int done, String diagnosis) {

		@Override
		public String toString() {
			return "chaos seed=" + this.seed + " records=" + this.records
					+ ((this.brokers > 1) ? " brokers=" + this.brokers + " broker-kills=" + this.brokerKills : "")
					+ " duplicates=" + this.duplicates + " dlq=" + this.deadLetters + " wall="
					+ this.wallTime.toMillis() + " ms violations=" + this.violations.size()
					+ (this.violations.isEmpty() ? ""
							: " first: " + this.violations.subList(0, Math.min(10, this.violations.size())) + " done="
									+ this.done + "/" + this.records + " live locks of unfinished keys: "
									+ this.diagnosis);
		}

	}

	private ChaosRun() {
	}

	/** Runs a plan on the shared broker. */
	static Report run(Plan plan) throws InterruptedException {
		return run(plan, SHARED_BROKER);
	}

	/**
	 * Runs a plan on the given brokers: the last report of the checker, clean if every
	 * promise was kept within the plan's timeout.
	 */
	static Report run(Plan plan, Brokers brokers) throws InterruptedException {
		if (plan.brokerKills() > 0 && brokers.size() < 2) {
			throw new IllegalArgumentException(
					"A plan with broker kills needs a cluster of several brokers, not " + brokers.size());
		}
		long start = System.nanoTime();
		Random random = new Random(plan.seed());
		String topic = "t" + UUID.randomUUID().toString().substring(0, 8);
		brokers.createTopic(topic, 3, Map.of());
		brokers.createTopic(AuditedApplication.auditTopic(topic), 1, Map.of());
		List<String> properties = new ArrayList<>(
				List.of("kafka.resilience.retry.delays=1s,2s", "kafka.resilience.retry.max-attempts=4"));
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
		// drawn after every earlier choice, so plans without broker kills replay as
		// before
		Map<Integer, BrokerKill> brokerKillAt = new HashMap<>();
		while (brokerKillAt.size() < plan.brokerKills()) {
			int batch = 2 + random.nextInt(batches - 4);
			BrokerKill kill = new BrokerKill(random.nextInt(brokers.size()),
					Duration.ofMillis(5000 + random.nextInt(10_000)));
			brokerKillAt.putIfAbsent(batch, kill);
		}
		ScheduledExecutorService restarts = Executors.newSingleThreadScheduledExecutor();
		Future<?> restart = CompletableFuture.completedFuture(null);
		try {
			int batchSize = (all.size() + batches - 1) / batches;
			for (int b = 0; b < batches; b++) {
				List<String[]> batch = all.subList(Math.min(all.size(), b * batchSize),
						Math.min(all.size(), (b + 1) * batchSize));
				brokers.sendAll(topic, batch);
				if (brokerKillAt.containsKey(b)) {
					BrokerKill kill = brokerKillAt.get(b);
					awaitDone(restart); // one broker down at a time: min.insync.replicas
										// 2 of 3
					brokers.kill(kill.broker());
					long killed = System.nanoTime();
					int batchNumber = b;
					// creating the situation: the broker stays down while records keep
					// arriving
					restart = restarts.schedule(() -> {
						brokers.restart(kill.broker());
						progress("chaos seed=" + plan.seed() + ": broker " + kill.broker() + " killed after batch "
								+ batchNumber + ", down " + kill.downtime().toMillis() + " ms, back and in sync after "
								+ Duration.ofNanos(System.nanoTime() - killed).toMillis() + " ms");
					}, kill.downtime().toMillis(), TimeUnit.MILLISECONDS);
				}
				if (killAt.contains(b)) {
					int victim = random.nextInt(running.size());
					running.get(victim).kill();
					progress("chaos seed=" + plan.seed() + ": instance chaos-" + victim + " killed after batch " + b);
					Thread.sleep(500 + random.nextInt(1500)); // creating the situation:
																// the instance stays down
																// a while
					running.set(victim,
							InstanceProcess.start(brokers.bootstrapServers(), topic, "chaos-" + victim, properties));
				}
				Thread.sleep(200); // paces production: records keep arriving while
									// instances die and return
			}
			awaitDone(restart);
			progress("chaos seed=" + plan.seed() + ": " + plan.records() + " records produced to " + topic + " after "
					+ Duration.ofNanos(System.nanoTime() - start).toSeconds() + " s");
			AtomicReference<Report> last = new AtomicReference<>();
			try (Checker checker = new Checker(plan, brokers, topic, expected, start)) {
				await().atMost(plan.timeout()).pollInterval(Duration.ofSeconds(1)).until(() -> {
					Report report = last.updateAndGet((r) -> checker.check());
					// progress tells a slow run from a stuck one
					progress("chaos seed=" + plan.seed() + " at " + report.wallTime().toSeconds() + " s: done "
							+ report.done() + "/" + report.records() + ", duplicates " + report.duplicates()
							+ ", violations " + report.violations().size());
					return report.violations().isEmpty();
				});
			}
			catch (ConditionTimeoutException ex) {
				// the last report says what is still broken
			}
			progress(last.get().toString());
			return last.get();
		}
		finally {
			restarts.shutdownNow();
			running.forEach(InstanceProcess::close);
		}
	}

	/**
	 * Notes the progress of a run in {@code target/chaos-progress.log} as it goes (the
	 * test's own output reaches its report file only in chunks): {@code tail -f} it
	 * during a long run.
	 */
	private static void progress(String line) {
		progress("chaos-progress.log", line);
	}

	/** Notes a line of a run's progress, with the time, in {@code target/<file>}. */
	static void progress(String file, String line) {
		try {
			Files.writeString(Path.of("target", file), LocalTime.now().withNano(0) + " " + line + "\n",
					StandardOpenOption.CREATE, StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
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

	/**
	 * Reads the audit, dead-letter and lock topics and lists every broken promise. Each
	 * check reads only what was written since the one before, so checking often costs the
	 * run little.
	 */
	private static final class Checker implements AutoCloseable {

		private final Plan plan;

		private final Map<String, String> expected;

		private final long start;

		private final TopicTail audits;

		private final TopicTail deadLetterTail;

		private final TopicTail lockTail;

		private final Map<String, List<String>> firstSuccessesByKey = new HashMap<>();

		private final Set<String> succeeded = new HashSet<>();

		private final Map<String, String> deadLetters = new HashMap<>();

		private final TestLockTable locks = new TestLockTable();

		private final int brokers;

		private long successes;

		Checker(Plan plan, Brokers brokers, String topic, Map<String, String> expected, long start) {
			this.plan = plan;
			this.expected = expected;
			this.start = start;
			this.brokers = brokers.size();
			this.audits = brokers.tail(AuditedApplication.auditTopic(topic));
			this.deadLetterTail = brokers.tail(Names.dlq(topic));
			this.lockTail = brokers.tail(Names.locks(topic));
		}

		Report check() {
			for (ConsumerRecord<byte[], byte[]> record : this.audits.readNew()) {
				AuditedApplication.Audit audit = AuditedApplication.Audit.parse(record);
				if (audit.ok()) {
					this.successes++;
					if (this.succeeded.add(audit.value())) {
						this.firstSuccessesByKey.computeIfAbsent(audit.key(), (k) -> new ArrayList<>())
							.add(audit.value());
					}
				}
			}
			for (ConsumerRecord<byte[], byte[]> record : this.deadLetterTail.readNew()) {
				this.deadLetters.put(new String(record.value(), StandardCharsets.UTF_8),
						ProtocolHeaders.text(record.headers(), ProtocolHeaders.DLQ_REASON));
			}
			apply(this.locks, this.lockTail.readNew());
			List<String> violations = new ArrayList<>();
			Map<String, List<String>> producedByKey = new HashMap<>();
			Set<String> unfinishedKeys = new LinkedHashSet<>();
			this.expected.forEach((value, outcome) -> {
				String key = value.substring(0, value.indexOf(':'));
				if (!this.succeeded.contains(value) && !this.deadLetters.containsKey(value)) {
					unfinishedKeys.add(key);
				}
				if (outcome.equals("p")) {
					if (!"permanent".equals(this.deadLetters.get(value))) {
						violations
							.add(value + " should be dead-lettered as permanent but is " + this.deadLetters.get(value));
					}
				}
				else {
					producedByKey.computeIfAbsent(key, (k) -> new ArrayList<>()).add(value);
					if (!this.succeeded.contains(value)) {
						violations.add(value + " never succeeded" + (this.deadLetters.containsKey(value)
								? " (dead-lettered: " + this.deadLetters.get(value) + ")" : ""));
					}
				}
			});
			producedByKey.forEach((key, values) -> {
				List<String> first = this.firstSuccessesByKey.getOrDefault(key, List.of())
					.stream()
					.filter((v) -> !this.expected.getOrDefault(v, "ok").equals("p"))
					.toList();
				List<String> done = values.stream().filter(this.succeeded::contains).toList();
				if (!first.equals(done)) {
					violations.add("key " + key + " handled out of order: " + first + " instead of " + done);
				}
			});
			if (this.locks.size() != 0) {
				violations.add(this.locks.size() + " live locks left");
			}
			StringBuilder diagnosis = new StringBuilder();
			unfinishedKeys.stream()
				.limit(3)
				.forEach((key) -> diagnosis.append(key)
					.append('=')
					.append(this.locks.locksOf(Bytes.wrap(key.getBytes(StandardCharsets.UTF_8))))
					.append(' '));
			int done = (int) this.expected.keySet()
				.stream()
				.filter((v) -> this.succeeded.contains(v) || this.deadLetters.containsKey(v))
				.count();
			return new Report(violations, this.expected.size(), this.successes - this.succeeded.size(),
					this.deadLetters.size(), Duration.ofNanos(System.nanoTime() - this.start), this.plan.seed(),
					this.brokers, this.plan.brokerKills(), done, diagnosis.toString().trim());
		}

		@Override
		public void close() {
			this.audits.close();
			this.deadLetterTail.close();
			this.lockTail.close();
		}

	}

	/** Live locks after replaying the whole lock topic of the shared broker. */
	static int liveLocks(String topic) {
		return liveLocks(SHARED_BROKER, topic);
	}

	/** Live locks after replaying the whole lock topic. */
	static int liveLocks(Brokers brokers, String topic) {
		return lockTable(brokers, topic).size();
	}

	/** The lock table after replaying the whole lock topic. */
	private static TestLockTable lockTable(Brokers brokers, String topic) {
		TestLockTable table = new TestLockTable();
		apply(table, brokers.readAll(Names.locks(topic)));
		return table;
	}

	/** Applies records of a lock topic to a lock table, in their order. */
	static void apply(TestLockTable table, List<ConsumerRecord<byte[], byte[]>> lockRecords) {
		for (ConsumerRecord<byte[], byte[]> record : lockRecords) {
			String id = LockCodec.decodeId(record.key());
			table.apply(record.partition(), record.offset(), id,
					(record.value() != null) ? LockCodec.decode(id, record.headers(), record.value()) : null);
		}
	}

}
