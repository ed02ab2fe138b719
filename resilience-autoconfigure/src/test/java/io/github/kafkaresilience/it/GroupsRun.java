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
import java.util.stream.Collectors;

import io.github.kafkaresilience.ladder.DlqReason;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.internal.lock.TestLockTable;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.awaitility.core.ConditionTimeoutException;

import static org.awaitility.Awaitility.await;

/**
 * A seeded run of several consumer groups reading one main topic, each in application
 * instances of its own (JVMs of their own) and so with a ladder of its own. A record
 * carries a rule per group ({@code key:seq:A=t2,C=p}, see {@link AuditedApplication}), so
 * that one group retries or dead-letters what another handles at once; each group audits
 * to a topic of its own, and a {@link Checker} per group reads that group's audit,
 * dead-letter and lock topics and lists the promises broken to it, independently of the
 * other groups.
 * <p>
 * {@link ChaosRun} is the run of one group; this one adds what only several groups can
 * break: a record of one group on another's ladder, a replay reaching a group it is not
 * for.
 */
final class GroupsRun implements AutoCloseable {

	/** The retry delays of every group. */
	static final List<Duration> DELAYS = List.of(Duration.ofSeconds(1), Duration.ofSeconds(2));

	static final int MAX_ATTEMPTS = 4;

	/**
	 * Production is paced in batches, so that records keep arriving while instances die
	 * and return.
	 */
	static final int BATCHES = 20;

	private static final String PROGRESS = "three-groups-progress.log";

	/**
	 * One group's part in a run.
	 *
	 * @param label what names the group's rules in a record's value, and its instances
	 * @param instances instances running at once
	 * @param transientRate share of records the group fails transiently 1 to 3 times,
	 * then handles
	 * @param exhaustedRate share of records the group fails transiently on every attempt
	 * that {@link #MAX_ATTEMPTS} allows: dead-lettered as {@code exhausted}
	 * @param permanentRate share of records the group fails permanently
	 * @param protocol the group protocol its instances use: {@code classic} or
	 * {@code consumer}
	 */
	record Group(String label, int instances, double transientRate, double exhaustedRate, double permanentRate,
			String protocol) {

		/** Whether the group fails any record. */
		boolean fails() {
			return this.transientRate > 0 || this.exhaustedRate > 0 || this.permanentRate > 0;
		}

	}

	/**
	 * @param seed the seed of every rule and key
	 * @param records records to produce
	 * @param keys distinct keys
	 * @param partitions partitions of the main topic
	 * @param groups the groups reading it
	 */
	record Plan(long seed, int records, int keys, int partitions, List<Group> groups) {

		Plan {
			groups = List.copyOf(groups);
		}

	}

	/** What a group must make of a record. */
	enum Outcome {

		HANDLED(null), PERMANENT(DlqReason.PERMANENT), EXHAUSTED(DlqReason.EXHAUSTED);

		/** The {@code dlq.reason} of its dead letter. */
		final String reason;

		Outcome(DlqReason reason) {
			this.reason = (reason != null) ? reason.value() : null;
		}

	}

	/**
	 * What the checker of one group found.
	 *
	 * @param settledAfter how long after the start of the run the group was first found
	 * to keep every promise, or {@code null} if it never was
	 * @param done records handled or dead-lettered
	 * @param duplicates successful attempts of records (not replays) that had succeeded
	 * before
	 * @param deadLetters records of the group's dead-letter topic, by {@code dlq.reason}
	 * @param distinctDeadLetters records dead-lettered: fewer than the dead letters when
	 * an instance killed after writing one left its record to be dead-lettered again
	 * @param ladderAttempts attempts of records read from a retry topic (replays
	 * included)
	 * @param liveLocks locks of the group's lock topic not yet released
	 * @param auditLines every line of the group's audit topic
	 * @param replaysHandled distinct replayed records handled successfully
	 * @param violations every promise broken to the group, empty when it kept them all
	 */
	record Report(String label, String group, int records, int done, long duplicates, Map<String, Integer> deadLetters,
			int distinctDeadLetters, long ladderAttempts, int liveLocks, long auditLines, int replaysHandled,
			List<String> violations, Duration settledAfter) {

		int deadLetterCount() {
			return this.deadLetters.values().stream().mapToInt(Integer::intValue).sum();
		}

		@Override
		public String toString() {
			return "group " + this.label + " (" + this.group + "): records=" + this.records + " done=" + this.done
					+ " duplicates=" + this.duplicates + " dlq=" + deadLetterCount() + " " + this.deadLetters + " ("
					+ this.distinctDeadLetters + " distinct)" + " ladder-attempts=" + this.ladderAttempts
					+ " live-locks=" + this.liveLocks + " violations=" + this.violations.size()
					+ (this.violations.isEmpty() ? ""
							: " first: " + this.violations.subList(0, Math.min(10, this.violations.size())));
		}

	}

