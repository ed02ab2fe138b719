package io.github.kafkaresilience.internal.ladder;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockStore;
import io.github.kafkaresilience.internal.lock.Position;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.DlqReason;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.ladder.HandlerResult;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The protocol's rules (docs/PROTOCOL.md, rules 1 and 2), branch by branch, on a lock
 * table in memory that they may read but not write.
 */
class RoutingRulesTests {

	static final LadderPlan PLAN = LadderPlan.of("billing", "orders",
			List.of(Duration.ofSeconds(30), Duration.ofMinutes(5)), null, LadderPlan.DEFAULT_RETRY_TEMPLATE,
			LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE);

	static final String STAGE_1 = "billing.orders.retry.30s";

	static final String STAGE_2 = "billing.orders.retry.5m";

	static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

	static final Bytes KEY = Bytes.wrap("k".getBytes(StandardCharsets.UTF_8));

	private final Table table = new Table();

	private final RoutingRules rules = rules(this.table, NOW);

	// --- from the main topic (docs/PROTOCOL.md, rule 1)

	@Test
	void aMainRecordOfAKeyWithoutLocksRuns() {
		assertThat(this.rules.fromMain(main(7, "k"))).isEqualTo(new Decision.Run(0, 0, null));
		assertThat(this.table.reads).containsExactly("byOrigin 7", "locksOf");
	}

	@Test
	void aMainRecordWithoutAKeyRunsWithoutLookingAtTheLocks() {
		assertThat(this.rules.fromMain(main(7, null))).isEqualTo(new Decision.Run(0, 0, null));
		assertThat(this.table.reads).isEmpty();
	}

	@Test
	void aMainRecordOfALockedKeyFollowsToStageOneWithALockOfItsOwnAndNoAttempt() {
		this.table.put(confirmed("L1", 3, 1, 0));
		Decision decision = this.rules.fromMain(main(7, "k"));
		assertThat(decision).isInstanceOfSatisfying(Decision.Follow.class, (follow) -> {
			Lock moving = follow.moving();
			assertThat(moving.id()).isEqualTo("new-1");
			assertThat(moving.key()).isEqualTo(KEY);
			assertThat(moving.originOffset()).isEqualTo(7);
			assertThat(moving.stage()).isEqualTo(1);
			assertThat(moving.from()).isEqualTo(new Position(0, 7));
			assertThat(moving.retryCount()).isZero();
			assertThat(moving.failure()).isNull();
			assertThat(moving.updated()).isEqualTo(NOW);
		});
	}

	@Test
	void aRedeliveredMainRecordWhoseFirstMoveIsUnfinishedFinishesIt() {
		Lock moving = Lock.moving("L7", KEY, 0, 7, 1, new Position(0, 7), 1, null, NOW);
		this.table.put(moving);
		assertThat(this.rules.fromMain(main(7, "k"))).isEqualTo(new Decision.CompleteMove(moving, true));
		assertThat(this.table.reads).containsExactly("byOrigin 7");
	}

	@Test
	void aRedeliveredMainRecordAlreadyInTheLadderIsDone() {
		this.table.put(confirmed("L7", 7, 2, 4));
		assertThat(this.rules.fromMain(main(7, "k"))).isEqualTo(Decision.DONE);
	}

	@Test
	void aRedeliveredMainRecordLeavesALaterMoveOfItsLockToTheRecordInTheStage() {
		this.table.put(Lock.moving("L7", KEY, 0, 7, 2, new Position(1, 4), 2, null, NOW));
		assertThat(this.rules.fromMain(main(7, "k"))).isEqualTo(Decision.DONE);
	}

	// --- from a retry stage (docs/PROTOCOL.md, rule 2): headers

	@Test
	void aStageRecordWithoutARetryCountIsDeadLetteredAsMalformed() {
		Decision decision = this.rules.fromStage(stage(STAGE_1, 4, "k", headers("lock.id", "L1")), 1, true);
		assertThat(decision).isInstanceOfSatisfying(Decision.Malformed.class, (malformed) -> {
			assertThat(malformed.problem()).contains("missing or unreadable protocol headers").contains("lock.id=L1");
			assertThat(malformed.hop()).satisfies((hop) -> {
				assertThat(hop.fromMain()).isFalse();
				assertThat(hop.retryCount()).isZero();
				assertThat(hop.lockId()).isNull();
				assertThat(hop.failure().errorClass()).isEqualTo(ProtocolHeaders.PERMANENT);
				assertThat(hop.failure().exception()).isEqualTo(IllegalStateException.class.getName());
				assertThat(hop.failure().message()).isEqualTo(malformed.problem());
			});
		});
		assertThat(this.table.reads).isEmpty();
	}

