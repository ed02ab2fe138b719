package io.github.kafkaresilience.internal.ladder;

import java.time.Clock;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import io.github.kafkaresilience.internal.lock.OperatorCommand.Action;
import io.github.kafkaresilience.internal.lock.Position;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An operator's command on the head of a held key (docs/PROTOCOL.md, rule 11), as the
 * router acts on it: only on the record that carries the lock where the command saw it,
 * and only while the lock is the head of its key; the command is ended once the step it
 * asked for is done.
 */
class OperatorCommandRoutingTests {

	private static final LadderPlan PLAN = RoutingRulesTests.PLAN;

	private final Locks locks = new Locks();

	private final StageRouterRefusalTests.Publisher publisher = new StageRouterRefusalTests.Publisher();

	private final List<String> handled = new ArrayList<>();

	@Test
	void retryNowRunsAHeadBeforeItsDueTimeAndItsSuccessReleasesTheLock() {
		Lock lock = head();
		OperatorCommand command = this.locks.command(lock, Action.RETRY_NOW);
		Step step = router(HandlerResult.success()).route(notDue(lock), true);
		assertThat(step).isEqualTo(Step.done());
		assertThat(this.handled).containsExactly("ran 1 retry.count=1");
		assertThat(this.locks.live).isEmpty();
		assertThat(this.locks.ended).containsExactly(command);
	}

	@Test
	void retryNowCountsTheAttemptAndAFailureMovesTheLockOn() {
		Lock lock = head();
		this.locks.command(lock, Action.RETRY_NOW);
		router(RoutingRulesTests.failed("still down")).route(notDue(lock), true);
		assertThat(this.publisher.sent).singleElement().satisfies((sent) -> {
			assertThat(sent.topic()).isEqualTo(RoutingRulesTests.STAGE_2);
			assertThat(sent.header("retry.count")).isEqualTo("2");
			assertThat(sent.header("error.message")).isEqualTo("still down");
		});
		assertThat(this.locks.live.get("L1").position()).isEqualTo(new Position(2, 0));
		assertThat(this.locks.ended).hasSize(1);
	}

	@Test
	void deadLetterNowSendsTheHeadToTheDlqWithReasonOperatorWithoutRunningIt() {
		Lock lock = head();
		OperatorCommand command = this.locks.command(lock, Action.DEAD_LETTER_NOW);
		Step step = router(HandlerResult.success()).route(notDue(lock), true);
		assertThat(step).isEqualTo(Step.done());
		assertThat(this.handled).isEmpty();
		assertThat(this.publisher.sent).singleElement().satisfies((sent) -> {
			assertThat(sent.topic()).isEqualTo("billing.orders.dlq");
			assertThat(sent.header("dlq.reason")).isEqualTo("operator");
			assertThat(sent.header("retry.count")).as("no attempt").isEqualTo("1");
			assertThat(sent.header("error.message")).as("the last failure's, kept").isEqualTo("timeout");
			assertThat(sent.header("lock.id")).isEqualTo("L1");
		});
		assertThat(this.locks.live).isEmpty();
		assertThat(this.locks.ended).containsExactly(command);
	}

	@Test
	void aCommandForAnotherPositionOfTheLockIsVoidAndTheRecordWaitsForItsDueTime() {
		Lock lock = head();
		this.locks.commands.add(new OperatorCommand("c-old", Action.DEAD_LETTER_NOW, "L1", lock.key(), 0,
				new Position(1, 3), "ops", RoutingRulesTests.NOW));
		Step step = router(HandlerResult.success()).route(notDue(lock), true);
		assertThat(step.kind()).isEqualTo(Step.Kind.WAIT_UNTIL);
		assertThat(this.handled).isEmpty();
		assertThat(this.publisher.sent).isEmpty();
		assertThat(this.locks.ended).isEmpty();
	}

	@Test
	void aCommandOnALockBehindAnotherOfItsKeyWaitsForThatOne() {
		this.locks.write(RoutingRulesTests.confirmed("L0", 2, 1, 2));
		Lock lock = head();
		this.locks.command(lock, Action.DEAD_LETTER_NOW);
		Step step = router(HandlerResult.success()).route(notDue(lock), true);
		assertThat(step).isEqualTo(Step.waitForKey());
		assertThat(this.publisher.sent).isEmpty();
		assertThat(this.locks.live).hasSize(2);
	}

	@Test
	void aCommandOnAnotherLockChangesNothingForThisOne() {
		Lock lock = head();
		Lock other = new Lock("L9", Bytes.wrap("j".getBytes()), 0, 7, 1, 11L, null, 1, null, RoutingRulesTests.NOW);
		this.locks.write(other);
		this.locks.command(other, Action.DEAD_LETTER_NOW);
		Step step = router(HandlerResult.success()).route(notDue(lock), true);
		assertThat(step.kind()).isEqualTo(Step.Kind.WAIT_UNTIL);
		assertThat(this.locks.live).containsKeys("L1", "L9");
	}

	/**
	 * Lock L1 of key k, the head of its key, confirmed at offset 5 of stage 1 after one
	 * failure.
	 */
	private Lock head() {
		Lock lock = RoutingRulesTests.confirmed("L1", 3, 1, 5);
		this.locks.write(lock);
		return lock;
	}

	/** The record that carries {@code lock}, written just now: due in 30 s. */
	private static Delivery notDue(Lock lock) {
		Headers headers = RoutingRulesTests.headers("retry.count", "1", "lock.id", lock.id(), "owner.group", "billing",
				"error.class", "transient", "error.message", "timeout", "error.exception", "java.io.IOException",
				"error.timestamp", "2026-01-01T00:00:00Z");
		return new Delivery(RoutingRulesTests.STAGE_1, 0, lock.at(), RoutingRulesTests.NOW.toEpochMilli(),
				RoutingRulesTests.KEY.get(), new byte[0], headers);
	}

	private StageRouter router(HandlerResult result) {
		return StageRouter.builder(PLAN, this.locks, this.publisher, (record) -> {
			this.handled.add("ran " + PLAN.stageOf(record.topic()) + " retry.count="
					+ ProtocolHeaders.text(record.headers(), ProtocolHeaders.RETRY_COUNT));
			return result;
		}).clock(Clock.fixed(RoutingRulesTests.NOW, ZoneOffset.UTC)).lockIds(() -> "new").build();
	}

	/** The live locks and the pending commands, in memory. */
	static final class Locks extends StageRouterRefusalTests.Locks {

		final List<OperatorCommand> commands = new ArrayList<>();

		final List<OperatorCommand> ended = new ArrayList<>();

		OperatorCommand command(Lock lock, Action action) {
			OperatorCommand command = OperatorCommand.on(lock, action, "ops", "c" + this.commands.size(),
					RoutingRulesTests.NOW);
			this.commands.add(command);
			return command;
		}

		@Override
		public @Nullable OperatorCommand commandFor(Lock lock) {
			return this.commands.stream().filter((command) -> command.appliesTo(lock)).findFirst().orElse(null);
		}

		@Override
		public CompletableFuture<Void> finishing(OperatorCommand command) {
			this.commands.remove(command);
			this.ended.add(command);
			return CompletableFuture.completedFuture(null);
		}

	}

}
