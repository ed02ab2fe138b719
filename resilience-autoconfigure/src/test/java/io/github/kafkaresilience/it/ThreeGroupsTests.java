package io.github.kafkaresilience.it;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.internal.dlq.TopicDlqReplayer;
import io.github.kafkaresilience.dlq.ReplayReport;
import io.github.kafkaresilience.dlq.ReplayRequest;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.support.ConsumerClients;
import io.github.kafkaresilience.internal.support.ProducerClients;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Three consumer groups read one topic of 4 partitions, each in JVMs of its own and so
 * with a ladder of its own (docs/PROTOCOL.md, "Topics"): A (2 instances, on the
 * {@code consumer} group protocol) and C fail records on seeded plans of their own, B
 * never fails (both on the classic one). One of A's instances is killed (SIGKILL) while A
 * has keys in its ladder, and restarted with its instance id. Each group is checked on
 * its own, every ladder topic is checked to hold its group's records only, then A's dead
 * letters are replayed: they reach A alone, through its ladder, never the main topic.
 * <p>
 * The run happens once, before the tests, which then read what it left (in order: the
 * replay comes last). {@code -Dthree-groups.seed=} replays the plan of a run; every run
 * prints one {@code three-groups:} line per group with its figures.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@UsesSharedBroker
class ThreeGroupsTests {

	private static final long SEED = Long.getLong("three-groups.seed", System.nanoTime());

	private static final GroupsRun.Group A = new GroupsRun.Group("A", 2, 0.08, 0.01, 0.02, "consumer");

	private static final GroupsRun.Group B = new GroupsRun.Group("B", 1, 0, 0, 0, "classic");

	private static final GroupsRun.Group C = new GroupsRun.Group("C", 1, 0.05, 0.01, 0.03, "classic");

	private static final int RECORDS = 1000;

	/** How long the groups may take to settle once every record is produced. */
	private static final Duration SETTLE = Duration.ofSeconds(120);

	private static final Duration WAIT = Duration.ofSeconds(90);

	private GroupsRun run;

	private Map<String, GroupsRun.Report> reports;

	private int liveLocksAtKill;

	private String killed;

	private ReplayReport replay;

	/** From the start of the replay until A handled every replayed record. */
	private Duration replayHandledAfter;

	@BeforeAll
	void runThreeGroupsOnOneTopicKillingOneOfAsInstancesMidLadder() throws InterruptedException {
		this.run = GroupsRun.start(new GroupsRun.Plan(SEED, RECORDS, 40, 4, List.of(A, B, C)));
		Random random = new Random(SEED);
		int killAfter = 6 + random.nextInt(GroupsRun.BATCHES - 12);
		this.run.produce(0, killAfter);
		// creating the situation: the kill comes while A has keys in its ladder, and hits
		// the
		// instance that failed a record last, which most likely holds one of them
		await().atMost(WAIT).until(() -> this.run.checker("A").liveLocks() > 0);
		this.killed = this.run.killLastToFail("A");
		this.liveLocksAtKill = this.run.checker("A").liveLocks();
		Thread.sleep(500 + random.nextInt(1500)); // creating the situation: the instance
													// stays down a while
		this.run.restart(this.killed);
		this.run.produce(killAfter, GroupsRun.BATCHES);
		this.reports = this.run.awaitSettled(SETTLE);
	}

	@AfterAll
	void printFiguresAndStop() {
		if (this.run == null) {
			return;
		}
		try {
			for (GroupsRun.Group group : List.of(A, B, C)) {
				GroupsRun.Report report = (this.reports != null) ? this.reports.get(group.label()) : null;
				if (report == null) {
					continue;
				}
				int replayed = this.run.checker(group.label()).check().replaysHandled();
				String line = "three-groups: group=" + group.label() + " (" + report.group() + ") instances="
						+ group.instances()
						+ (group.label().equals("A")
								? " killed=" + this.killed + " with " + this.liveLocksAtKill + " live locks" : "")
						+ " records=" + report.records() + " duplicates=" + report.duplicates() + " dlq="
						+ report.deadLetterCount() + " " + report.deadLetters() + " (" + report.distinctDeadLetters()
						+ " distinct records) ladder-attempts=" + report.ladderAttempts() + " wall="
						+ ((report.settledAfter() != null) ? report.settledAfter().toMillis() + " ms" : "unsettled")
						+ " replayed-handled=" + replayed
						+ ((group.label().equals("A") && this.replayHandledAfter != null)
								? " replay-wall=" + this.replayHandledAfter.toMillis() + " ms" : "")
						+ " violations=" + report.violations().size();
				System.out.println(line);
				this.run.progress(line);
			}
			String total = "three-groups: seed=" + SEED + " topic=" + this.run.topic() + " total wall="
					+ this.run.elapsed().toMillis() + " ms"
					+ ((this.replay != null) ? " replay published=" + this.replay.published() + " in "
							+ this.replay.took().toMillis() + " ms" : "")
					+ " (replay the plan: -Dthree-groups.seed=" + SEED + ")";
			System.out.println(total);
			this.run.progress(total);
		}
		finally {
			this.run.close();
		}
	}