	@Test
	void aStageRecordWithAKeyButNoLockIdOrALockIdButNoKeyIsMalformed() {
		assertThat(this.rules.fromStage(stage(STAGE_1, 4, "k", headers("retry.count", "2")), 1, true))
			.isInstanceOfSatisfying(Decision.Malformed.class,
					(malformed) -> assertThat(malformed.hop().retryCount()).isEqualTo(2));
		assertThat(this.rules.fromStage(stage(STAGE_1, 4, null, headers("retry.count", "2", "lock.id", "L1")), 1, true))
			.isInstanceOf(Decision.Malformed.class);
	}

	@Test
	void aLockIdThatNamesTheLockOfAnotherKeyIsMalformed() {
		this.table
			.put(new Lock("L1", Bytes.wrap("other".getBytes(StandardCharsets.UTF_8)), 0, 3, 1, 4L, null, 1, null, NOW));
		assertThat(this.rules.fromStage(carrying(STAGE_1, 4, 1, "L1"), 1, true))
			.isInstanceOfSatisfying(Decision.Malformed.class, (malformed) -> assertThat(malformed.problem())
				.isEqualTo("a lock.id that names lock L1 of another key"));
	}

	// --- from a retry stage: records without a key

	@Test
	void aRetryWithoutAKeyWaitsForItsDueTimeThenRuns() {
		long written = NOW.toEpochMilli() - 10_000;
		Delivery record = new Delivery(STAGE_1, 0, 4, written, null, value(), headers("retry.count", "1"));
		assertThat(this.rules.fromStage(record, 1, true))
			.isEqualTo(new Decision.Settled(Step.waitUntil(written + 30_000)));
		RoutingRules later = rules(this.table, NOW.plusSeconds(20));
		assertThat(later.fromStage(record, 1, true)).isEqualTo(new Decision.Run(1, 1, null));
		assertThat(this.table.reads).isEmpty();
	}

	// --- from a retry stage: the lock the record names

	@Test
	void aRecordWhoseLockIsUnknownIsAStaleCopyOnceTheTailerHasCaughtUp() {
		Delivery record = carrying(STAGE_1, 4, 1, "L1");
		assertThat(this.rules.fromStage(record, 1, false)).isEqualTo(Decision.WAIT_FOR_TAILER);
		assertThat(this.rules.fromStage(record, 1, true)).isEqualTo(Decision.DONE);
	}

	@Test
	void aRecordThatDoesNotCarryItsLockIsAStaleCopy() {
		this.table.put(confirmed("L1", 3, 2, 9));
		Delivery copy = carrying(STAGE_1, 4, 1, "L1");
		assertThat(this.rules.fromStage(copy, 1, false)).isEqualTo(Decision.WAIT_FOR_TAILER);
		assertThat(this.rules.fromStage(copy, 1, true)).isEqualTo(Decision.DONE);
		assertThat(this.table.reads).as("a copy never looks for its predecessor").doesNotContain("predecessor L1");
	}

	@Test
	void theSourceOfAnUnfinishedMoveFinishesIt() {
		Lock moving = Lock.moving("L1", KEY, 0, 3, 2, new Position(1, 4), 2, null, NOW);
		this.table.put(moving);
		assertThat(this.rules.fromStage(carrying(STAGE_1, 4, 1, "L1"), 1, false))
			.isEqualTo(new Decision.CompleteMove(moving, false));
	}