	/**
	 * What the ladder topics of a group hold.
	 *
	 * @param records records per topic, tombstones included
	 * @param foreign every record not owned by the group, as
	 * {@code topic-partition@offset owner}
	 */
	record LadderContents(Map<String, Integer> records, List<String> foreign) {

		int total() {
			return this.records.values().stream().mapToInt(Integer::intValue).sum();
		}

	}

	private final Plan plan;

	private final String topic;

	private final long start = System.nanoTime();

	private final Map<String, Group> groups = new LinkedHashMap<>();

	private final Map<String, List<InstanceProcess>> instances = new HashMap<>();

	private final Map<String, Checker> checkers = new LinkedHashMap<>();

	private final Map<String, Report> lastReports = new HashMap<>();

	private final List<String[]> records = new ArrayList<>();

	private GroupsRun(Plan plan) {
		this.plan = plan;
		this.topic = "t" + UUID.randomUUID().toString().substring(0, 8);
		plan.groups().forEach((group) -> this.groups.put(group.label(), group));
	}

	/**
	 * Draws the records of a plan, creates the main topic and each group's audit topic,
	 * and starts the instances of every group; nothing is produced yet.
	 */
	static GroupsRun start(Plan plan) {
		GroupsRun run = new GroupsRun(plan);
		Map<String, Map<String, Outcome>> expected = run.draw();
		SharedBroker.createTopic(run.topic, plan.partitions(), Map.of());
		for (Group group : plan.groups()) {
			SharedBroker.createTopic(run.auditTopic(group.label()), 1, Map.of());
			List<InstanceProcess> started = new ArrayList<>();
			for (int i = 0; i < group.instances(); i++) {
				started.add(run.startInstance(group.label(), group.label() + "-" + i));
			}
			run.instances.put(group.label(), started);
			run.checkers.put(group.label(), run.new Checker(group, expected.get(group.label())));
		}
		run.progress("seed=" + plan.seed() + " topic=" + run.topic + " groups=" + run.groups.keySet() + " records="
				+ plan.records() + " keys=" + plan.keys());
		return run;
	}

	/**
	 * Draws every record: its key, and each group's rule; returns each group's expected
	 * outcomes.
	 */
	private Map<String, Map<String, Outcome>> draw() {
		Random random = new Random(this.plan.seed());
		Map<String, Map<String, Outcome>> expected = new HashMap<>();
		this.groups.keySet().forEach((label) -> expected.put(label, new LinkedHashMap<>()));
		int[] sequence = new int[this.plan.keys()];
		for (int i = 0; i < this.plan.records(); i++) {
			int key = random.nextInt(this.plan.keys());
			Map<String, String> rules = new LinkedHashMap<>();
			Map<String, Outcome> outcomes = new HashMap<>();
			for (Group group : this.groups.values()) {
				// drawn for every group, so that one group's rates do not move another's
				// rules
				double roll = random.nextDouble();
				int transientFailures = 1 + random.nextInt(3);
				Outcome outcome = Outcome.HANDLED;
				if (roll < group.permanentRate()) {
					rules.put(group.label(), "p");
					outcome = Outcome.PERMANENT;
				}
				else if (roll < group.permanentRate() + group.exhaustedRate()) {
					// fails while retry.count < max-attempts: on every attempt it gets
					rules.put(group.label(), "t" + MAX_ATTEMPTS);
					outcome = Outcome.EXHAUSTED;
				}
				else if (roll < group.permanentRate() + group.exhaustedRate() + group.transientRate()) {
					rules.put(group.label(), "t" + transientFailures);
				}
				outcomes.put(group.label(), outcome);
			}
			String rule = rules.isEmpty() ? "ok"
					: rules.entrySet()
						.stream()
						.map((e) -> e.getKey() + "=" + e.getValue())
						.collect(Collectors.joining(","));
			String value = "key" + key + ":" + (sequence[key]++) + ":" + rule;
			outcomes.forEach((label, outcome) -> expected.get(label).put(value, outcome));
			this.records.add(new String[] { "key" + key, value });
		}
		return expected;
	}

	String topic() {
		return this.topic;
	}

