package io.github.kafkaresilience.internal.ladder;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.Position;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.DlqReason;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.ladder.HandlerResult;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.apache.kafka.common.utils.Bytes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The invariants the rules keep over every stage, count, position and time: a lock's
 * stage never decreases, an attempt is counted once and only by a run, a record leaves
 * for the dead-letter topic exactly when it must, and a record that is not its key's due
 * head never runs.
 */
class RoutingRulesPropertyTests {

	private static final Instant NOW = RoutingRulesTests.NOW;

	private static final Bytes KEY = RoutingRulesTests.KEY;

	@Property(tries = 1000)
	void aFailedRecordMovesOnwardOrIsDeadLetteredExactlyWhenItMust(@ForAll @IntRange(min = 1, max = 4) int stages,
			@ForAll @IntRange(min = 1, max = 8) int maxAttempts, @ForAll @IntRange(min = 0, max = 4) int stageSeed,
			@ForAll @IntRange(min = 0, max = 10) int countSeed, @ForAll boolean permanent, @ForAll boolean withKey) {
		LadderPlan plan = plan(stages, maxAttempts);
		int stage = stageSeed % (stages + 1);
		int retryCount = (stage == 0) ? 0 : countSeed;
		Lock lock = (stage > 0 && withKey) ? new Lock("L1", KEY, 0, 3, stage, 4L, null, retryCount, null, NOW) : null;
		Delivery record = new Delivery(plan.topicOf(stage), 0, 4, 0, withKey ? KEY.get() : null, new byte[0],
				RoutingRulesTests.headers());
		HandlerResult failed = HandlerResult
			.failed(permanent ? new PermanentFailureException("no") : new IllegalStateException("again"));

		Decision decision = rules(plan).afterRun(record, new Decision.Run(stage, retryCount, lock), failed);

		int attempts = retryCount + 1;
		int next = Math.min(stage + 1, stages);
		if (permanent || attempts >= maxAttempts) {
			assertThat(decision).isInstanceOfSatisfying(Decision.DeadLetter.class, (dead) -> {
				assertThat(dead.reason()).isEqualTo(permanent ? DlqReason.PERMANENT : DlqReason.EXHAUSTED);
				assertThat(dead.hop().retryCount()).isEqualTo(attempts);
				assertThat(dead.release()).isEqualTo(lock);
			});
		}
		else if (lock != null) {
			assertThat(decision).isInstanceOfSatisfying(Decision.Move.class, (move) -> {
				assertThat(move.moving().stage()).isEqualTo(next).isGreaterThanOrEqualTo(lock.stage());
				assertThat(move.moving().from()).isEqualTo(new Position(stage, 4));
				assertThat(move.moving().retryCount()).isEqualTo(attempts);
			});
		}
		else if (withKey) {
			assertThat(decision).isInstanceOfSatisfying(Decision.MoveNew.class, (move) -> {
				assertThat(move.moving().stage()).isEqualTo(1);
				assertThat(move.moving().retryCount()).isEqualTo(1);
			});
		}
		else {
			assertThat(decision).isInstanceOfSatisfying(Decision.Publish.class, (publish) -> {
				assertThat(publish.toStage()).isEqualTo(next).isGreaterThanOrEqualTo(stage);
				assertThat(publish.hop().retryCount()).isEqualTo(attempts);
			});
		}
	}

	@Property(tries = 1000)
	void aRecordIsForwardedOnlyBehindAPredecessorFurtherAlongAndNeverBackwards(
			@ForAll @IntRange(min = 1, max = 3) int stage, @ForAll @LongRange(min = 0, max = 6) long offset,
			@ForAll @IntRange(min = 1, max = 3) int predecessorStage,
			@ForAll @LongRange(min = 0, max = 6) long predecessorAt, @ForAll boolean predecessorMoving,
			@ForAll @IntRange(min = 0, max = 5) int retryCount) {
		RoutingRulesTests.Table table = new RoutingRulesTests.Table();
		Lock predecessor = predecessorMoving
				? Lock.moving("L0", KEY, 0, 2, predecessorStage, new Position(1, predecessorAt), 1, null, NOW)
				: new Lock("L0", KEY, 0, 2, predecessorStage, predecessorAt, null, 1, null, NOW);
		Lock lock = new Lock("L1", KEY, 0, 3, stage, offset, null, retryCount, null, NOW);
		table.put(predecessor);
		table.put(lock);
		LadderPlan plan = plan(3, 10);

		Decision decision = rules(plan, table).fromStage(carrying(plan.topicOf(stage), offset, retryCount), stage,
				true);

		Position here = new Position(stage, offset);
		if (!predecessorMoving && new Position(predecessorStage, predecessorAt).isAfter(here)) {
			assertThat(decision).isInstanceOfSatisfying(Decision.Move.class, (move) -> {
				assertThat(move.moving().stage()).isEqualTo(predecessorStage).isGreaterThanOrEqualTo(stage);
				assertThat(move.moving().from()).isEqualTo(here);
				assertThat(move.moving().retryCount()).as("a forward is not an attempt").isEqualTo(retryCount);
				assertThat(move.moving().failure()).isNull();
			});
		}
		else {
			assertThat(decision).isEqualTo(Decision.WAIT_FOR_KEY);
		}
	}