	@Test
	void aCopyInTheTargetStageOfAnUnfinishedMoveWaitsForItAndAnyOtherIsStale() {
		this.table.put(Lock.moving("L1", KEY, 0, 3, 2, new Position(1, 4), 2, null, NOW));
		assertThat(this.rules.fromStage(carrying(STAGE_2, 8, 2, "L1"), 2, true)).isEqualTo(Decision.WAIT_FOR_KEY);
		assertThat(this.rules.fromStage(carrying(STAGE_1, 9, 1, "L1"), 1, true)).isEqualTo(Decision.DONE);
		assertThat(this.rules.fromStage(carrying(STAGE_1, 9, 1, "L1"), 1, false)).isEqualTo(Decision.WAIT_FOR_TAILER);
	}

	@Test
	void aMoveThatReappendsToItsOwnStageWaitsOnlyForACopyAfterItsSource() {
		this.table.put(Lock.moving("L1", KEY, 0, 3, 2, new Position(2, 4), 3, null, NOW));
		assertThat(this.rules.fromStage(carrying(STAGE_2, 8, 2, "L1"), 2, true)).isEqualTo(Decision.WAIT_FOR_KEY);
		assertThat(this.rules.fromStage(carrying(STAGE_2, 2, 2, "L1"), 2, true)).isEqualTo(Decision.DONE);
	}

	@Test
	void theHeadOfAKeyRunsWhenDue() {
		Lock lock = confirmed("L1", 3, 1, 4);
		this.table.put(lock);
		long written = NOW.toEpochMilli() - 10_000;
		Delivery record = new Delivery(STAGE_1, 0, 4, written, key(), value(),
				headers("retry.count", "1", "lock.id", "L1"));
		assertThat(this.rules.fromStage(record, 1, true))
			.isEqualTo(new Decision.Settled(Step.waitUntil(written + 30_000)));
		assertThat(rules(this.table, NOW.plusSeconds(20)).fromStage(record, 1, true))
			.isEqualTo(new Decision.Run(1, 1, lock));
		assertThat(this.table.reads).containsExactly("find L1", "predecessor L1", "find L1", "predecessor L1");
	}

	@Test
	void aFollowerAtTheHeadOfItsKeyRunsAtOnce() {
		Lock lock = confirmed("L1", 3, 1, 4);
		this.table.put(lock);
		Delivery record = new Delivery(STAGE_1, 0, 4, NOW.toEpochMilli(), key(), value(),
				headers("retry.count", "0", "lock.id", "L1"));
		assertThat(this.rules.fromStage(record, 1, true)).isEqualTo(new Decision.Run(1, 0, lock));
	}

	@Test
	void aRecordWhosePredecessorIsFurtherAlongIsForwardedBehindItWithoutAnAttempt() {
		this.table.put(confirmed("L0", 2, 2, 0));
		Lock lock = new Lock("L1", KEY, 0, 3, 1, 4L, null, 1, new FailureInfo("transient", "m", "E", "t"), NOW);
		this.table.put(lock);
		assertThat(this.rules.fromStage(carrying(STAGE_1, 4, 1, "L1"), 1, true))
			.isEqualTo(new Decision.Move(lock, lock.moveTo(2, new Position(1, 4), 1, null, NOW)));
	}

	@Test
	void aRecordWhosePredecessorIsInFlightOrBehindItWaitsForItToChange() {
		this.table.put(Lock.moving("L0", KEY, 0, 2, 2, new Position(1, 1), 2, null, NOW));
		this.table.put(confirmed("L1", 3, 1, 4));
		assertThat(this.rules.fromStage(carrying(STAGE_1, 4, 1, "L1"), 1, true)).isEqualTo(Decision.WAIT_FOR_KEY);
		this.table.put(confirmed("L0", 2, 1, 2));
		assertThat(this.rules.fromStage(carrying(STAGE_1, 4, 1, "L1"), 1, true)).isEqualTo(Decision.WAIT_FOR_KEY);
	}

	// --- replayed dead letters (docs/PROTOCOL.md, rule 2.0)

	@Test
	void aReplayEntryWaitsForTheTailerThenWritesItsPendingLockNamedAfterWhereItEntered() {
		Delivery entry = stage(STAGE_1, 6, "k",
				headers("retry.count", "0", "replay.from-dlq", "billing.orders.dlq/0/1"));
		assertThat(this.rules.fromStage(entry, 1, false)).isEqualTo(Decision.WAIT_FOR_TAILER);
		assertThat(this.rules.fromStage(entry, 1, true))
			.isEqualTo(new Decision.Enter(Lock.pendingReplay(RoutingRules.replayLockId(entry), KEY, 0, 6, NOW)));
	}

