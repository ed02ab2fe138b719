package io.github.kafkaresilience.internal.ladder;

import java.time.Clock;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.DlqReason;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.LadderObserver;
import io.github.kafkaresilience.ladder.RecordHandler;
import org.apache.kafka.common.header.Headers;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The router as its container sees it: which records it looks at, what it tells its
 * observer, and a step whose writes are under way against one whose writes are done.
 */
class StageRouterTests {

	private static final LadderPlan PLAN = RoutingRulesTests.PLAN;

	private final StageRouterRefusalTests.Locks locks = new StageRouterRefusalTests.Locks();

	private final StageRouterRefusalTests.Publisher publisher = new StageRouterRefusalTests.Publisher();

	private final List<String> heard = new ArrayList<>();

	private final LadderObserver observer = new LadderObserver() {

		@Override
		public void handled(int stage, HandlerResult.Outcome outcome, long nanos) {
			StageRouterTests.this.heard.add("handled " + stage + " " + outcome);
		}

		@Override
		public void followerForwarded() {
			StageRouterTests.this.heard.add("follower");
		}

		@Override
		public void deadLettered(DlqReason reason, String errorClass) {
			StageRouterTests.this.heard.add("dead-lettered " + reason.value());
		}

	};

	/** Hears each attempt and each send made through one. */
	private final AttemptObservation attempts = (record, stage) -> new AttemptObservation.Attempt() {

		@Override
		public void ended(HandlerResult result) {
			StageRouterTests.this.heard.add("attempt " + stage + " " + result.outcome());
		}

		@Override
		public void failed(Throwable ex) {
			StageRouterTests.this.heard.add("attempt " + stage + " threw " + ex.getMessage());
		}

		@Override
		public CompletableFuture<Long> sending(RecordPublisher publisher, String topic, int partition, byte[] key,
				byte[] value, Headers headers) {
			StageRouterTests.this.heard.add("attempt " + stage + " sends to " + topic);
			return AttemptObservation.Attempt.super.sending(publisher, topic, partition, key, value, headers);
		}

	};