	@Property(tries = 1000)
	void aHeadRunsOnceItsStageDelayHasPassedAndAFollowerAtOnce(@ForAll @IntRange(min = 1, max = 3) int stage,
			@ForAll @IntRange(min = 0, max = 3) int retryCount,
			@ForAll @LongRange(min = -400_000, max = 400_000) long age) {
		RoutingRulesTests.Table table = new RoutingRulesTests.Table();
		Lock lock = new Lock("L1", KEY, 0, 3, stage, 4L, null, retryCount, null, NOW);
		table.put(lock);
		LadderPlan plan = plan(3, 10);
		long written = NOW.toEpochMilli() - age;
		Delivery record = new Delivery(plan.topicOf(stage), 0, 4, written, KEY.get(), new byte[0],
				RoutingRulesTests.headers("retry.count", Integer.toString(retryCount), "lock.id", "L1"));
		RoutingRules rules = rules(plan, table);

		Decision decision = rules.fromStage(record, stage, true);

		long due = written + plan.stage(stage).delay().toMillis();
		if (retryCount == 0 || NOW.toEpochMilli() >= due) {
			assertThat(decision).isEqualTo(new Decision.Run(stage, retryCount, lock));
		}
		else {
			assertThat(decision).isEqualTo(new Decision.Settled(Step.waitUntil(due)));
		}
		assertThat(rules.earliestRun(record)).isEqualTo((retryCount == 0) ? 0 : due);
	}

	@Property(tries = 1000)
	void aRecordThatDoesNotCarryItsLockNeverRuns(@ForAll @IntRange(min = 1, max = 3) int stage,
			@ForAll @LongRange(min = 0, max = 6) long offset, @ForAll @IntRange(min = 1, max = 3) int lockStage,
			@ForAll @LongRange(min = 0, max = 6) long lockAt, @ForAll boolean tailerSynced) {
		RoutingRulesTests.Table table = new RoutingRulesTests.Table();
		table.put(new Lock("L1", KEY, 0, 3, lockStage, lockAt, null, 1, null, NOW));
		LadderPlan plan = plan(3, 10);

		Decision decision = rules(plan, table).fromStage(carrying(plan.topicOf(stage), offset, 1), stage, tailerSynced);

		if (lockStage == stage && lockAt == offset) {
			assertThat(decision).isEqualTo(new Decision.Run(stage, 1, table.find("L1")));
		}
		else {
			assertThat(decision).isEqualTo(tailerSynced ? Decision.DONE : Decision.WAIT_FOR_TAILER);
		}
	}

	private static Delivery carrying(String topic, long offset, int retryCount) {
		return new Delivery(topic, 0, offset, NOW.toEpochMilli() - Duration.ofDays(1).toMillis(),
				"k".getBytes(StandardCharsets.UTF_8), new byte[0],
				RoutingRulesTests.headers("retry.count", Integer.toString(retryCount), "lock.id", "L1"));
	}

	private static LadderPlan plan(int stages, int maxAttempts) {
		List<Duration> delays = new ArrayList<>();
		for (int i = 1; i <= stages; i++) {
			delays.add(Duration.ofSeconds(30L * i));
		}
		return LadderPlan.of("billing", "orders", delays, maxAttempts, LadderPlan.DEFAULT_RETRY_TEMPLATE,
				LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE);
	}

	private static RoutingRules rules(LadderPlan plan) {
		return rules(plan, new RoutingRulesTests.Table());
	}

	private static RoutingRules rules(LadderPlan plan, RoutingRulesTests.Table table) {
		return new RoutingRules(plan, table, new FailureClassifier(List.of()), Clock.fixed(NOW, ZoneOffset.UTC),
				() -> "new-1");
	}

}