	@Test
	void aReplayEntryWhosePendingLockIsWrittenWaitsForItsAdmission() {
		Delivery entry = stage(STAGE_1, 6, "k",
				headers("retry.count", "0", "replay.from-dlq", "billing.orders.dlq/0/1"));
		this.table.put(Lock.pendingReplay(RoutingRules.replayLockId(entry), KEY, 0, 6, NOW));
		assertThat(this.rules.fromStage(entry, 1, true)).isEqualTo(Decision.WAIT_FOR_KEY);
	}

	@Test
	void aReplayEntryIsNamedByWhereItEntered() {
		Delivery entry = stage(STAGE_1, 6, "k", new RecordHeaders());
		assertThat(RoutingRules.replayLockId(entry))
			.isEqualTo(RoutingRules.replayLockId(stage(STAGE_1, 6, "x", headers())))
			.isNotEqualTo(RoutingRules.replayLockId(stage(STAGE_1, 7, "k", headers())));
		assertThat(StageRouter.replayLockId(entry)).isEqualTo(RoutingRules.replayLockId(entry));
	}

	// --- after the handler ran (docs/PROTOCOL.md, rules 1.3 and 2.5)

	@Test
	void aHeadThatSucceedsReleasesItsLockAndAMainRecordIsDone() {
		Lock lock = confirmed("L1", 3, 1, 4);
		assertThat(this.rules.afterRun(carrying(STAGE_1, 4, 1, "L1"), new Decision.Run(1, 1, lock),
				HandlerResult.success()))
			.isEqualTo(new Decision.Release(lock));
		assertThat(this.rules.afterRun(main(7, "k"), new Decision.Run(0, 0, null), HandlerResult.success()))
			.isEqualTo(Decision.DONE);
	}

	@Test
	void aMainRecordThatFailsGetsALockMovingItToStageOneWithOneAttempt() {
		Decision decision = this.rules.afterRun(main(7, "k"), new Decision.Run(0, 0, null), failed("boom"));
		assertThat(decision).isInstanceOfSatisfying(Decision.MoveNew.class, (move) -> {
			Lock moving = move.moving();
			assertThat(moving.id()).isEqualTo("new-1");
			assertThat(moving.originOffset()).isEqualTo(7);
			assertThat(moving.stage()).isEqualTo(1);
			assertThat(moving.from()).isEqualTo(new Position(0, 7));
			assertThat(moving.retryCount()).isEqualTo(1);
			assertThat(moving.failure().errorClass()).isEqualTo(ProtocolHeaders.TRANSIENT);
			assertThat(moving.failure().message()).isEqualTo("boom");
		});
	}

	@Test
	void aMainRecordWithoutAKeyThatFailsMovesToStageOneWithoutALock() {
		Decision decision = this.rules.afterRun(main(7, null), new Decision.Run(0, 0, null), failed("boom"));
		assertThat(decision).isInstanceOfSatisfying(Decision.Publish.class, (publish) -> {
			assertThat(publish.toStage()).isEqualTo(1);
			assertThat(publish.hop().fromMain()).isTrue();
			assertThat(publish.hop().retryCount()).isEqualTo(1);
			assertThat(publish.hop().lockId()).isNull();
			assertThat(publish.hop().failure().message()).isEqualTo("boom");
		});
	}

	@Test
	void aHeadThatFailsWithAttemptsLeftMovesToTheNextStageAndTheLastStageRepeats() {
		Lock lock = confirmed("L1", 3, 1, 4);
		Decision next = this.rules.afterRun(carrying(STAGE_1, 4, 1, "L1"), new Decision.Run(1, 1, lock),
				failed("boom"));
		assertThat(next).isInstanceOfSatisfying(Decision.Move.class, (move) -> {
			assertThat(move.lock()).isEqualTo(lock);
			assertThat(move.moving().stage()).isEqualTo(2);
			assertThat(move.moving().from()).isEqualTo(new Position(1, 4));
			assertThat(move.moving().retryCount()).isEqualTo(2);
			assertThat(move.moving().failure().message()).isEqualTo("boom");
		});
		RoutingRules fiveAttempts = new RoutingRules(plan(5), this.table, new FailureClassifier(List.of()),
				Clock.fixed(NOW, ZoneOffset.UTC), () -> "new-1");
		Lock last = confirmed("L1", 3, 2, 8);
		assertThat(fiveAttempts.afterRun(carrying(STAGE_2, 8, 2, "L1"), new Decision.Run(2, 2, last), failed("boom")))
			.isInstanceOfSatisfying(Decision.Move.class, (move) -> assertThat(move.moving().stage()).isEqualTo(2));
	}