	/** The consumer group of a label: it names the group's ladder topics. */
	String group(String label) {
		return label.toLowerCase() + "-" + this.topic;
	}

	String auditTopic(String label) {
		return this.topic + ".audit." + label;
	}

	/**
	 * The ladder of a group, named as the library names it with the default templates.
	 */
	LadderPlan ladder(String label) {
		return LadderPlan.of(group(label), this.topic, DELAYS, MAX_ATTEMPTS, LadderPlan.DEFAULT_RETRY_TEMPLATE,
				LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE);
	}

	Checker checker(String label) {
		return this.checkers.get(label);
	}

	/**
	 * Produces batches {@code from} (inclusive) to {@code to} (exclusive) of
	 * {@link #BATCHES}.
	 */
	void produce(int from, int to) throws InterruptedException {
		int batchSize = (this.records.size() + BATCHES - 1) / BATCHES;
		for (int b = from; b < to; b++) {
			SharedBroker.sendAll(this.topic, this.records.subList(Math.min(this.records.size(), b * batchSize),
					Math.min(this.records.size(), (b + 1) * batchSize)));
			Thread.sleep(200); // paces production: records keep arriving while instances
								// die and return
		}
		progress("batches " + from + " to " + (to - 1) + " produced after " + elapsed().toSeconds() + " s");
	}

	/**
	 * Kills (SIGKILL) the instance of a group that made the group's last failed attempt:
	 * the one most likely to hold a key of its own mid-ladder.
	 * @return the id of the instance killed
	 */
	String killLastToFail(String label) {
		String victim = this.checkers.get(label).lastFailedBy();
		if (victim == null) {
			throw new IllegalStateException("Group " + label + " has failed no record yet");
		}
		List<InstanceProcess> running = this.instances.get(label);
		int index = Integer.parseInt(victim.substring(victim.lastIndexOf('-') + 1));
		running.get(index).kill();
		progress("instance " + victim + " killed after " + elapsed().toSeconds() + " s");
		return victim;
	}

	/**
	 * Starts an instance again with the id it had: it takes over its transactional id and
	 * its place.
	 */
	void restart(String instanceId) {
		String label = instanceId.substring(0, instanceId.lastIndexOf('-'));
		int index = Integer.parseInt(instanceId.substring(instanceId.lastIndexOf('-') + 1));
		this.instances.get(label).set(index, startInstance(label, instanceId));
		progress("instance " + instanceId + " restarted after " + elapsed().toSeconds() + " s");
	}

	private InstanceProcess startInstance(String label, String instanceId) {
		return InstanceProcess.start(SharedBroker.bootstrapServers(), this.topic, group(label), instanceId,
				List.of("kafka.resilience.retry.delays="
						+ DELAYS.stream().map((d) -> d.toSeconds() + "s").collect(Collectors.joining(",")),
						"kafka.resilience.retry.max-attempts=" + MAX_ATTEMPTS, "test.label=" + label,
						"test.audit-topic=" + auditTopic(label),
						"spring.kafka.consumer.properties.group.protocol=" + this.groups.get(label).protocol()));
	}

	/**
	 * Checks every group until each keeps every promise, at most {@code timeout}; the
	 * last report of each, clean or not.
	 */
	Map<String, Report> awaitSettled(Duration timeout) {
		try {
			await().atMost(timeout).pollInterval(Duration.ofSeconds(1)).until(() -> {
				boolean clean = true;
				StringBuilder line = new StringBuilder("at " + elapsed().toSeconds() + " s:");
				for (String label : this.checkers.keySet()) {
					Report report = this.checkers.get(label).check();
					this.lastReports.put(label, report);
					line.append(' ')
						.append(label)
						.append(" done ")
						.append(report.done())
						.append('/')
						.append(report.records())
						.append(" violations ")
						.append(report.violations().size())
						.append(';');
					clean &= report.violations().isEmpty();
				}
				progress(line.toString()); // tells a slow run from a stuck one
				return clean;
			});
		}
		catch (ConditionTimeoutException ex) {
			// the last reports say what is still broken
		}
		this.lastReports.values().forEach((report) -> progress(report.toString()));
		return Map.copyOf(this.lastReports);
	}