	@Test
	void aTopicOutsideTheLadderIsRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> router(HandlerResult.success())
				.route(RoutingRulesTests.stage("payments", 1, "k", RoutingRulesTests.headers()), true))
			.withMessage("Topic 'payments' is not part of the ladder of 'orders'");
	}

	@Test
	void aStageRecordOfAnotherGroupIsSkippedWithoutRunningOrWriting() {
		Headers foreign = RoutingRulesTests.headers("retry.count", "1", "lock.id", "L1", "owner.group", "shipping");
		Step step = router(HandlerResult.success())
			.route(RoutingRulesTests.stage(RoutingRulesTests.STAGE_1, 4, "k", foreign), true);
		assertThat(step).isEqualTo(Step.done());
		assertThat(this.heard).isEmpty();
		assertThat(this.publisher.sent).isEmpty();
	}

	@Test
	void aRecordThatRunsIsToldToTheObserverWithItsStage() {
		StageRouter router = router(HandlerResult.success());
		assertThat(router.route(RoutingRulesTests.main(7, "k"), true)).isEqualTo(Step.done());
		assertThat(this.heard).containsExactly("handled 0 SUCCESS");
	}

	@Test
	void aFollowerIsToldToTheObserverOnceItsMoveIsWritten() {
		this.locks.write(RoutingRulesTests.confirmed("L0", 3, 1, 0));
		StageRouter router = router(HandlerResult.success());
		assertThat(router.route(RoutingRulesTests.main(7, "k"), true)).isEqualTo(Step.done());
		assertThat(this.heard).containsExactly("follower");
		assertThat(this.publisher.sent).singleElement()
			.satisfies((sent) -> assertThat(sent.header("retry.count")).isEqualTo("0"));
	}

	@Test
	void aFailureThatExhaustsTheAttemptsIsDeadLetteredAndItsLockReleased() {
		Lock lock = RoutingRulesTests.confirmed("L1", 3, 2, 8);
		this.locks.write(lock);
		StageRouter router = router(HandlerResult.failed(new IllegalStateException("again")));
		Headers ours = RoutingRulesTests.headers("retry.count", "2", "lock.id", "L1", "owner.group", "billing");
		Delivery due = new Delivery(RoutingRulesTests.STAGE_2, 0, 8, 0, RoutingRulesTests.KEY.get(), new byte[0], ours);
		Step step = router.route(due, true);
		assertThat(step).isEqualTo(Step.done());
		assertThat(this.heard).containsExactly("handled 2 FAILURE", "dead-lettered exhausted");
		assertThat(this.locks.live).isEmpty();
	}

	@Test
	void aFailedRunWithFailuresDeferredWritesNothingUntilTheRestOfItsStepRuns() {
		StageRouter router = router(HandlerResult.failed(new IllegalStateException("down")));
		Step step = router.route(RoutingRulesTests.main(7, "k"), true, true);
		assertThat(step.kind()).isEqualTo(Step.Kind.FAILED);
		assertThat(this.heard).containsExactly("handled 0 FAILURE");
		assertThat(this.locks.live).isEmpty();
		assertThat(this.publisher.sent).isEmpty();
		assertThat(step.rest().get()).isEqualTo(Step.done());
		assertThat(this.locks.live.values()).singleElement().satisfies((lock) -> assertThat(lock.stage()).isEqualTo(1));
		assertThat(this.publisher.sent).singleElement()
			.satisfies((sent) -> assertThat(sent.header("retry.count")).isEqualTo("1"));
	}

	@Test
	void aRunThatSucceedsWithFailuresDeferredIsDoneAtOnce() {
		StageRouter router = router(HandlerResult.success());
		assertThat(router.route(RoutingRulesTests.main(7, "k"), true, true)).isEqualTo(Step.done());
	}

	@Test
	void aStepWhoseWritesAreUnderWayIsSettlingUntilTheyComplete() {
		CompletableFuture<Long> publish = new CompletableFuture<>();
		RecordPublisher slow = new RecordPublisher() {

			@Override
			public long publish(String topic, int partition, byte[] key, byte[] value, Headers headers) {
				throw new UnsupportedOperationException();
			}

			@Override
			public CompletableFuture<Long> sending(String topic, int partition, byte[] key, byte[] value,
					Headers headers) {
				return publish;
			}

		};
		RecordHandler failing = (record) -> HandlerResult.failed(new IllegalStateException());
		StageRouter router = StageRouter.builder(PLAN, this.locks, slow, failing)
			.clock(Clock.fixed(RoutingRulesTests.NOW, ZoneOffset.UTC))
			.lockIds(() -> "L1")
			.build();
		Step step = router.route(RoutingRulesTests.main(7, "k"), true);
		assertThat(step.kind()).isEqualTo(Step.Kind.SETTLING);
		assertThat(step.writes()).isNotDone();
		publish.complete(0L);
		assertThat(step.writes()).isCompleted();
		assertThat(this.locks.find("L1").at()).isEqualTo(0L);
	}

	@Test
	void aReplayEntryWritesItsPendingLockAndWaitsForItsAdmission() {
		Headers replay = RoutingRulesTests.headers("retry.count", "0", "replay.from-dlq", "billing.orders.dlq/0/1",
				"owner.group", "billing");
		Delivery entry = RoutingRulesTests.stage(RoutingRulesTests.STAGE_1, 6, "k", replay);
		assertThat(router(HandlerResult.success()).route(entry, true)).isEqualTo(Step.waitForKey());
		assertThat(this.locks.find(StageRouter.replayLockId(entry)))
			.satisfies((lock) -> assertThat(lock.isPending()).isTrue());
		assertThat(this.heard).isEmpty();
	}

	@Test
	void aFailedAttemptEndsBeforeItSendsTheRecordToItsNextStage() {
		StageRouter router = observed(HandlerResult.failed(new IllegalStateException("down"))).attempts(this.attempts)
			.build();
		assertThat(router.route(RoutingRulesTests.main(7, "k"), true)).isEqualTo(Step.done());
		assertThat(this.heard).containsExactly("attempt 0 FAILURE", "handled 0 FAILURE",
				"attempt 0 sends to " + RoutingRulesTests.STAGE_1);
		assertThat(this.publisher.sent).singleElement()
			.satisfies((sent) -> assertThat(sent.topic()).isEqualTo(RoutingRulesTests.STAGE_1));
	}

	@Test
	void aDeadLetterIsSentByTheAttemptThatExhaustedTheRecord() {
		this.locks.write(RoutingRulesTests.confirmed("L1", 3, 2, 8));
		StageRouter router = observed(HandlerResult.failed(new IllegalStateException("again"))).attempts(this.attempts)
			.build();
		Headers ours = RoutingRulesTests.headers("retry.count", "2", "lock.id", "L1", "owner.group", "billing");
		Delivery due = new Delivery(RoutingRulesTests.STAGE_2, 0, 8, 0, RoutingRulesTests.KEY.get(), new byte[0], ours);
		router.route(due, true);
		assertThat(this.heard).containsExactly("attempt 2 FAILURE", "handled 2 FAILURE",
				"attempt 2 sends to " + PLAN.dlqTopic(), "dead-lettered exhausted");
	}

	@Test
	void aFollowerIsSentWithoutAnAttempt() {
		this.locks.write(RoutingRulesTests.confirmed("L0", 3, 1, 0));
		StageRouter router = observed(HandlerResult.success()).attempts(this.attempts).build();
		assertThat(router.route(RoutingRulesTests.main(7, "k"), true)).isEqualTo(Step.done());
		assertThat(this.heard).containsExactly("follower");
		assertThat(this.publisher.sent).hasSize(1);
	}

	@Test
	void aHandlerThatThrowsEndsItsAttemptAndTheRecordIsRoutedAgain() {
		RecordHandler throwing = (record) -> {
			throw new IllegalStateException("store unreachable");
		};
		StageRouter router = StageRouter.builder(PLAN, this.locks, this.publisher, throwing)
			.clock(Clock.fixed(RoutingRulesTests.NOW, ZoneOffset.UTC))
			.lockIds(() -> "new")
			.attempts(this.attempts)
			.build();
		assertThatIllegalStateException().isThrownBy(() -> router.route(RoutingRulesTests.main(7, "k"), true))
			.withMessage("store unreachable");
		assertThat(this.heard).containsExactly("attempt 0 threw store unreachable");
		assertThat(this.publisher.sent).isEmpty();
	}

	@Test
	void jitterSpreadsDueTimesOverAShareOfTheDelayTheSameWayOnEveryDelivery() {
		StageRouter router = router(HandlerResult.success());
		long delay = PLAN.stage(1).delay().toMillis();
		Headers retry = RoutingRulesTests.headers("retry.count", "1", "lock.id", "L1", "owner.group", "billing");
		Delivery first = new Delivery(RoutingRulesTests.STAGE_1, 0, 0, 1_000, RoutingRulesTests.KEY.get(), new byte[0],
				retry);
		assertThat(router.earliestRun(first)).as("no jitter by default").isEqualTo(1_000 + delay);

		StageRouter jittered = observed(HandlerResult.success()).dueTimeJitter(0.5).build();
		int early = 0;
		int late = 0;
		for (long offset = 0; offset < 1000; offset++) {
			Delivery record = new Delivery(RoutingRulesTests.STAGE_1, (int) (offset % 3), offset, 1_000,
					RoutingRulesTests.KEY.get(), new byte[0], retry);
			long due = jittered.earliestRun(record);
			assertThat(due).isBetween(1_000 + delay, 1_000 + delay + delay / 2);
			assertThat(jittered.earliestRun(record)).as("the same on every delivery").isEqualTo(due);
			if (due < 1_000 + delay + delay / 4) {
				early++;
			}
			else {
				late++;
			}
		}
		assertThat(early).as("spread over the whole share").isGreaterThan(400);
		assertThat(late).isGreaterThan(400);
		assertThatIllegalArgumentException().isThrownBy(() -> observed(HandlerResult.success()).dueTimeJitter(1.5))
			.withMessageContaining("kafka.resilience.retry.jitter");
	}

	// --- the builder

	@Test
	void aRouterBuiltOfItsFourPartsAloneMovesAFailedRecordUnderANewRandomLock() {
		StageRouter router = StageRouter
			.builder(PLAN, this.locks, this.publisher,
					(record) -> HandlerResult.failed(new IllegalStateException("down")))
			.build();
		assertThat(router.route(RoutingRulesTests.main(7, "k"), true)).isEqualTo(Step.done());
		assertThat(this.publisher.sent).singleElement().satisfies((sent) -> {
			assertThat(sent.topic()).isEqualTo(RoutingRulesTests.STAGE_1);
			assertThat(UUID.fromString(sent.header("lock.id"))).isNotNull();
			assertThat(this.locks.find(sent.header("lock.id"))).isNotNull();
		});
	}

	@Test
	void aRouterBuiltToRunInBatchesLeavesTheRunToItsCaller() {
		List<Delivery> ran = new ArrayList<>();
		StageRouter router = StageRouter.builder(PLAN, this.locks, this.publisher, (record) -> {
			ran.add(record);
			return HandlerResult.success();
		}).batchRuns(true).build();
		Step step = router.route(RoutingRulesTests.main(7, "k"), true);
		assertThat(step.kind()).isEqualTo(Step.Kind.READY);
		assertThat(ran).isEmpty();
		assertThat(router(HandlerResult.success()).route(RoutingRulesTests.main(8, "k"), true))
			.as("one built without batch runs runs its handler")
			.isEqualTo(Step.done());
	}

	@Test
	void theFollowersGivenToTheBuilderHearOfEachRecordThatFollowsItsKeyIntoTheLadder() {
		this.locks.write(RoutingRulesTests.confirmed("L0", 3, 1, 0));
		List<Long> followers = new ArrayList<>();
		StageRouter router = observed(HandlerResult.success()).followers((record) -> followers.add(record.offset()))
			.build();
		router.route(RoutingRulesTests.main(7, "k"), true);
		router.route(RoutingRulesTests.main(9, "other"), true);
		assertThat(followers).containsExactly(7L);
		assertThat(this.heard).containsExactly("follower", "handled 0 SUCCESS");
	}

	private StageRouter router(HandlerResult result) {
		return observed(result).build();
	}

	/** A router of a handler that always returns {@code result}, observed, to build. */
	private StageRouter.Builder observed(HandlerResult result) {
		return StageRouter.builder(PLAN, this.locks, this.publisher, (record) -> result)
			.clock(Clock.fixed(RoutingRulesTests.NOW, ZoneOffset.UTC))
			.lockIds(() -> "new")
			.observer(this.observer);
	}

}