	@Test
	void aRetryWithoutAKeyThatFailsMovesOnWithoutALock() {
		Delivery record = new Delivery(STAGE_1, 0, 4, 0, null, value(), headers("retry.count", "1"));
		assertThat(this.rules.afterRun(record, new Decision.Run(1, 1, null), failed("boom")))
			.isInstanceOfSatisfying(Decision.Publish.class, (publish) -> {
				assertThat(publish.toStage()).isEqualTo(2);
				assertThat(publish.hop().fromMain()).isFalse();
				assertThat(publish.hop().retryCount()).isEqualTo(2);
			});
	}

	@Test
	void aHeadWhoseAttemptsAreExhaustedIsDeadLetteredAndReleased() {
		Lock lock = confirmed("L1", 3, 2, 8);
		assertThat(this.rules.afterRun(carrying(STAGE_2, 8, 2, "L1"), new Decision.Run(2, 2, lock), failed("boom")))
			.isInstanceOfSatisfying(Decision.DeadLetter.class, (dead) -> {
				assertThat(dead.reason()).isEqualTo(DlqReason.EXHAUSTED);
				assertThat(dead.release()).isEqualTo(lock);
				assertThat(dead.hop().retryCount()).isEqualTo(3);
				assertThat(dead.hop().lockId()).isEqualTo("L1");
				assertThat(dead.hop().failure().errorClass()).isEqualTo(ProtocolHeaders.TRANSIENT);
			});
	}

	@Test
	void aPermanentFailureIsDeadLetteredAtOnceWithTheAttemptCounted() {
		HandlerResult permanent = HandlerResult.failed(new PermanentFailureException("no"));
		assertThat(this.rules.afterRun(main(7, "k"), new Decision.Run(0, 0, null), permanent)).isEqualTo(
				new Decision.DeadLetter(new Hop(true, 1, null, ProtocolHeaders.failure(permanent.failure(), true, NOW)),
						DlqReason.PERMANENT, null));
	}

	@Test
	void aPoisonRecordIsDeadLetteredWithTheCountItArrivedWith() {
		Lock lock = confirmed("L1", 3, 1, 4);
		HandlerResult poison = HandlerResult.poison(new IllegalArgumentException("unreadable"));
		assertThat(this.rules.afterRun(carrying(STAGE_1, 4, 1, "L1"), new Decision.Run(1, 1, lock), poison)).isEqualTo(
				new Decision.DeadLetter(new Hop(false, 1, "L1", ProtocolHeaders.failure(poison.failure(), true, NOW)),
						DlqReason.POISON, lock));
		assertThat(this.rules.afterRun(main(7, "k"), new Decision.Run(0, 0, null), poison)).isEqualTo(
				new Decision.DeadLetter(new Hop(true, 0, null, ProtocolHeaders.failure(poison.failure(), true, NOW)),
						DlqReason.POISON, null));
	}

	@Test
	void aCountAsLargeAsAnIntGoesDoesNotWrapAround() {
		Lock lock = new Lock("L1", KEY, 0, 3, 1, 4L, null, Integer.MAX_VALUE, null, NOW);
		assertThat(this.rules.afterRun(carrying(STAGE_1, 4, Integer.MAX_VALUE, "L1"),
				new Decision.Run(1, Integer.MAX_VALUE, lock), failed("boom")))
			.isInstanceOfSatisfying(Decision.DeadLetter.class,
					(dead) -> assertThat(dead.hop().retryCount()).isEqualTo(Integer.MAX_VALUE));
	}

	// --- the earliest run