	/**
	 * Reads every stage, dead-letter and lock topic of a group's ladder to its end, every
	 * record written included (read uncommitted), and lists those whose
	 * {@code owner.group} is not the group, tombstones included.
	 */
	LadderContents ladderContents(String label) {
		String group = group(label);
		Map<String, Integer> counts = new LinkedHashMap<>();
		List<String> foreign = new ArrayList<>();
		for (String ladderTopic : ladder(label).ownTopics()) {
			List<ConsumerRecord<byte[], byte[]>> all = TopicTail.readAll(SharedBroker.bootstrapServers(), ladderTopic,
					false);
			counts.put(ladderTopic, all.size());
			for (ConsumerRecord<byte[], byte[]> record : all) {
				String owner = Ownership.ownerOf(record.headers());
				if (!group.equals(owner)) {
					foreign.add(ladderTopic + "-" + record.partition() + "@" + record.offset() + " owned by " + owner
							+ ((record.value() == null) ? " (tombstone)" : ""));
				}
			}
		}
		return new LadderContents(counts, foreign);
	}

	/** Log files of a group's instances, to read when a group broke a promise. */
	List<String> logs(String label) {
		return this.instances.get(label).stream().map((instance) -> instance.log().toString()).toList();
	}

	Duration elapsed() {
		return Duration.ofNanos(System.nanoTime() - this.start);
	}

	/**
	 * Notes a line in {@code target/three-groups-progress.log}: {@code tail -f} it during
	 * a run.
	 */
	void progress(String line) {
		ChaosRun.progress(PROGRESS, "three-groups seed=" + this.plan.seed() + " " + line);
	}

	@Override
	public void close() {
		this.instances.values().forEach((running) -> running.forEach(InstanceProcess::close));
		this.checkers.values().forEach(Checker::close);
	}

	/**
	 * Reads one group's audit, dead-letter and lock topics and lists every promise broken
	 * to that group: each record handled, or dead-lettered for the reason its rule gives;
	 * first successes in order per key; no live lock; and for a group that never fails,
	 * no attempt but from the main topic and no dead letter. Each check reads only what
	 * was written since the one before.
	 */
	final class Checker implements AutoCloseable {

		private final Group group;

		private final LadderPlan ladder;

		private final Map<String, Outcome> expected;

		private final TopicTail audits;

		private final TopicTail deadLetterTail;

		private final TopicTail lockTail;

		private final Map<String, List<String>> firstSuccessesByKey = new HashMap<>();

		private final Set<String> succeeded = new HashSet<>();

		/**
		 * Replayed records handled successfully, per key in the order of their first
		 * success.
		 */
		private final Map<String, List<String>> replaySuccessesByKey = new HashMap<>();

		private final Set<String> replaySucceeded = new HashSet<>();

		private final Map<String, String> deadLetters = new HashMap<>();

		/**
		 * Dead letters per key in the order of the dead-letter topic (a key lives in one
		 * partition).
		 */
		private final Map<String, List<String>> deadLettersByKey = new LinkedHashMap<>();

		private final Map<String, Integer> deadLettersByReason = new LinkedHashMap<>();

		private final TestLockTable locks = new TestLockTable();

		/**
		 * Attempts that broke a promise of their own: from a topic the group should not
		 * read.
		 */
		private final List<String> strayAttempts = new ArrayList<>();

		private long successes;

		private long ladderAttempts;

		private long auditLines;

		private String lastFailedBy;

		private Duration settledAfter;

		Checker(Group group, Map<String, Outcome> expected) {
			this.group = group;
			this.expected = expected;
			this.ladder = ladder(group.label());
			String bootstrap = SharedBroker.bootstrapServers();
			this.audits = new TopicTail(bootstrap, auditTopic(group.label()), true);
			this.deadLetterTail = new TopicTail(bootstrap, this.ladder.dlqTopic(), true);
			this.lockTail = new TopicTail(bootstrap, this.ladder.lockTopic(), true);
		}