	@Test
	@Order(1)
	void groupsThatFailHandleOrDeadLetterEveryRecordForItsReasonInOrderPerKeyAndLeaveNoLiveLock() {
		for (String label : List.of("A", "C")) {
			GroupsRun.Report report = this.reports.get(label);
			assertThat(report.violations()).as(report + " logs: " + this.run.logs(label)).isEmpty();
			assertThat(report.deadLetterCount()).as("group %s dead-lettered its permanent failures", label)
				.isPositive();
			assertThat(report.deadLetters()).as("group %s", label).containsOnlyKeys("permanent", "exhausted");
		}
		assertThat(this.liveLocksAtKill).as("A had keys in its ladder when " + this.killed + " was killed")
			.isPositive();
	}

	@Test
	@Order(2)
	void theGroupThatNeverFailsHandlesEveryRecordFromTheMainTopicAloneInOrderAndLeavesItsLadderEmpty() {
		GroupsRun.Report report = this.reports.get("B");
		assertThat(report.violations()).as(report + " logs: " + this.run.logs("B")).isEmpty();
		assertThat(report.ladderAttempts()).isZero();
		GroupsRun.LadderContents ladder = this.run.ladderContents("B");
		assertThat(ladder.records()).as("B's ladder topics")
			.allSatisfy((topic, records) -> assertThat(records).isZero());
	}

	@Test
	@Order(3)
	void noLadderTopicOfAnyGroupHoldsARecordOwnedByAnotherGroup() {
		Map<String, GroupsRun.LadderContents> ladders = new LinkedHashMap<>();
		for (String label : List.of("A", "B", "C")) {
			ladders.put(label, this.run.ladderContents(label));
		}
		ladders.forEach(
				(label, ladder) -> assertThat(ladder.foreign()).as("records on %s's ladder %s", label, ladder.records())
					.isEmpty());
		// the check read something: A and C wrote to every topic of their ladders
		for (String label : List.of("A", "C")) {
			assertThat(ladders.get(label).records()).as(label)
				.allSatisfy((topic, records) -> assertThat(records).isPositive());
		}
	}

	@Test
	@Order(4)
	void aReplayOfAsDeadLettersIsHandledAgainByAAloneInTheOrderOfItsDeadLetterTopicAndNeverReachesTheMainTopic() {
		GroupsRun.Checker a = this.run.checker("A");
		int deadLetters = a.check().deadLetterCount();
		long bLines = this.run.checker("B").check().auditLines();
		long cLines = this.run.checker("C").check().auditLines();
		int mainRecords = SharedBroker.readAll(this.run.topic()).size();
		LadderPlan ladderA = this.run.ladder("A");
		List<String> asked = new ArrayList<>();
		DlqReplayer replayer = new TopicDlqReplayer(
				ConsumerClients.of(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers())),
				ProducerClients.of(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers())),
				1000, Clock.systemUTC(), (group, mainTopic) -> {
					asked.add(group + " on " + mainTopic);
					return LadderPlan.of(ladderA.group(), mainTopic, GroupsRun.DELAYS, GroupsRun.MAX_ATTEMPTS,
							LadderPlan.DEFAULT_RETRY_TEMPLATE, LadderPlan.DEFAULT_DLQ_TEMPLATE,
							LadderPlan.DEFAULT_LOCK_TEMPLATE);
				});

		long replayStart = System.nanoTime();
		this.replay = replayer
			.replay(ReplayRequest.of(ladderA.dlqTopic(), this.run.topic()).withGroup(ladderA.group()));

		assertThat(asked).containsExactly(ladderA.group() + " on " + this.run.topic());
		assertThat(this.replay.published()).isEqualTo(deadLetters);
		assertThat(this.replay.foreign()).isZero();
		assertThat(this.replay.target()).isEqualTo(ladderA.stage(1).topic());
		await().atMost(WAIT).untilAsserted(() -> assertThat(a.replayViolations()).isEmpty());
		this.replayHandledAfter = Duration.ofNanos(System.nanoTime() - replayStart);
		await().atMost(WAIT).untilAsserted(() -> {
			GroupsRun.Report report = a.check();
			assertThat(report.liveLocks()).isZero();
			assertThat(report.violations()).isEmpty();
			assertThat(report.deadLetterCount()).as("a replayed record succeeds: no new dead letter")
				.isEqualTo(deadLetters);
		});
		// B and C read only the main topic and their own ladders: nothing new reaches
		// them
		await().during(Duration.ofSeconds(3))
			.atMost(Duration.ofSeconds(10))
			.until(() -> this.run.checker("B").check().auditLines() == bLines
					&& this.run.checker("C").check().auditLines() == cLines);
		assertThat(SharedBroker.readAll(this.run.topic())).as("the replay never wrote to the main topic")
			.hasSize(mainRecords);
	}

}