	@Test
	void onlyARetryReadFromAStageHasAnEarliestRunAfterNow() {
		assertThat(this.rules.earliestRun(main(7, "k"))).isZero();
		assertThat(this.rules.earliestRun(carrying(STAGE_1, 4, 0, "L1"))).isZero();
		assertThat(this.rules.earliestRun(stage(STAGE_1, 4, "k", headers("retry.count", "many")))).isZero();
		assertThat(
				this.rules.earliestRun(new Delivery(STAGE_2, 0, 4, 1000, key(), value(), headers("retry.count", "2"))))
			.isEqualTo(1000 + 300_000);
	}

	// --- helpers

	static RoutingRules rules(LockStore locks, Instant now) {
		int[] ids = { 0 };
		return new RoutingRules(PLAN, locks, new FailureClassifier(List.of()), Clock.fixed(now, ZoneOffset.UTC),
				() -> "new-" + (++ids[0]));
	}

	static LadderPlan plan(int maxAttempts) {
		return LadderPlan.of("billing", "orders", List.of(Duration.ofSeconds(30), Duration.ofMinutes(5)), maxAttempts,
				LadderPlan.DEFAULT_RETRY_TEMPLATE, LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE);
	}

	/**
	 * A lock of key {@code k} born at {@code origin}, confirmed at {@code at} of
	 * {@code stage}.
	 */
	static Lock confirmed(String id, long origin, int stage, long at) {
		return new Lock(id, KEY, 0, origin, stage, at, null, 1, null, NOW);
	}

	static Delivery main(long offset, @Nullable String key) {
		return stage("orders", offset, key, headers());
	}

	/** A record of key {@code k} in {@code topic}, due now, naming {@code lockId}. */
	static Delivery carrying(String topic, long offset, int retryCount, String lockId) {
		return new Delivery(topic, 0, offset, NOW.toEpochMilli() - Duration.ofHours(1).toMillis(), key(), value(),
				headers("retry.count", Integer.toString(retryCount), "lock.id", lockId));
	}

	static Delivery stage(String topic, long offset, @Nullable String key, Headers headers) {
		return new Delivery(topic, 0, offset, NOW.toEpochMilli(),
				(key != null) ? key.getBytes(StandardCharsets.UTF_8) : null, value(), headers);
	}

	static Headers headers(String... namesAndValues) {
		RecordHeaders headers = new RecordHeaders();
		for (int i = 0; i < namesAndValues.length; i += 2) {
			headers.add(namesAndValues[i], namesAndValues[i + 1].getBytes(StandardCharsets.UTF_8));
		}
		return headers;
	}

	static HandlerResult failed(String message) {
		return HandlerResult.failed(new IllegalStateException(message));
	}

	private static byte[] key() {
		return KEY.get();
	}

	private static byte[] value() {
		return "value".getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * The lock table, in memory: the rules may read it, in an order the test can see, but
	 * never write it.
	 */
	static final class Table implements LockStore {

		final List<String> reads = new ArrayList<>();

		private final Map<String, Lock> live = new LinkedHashMap<>();

		void put(Lock lock) {
			this.live.put(lock.id(), lock);
		}

		@Override
		public @Nullable Lock find(String id) {
			this.reads.add("find " + id);
			return this.live.get(id);
		}

		@Override
		public List<Lock> locksOf(Bytes key) {
			this.reads.add("locksOf");
			return this.live.values().stream().filter((lock) -> lock.key().equals(key)).sorted(Lock.BY_ORIGIN).toList();
		}

		@Override
		public @Nullable Lock byOrigin(Bytes key, long originOffset) {
			this.reads.add("byOrigin " + originOffset);
			return this.live.values()
				.stream()
				.filter((lock) -> lock.key().equals(key) && lock.originOffset() == originOffset)
				.findFirst()
				.orElse(null);
		}

		@Override
		public @Nullable Lock predecessor(Lock lock) {
			this.reads.add("predecessor " + lock.id());
			return this.live.values()
				.stream()
				.filter((other) -> other.key().equals(lock.key()) && Lock.BY_ORIGIN.compare(other, lock) < 0)
				.max(Lock.BY_ORIGIN)
				.orElse(null);
		}

		@Override
		public void write(Lock lock) {
			throw new AssertionError("the rules wrote " + lock);
		}

		@Override
		public void release(Lock lock) {
			throw new AssertionError("the rules released " + lock);
		}

	}

}