		Report check() {
			String stage1 = this.ladder.stage(1).topic();
			for (ConsumerRecord<byte[], byte[]> record : this.audits.readNew()) {
				AuditedApplication.Audit audit = AuditedApplication.Audit.parse(record);
				this.auditLines++;
				if (!audit.topic().equals(topic())) {
					this.ladderAttempts++;
					if (!this.group.fails() && !audit.replayed()) {
						this.strayAttempts
							.add(audit.value() + " attempted from " + audit.topic() + " by " + audit.instance());
					}
				}
				if (audit.replayed()) {
					if (!audit.topic().equals(stage1)) {
						this.strayAttempts
							.add("replay of " + audit.value() + " read from " + audit.topic() + ", not " + stage1);
					}
					if (audit.ok() && this.replaySucceeded.add(audit.value())) {
						this.replaySuccessesByKey.computeIfAbsent(audit.key(), (k) -> new ArrayList<>())
							.add(audit.value());
					}
				}
				else if (audit.ok()) {
					this.successes++;
					if (this.succeeded.add(audit.value())) {
						this.firstSuccessesByKey.computeIfAbsent(audit.key(), (k) -> new ArrayList<>())
							.add(audit.value());
					}
				}
				else {
					this.lastFailedBy = audit.instance();
				}
			}
			for (ConsumerRecord<byte[], byte[]> record : this.deadLetterTail.readNew()) {
				String value = new String(record.value(), StandardCharsets.UTF_8);
				String reason = ProtocolHeaders.text(record.headers(), ProtocolHeaders.DLQ_REASON);
				this.deadLetters.put(value, reason);
				this.deadLettersByKey
					.computeIfAbsent(new String(record.key(), StandardCharsets.UTF_8), (k) -> new ArrayList<>())
					.add(value);
				this.deadLettersByReason.merge(String.valueOf(reason), 1, Integer::sum);
			}
			ChaosRun.apply(this.locks, this.lockTail.readNew());
			List<String> violations = new ArrayList<>(this.strayAttempts);
			Map<String, List<String>> handledByKey = new HashMap<>();
			int done = 0;
			for (Map.Entry<String, Outcome> entry : this.expected.entrySet()) {
				String value = entry.getKey();
				Outcome outcome = entry.getValue();
				if (this.succeeded.contains(value) || this.deadLetters.containsKey(value)) {
					done++;
				}
				if (outcome != Outcome.HANDLED) {
					if (!outcome.reason.equals(this.deadLetters.get(value))) {
						violations.add(value + " should be dead-lettered as " + outcome.reason + " but is "
								+ this.deadLetters.get(value));
					}
					continue;
				}
				handledByKey.computeIfAbsent(value.substring(0, value.indexOf(':')), (k) -> new ArrayList<>())
					.add(value);
				if (!this.succeeded.contains(value)) {
					violations.add(value + " never succeeded");
				}
				if (this.deadLetters.containsKey(value)) {
					violations
						.add(value + " should be handled but was dead-lettered as " + this.deadLetters.get(value));
				}
			}
			handledByKey.forEach((key, values) -> {
				// records dead-lettered on purpose never succeed but by a replay: left
				// out of the order
				List<String> first = this.firstSuccessesByKey.getOrDefault(key, List.of())
					.stream()
					.filter((value) -> this.expected.get(value) == Outcome.HANDLED)
					.toList();
				List<String> inOrder = values.stream().filter(this.succeeded::contains).toList();
				if (!first.equals(inOrder)) {
					violations.add("key " + key + " handled out of order: " + first + " instead of " + inOrder);
				}
			});
			if (this.locks.size() != 0) {
				violations.add(this.locks.size() + " live locks left");
			}
			if (violations.isEmpty() && this.settledAfter == null) {
				this.settledAfter = elapsed();
			}
			return new Report(this.group.label(), group(this.group.label()), this.expected.size(), done,
					this.successes - this.succeeded.size(), Map.copyOf(this.deadLettersByReason),
					this.deadLetters.size(), this.ladderAttempts, this.locks.size(), this.auditLines,
					this.replaySucceeded.size(), violations, this.settledAfter);
		}

		/**
		 * What a replay of every dead letter of the group has not yet done: each one
		 * handled again, per key in the order of the dead-letter topic.
		 */
		List<String> replayViolations() {
			check();
			List<String> violations = new ArrayList<>();
			this.deadLettersByKey.forEach((key, letters) -> {
				List<String> distinct = letters.stream().distinct().toList();
				List<String> replayed = this.replaySuccessesByKey.getOrDefault(key, List.of());
				if (!replayed.equals(distinct)) {
					violations.add("key " + key + " replayed " + replayed + " instead of " + distinct);
				}
			});
			this.replaySuccessesByKey.keySet()
				.stream()
				.filter((key) -> !this.deadLettersByKey.containsKey(key))
				.forEach((key) -> violations.add("key " + key + " replayed without a dead letter"));
			return violations;
		}

		/**
		 * The instance that made the last failed attempt read so far, or {@code null}.
		 */
		String lastFailedBy() {
			check();
			return this.lastFailedBy;
		}

		int liveLocks() {
			return check().liveLocks();
		}

		@Override
		public void close() {
			this.audits.close();
			this.deadLetterTail.close();
			this.lockTail.close();
		}

	}

}
