package io.github.kafkaresilience.internal.idempotency;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.idempotency.Claim;
import io.github.kafkaresilience.idempotency.ClaimHeldException;
import io.github.kafkaresilience.idempotency.ClaimLostException;
import io.github.kafkaresilience.idempotency.IdempotencyKeyResolver;
import io.github.kafkaresilience.idempotency.IdempotencyObserver;
import io.github.kafkaresilience.idempotency.IdempotencyStore;
import io.github.kafkaresilience.idempotency.InMemoryIdempotencyStore;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.support.MovingClock;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * What the guard decides for one record, without a broker: which key it claims, what it
 * does when the key resolver, the store or the handler fails, and what it tells its
 * observer.
 */
class GuardDecisionsTests {

	private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();

	private final List<String> observed = new ArrayList<>();

	private final IdempotencyObserver observer = new IdempotencyObserver() {

		@Override
		public void skipped() {
			GuardDecisionsTests.this.observed.add("skipped");
		}

		@Override
		public void held() {
			GuardDecisionsTests.this.observed.add("held");
		}

	};

	@Test
	void theDefaultKeyIsTheBirthplaceOnStagesAndOnReplaysAndTheOwnPlaceOtherwise() {
		IdempotencyKeyResolver keys = IdempotencyKeyResolver.birthplace("orders");

		assertThat(keys.keyOf(record("orders", 1, 40))).isEqualTo("orders/1/40");
		assertThat(keys.keyOf(withBirthplace(record("orders.retry.30s", 1, 7), "orders", 1, 40)))
			.isEqualTo("orders/1/40");
		assertThat(keys.keyOf(withBirthplace(record("orders", 1, 90), "orders", 1, 40)))
			.as("original.* forged on a main-topic record")
			.isEqualTo("orders/1/90");
		ConsumerRecord<String, String> replayed = withBirthplace(record("orders", 1, 90), "orders", 1, 40);
		replayed.headers().add("replay.from-dlq", "orders.dlq/1/3".getBytes(StandardCharsets.UTF_8));
		assertThat(keys.keyOf(replayed)).isEqualTo("orders/1/40");
		ConsumerRecord<String, String> forged = withBirthplace(record("orders", 1, 20), "orders", 1, 40);
		forged.headers().add("replay.from-dlq", "orders.dlq/1/3".getBytes(StandardCharsets.UTF_8));
		assertThat(keys.keyOf(forged)).as("a replay names an earlier record of its partition").isEqualTo("orders/1/20");
	}

	@Test
	void aCompletedKeyIsSkippedWithoutRunningTheHandlerAndCounted() {
		AtomicInteger runs = new AtomicInteger();
		IdempotencyGuard guard = guard(IdempotencyKeyResolver.birthplace("orders"));

		HandlerResult first = guard.run(record("orders", 0, 1), () -> run(runs, HandlerResult.success()));
		HandlerResult second = guard.run(record("orders", 0, 1), () -> run(runs, HandlerResult.success()));

		assertThat(first.outcome()).isEqualTo(HandlerResult.Outcome.SUCCESS);
		assertThat(second.outcome()).isEqualTo(HandlerResult.Outcome.SUCCESS);
		assertThat(runs).hasValue(1);
		assertThat(this.observed).containsExactly("skipped");
	}

	@Test
	void aFailedRunReleasesItsClaimSoThatTheRetryRuns() {
		AtomicInteger runs = new AtomicInteger();
		IdempotencyGuard guard = guard(IdempotencyKeyResolver.birthplace("orders"));
		IllegalStateException boom = new IllegalStateException("boom");

		HandlerResult failed = guard.run(record("orders", 0, 1), () -> run(runs, HandlerResult.failed(boom)));
		HandlerResult retried = guard.run(record("orders", 0, 1), () -> run(runs, HandlerResult.success()));

		assertThat(failed.failure()).isSameAs(boom);
		assertThat(retried.outcome()).isEqualTo(HandlerResult.Outcome.SUCCESS);
		assertThat(runs).hasValue(2);
		assertThat(this.observed).isEmpty();
	}

	@Test
	void aKeyHeldByAnotherAttemptIsATransientFailureThatNamesTheKey() {
		this.store.claim("listener", "orders/0/1", Duration.ofMinutes(5));
		AtomicInteger runs = new AtomicInteger();

		HandlerResult result = guard(IdempotencyKeyResolver.birthplace("orders")).run(record("orders", 0, 1),
				() -> run(runs, HandlerResult.success()));

		assertThat(result.outcome()).isEqualTo(HandlerResult.Outcome.FAILURE);
		assertThat(result.failure()).isInstanceOf(ClaimHeldException.class)
			.hasMessageContaining("'orders/0/1'")
			.hasMessageContaining("kafka.resilience.idempotency.lease");
		assertThat(runs).hasValue(0);
		assertThat(this.observed).containsExactly("held");
	}

	@Test
	void aKeyThatCannotBeComputedIsAPermanentFailure() {
		HandlerResult thrown = guard((record) -> {
			throw new IllegalArgumentException("no payment id");
		}).run(record("orders", 0, 1), HandlerResult::success);
		HandlerResult empty = guard((record) -> " ").run(record("orders", 0, 2), HandlerResult::success);

		assertThat(thrown.failure()).isInstanceOf(PermanentFailureException.class)
			.hasMessageContaining("orders/0/1")
			.hasMessageContaining("no payment id");
		assertThat(empty.failure()).isInstanceOf(PermanentFailureException.class).hasMessageContaining("empty");
		assertThat(this.store.size()).isZero();
	}

	@Test
	void aStoreThatFailsToClaimIsATransientFailureAndTheHandlerDoesNotRun() {
		IllegalStateException down = new IllegalStateException("database down");
		IdempotencyStore failing = new InMemoryIdempotencyStore() {

			@Override
			public Claim claim(String scope, String key, Duration lease) {
				throw down;
			}

		};
		AtomicInteger runs = new AtomicInteger();

		HandlerResult result = new IdempotencyGuard("listener", failing, IdempotencyKeyResolver.birthplace("orders"),
				Duration.ofMinutes(5), null, this.observer)
			.run(record("orders", 0, 1), () -> run(runs, HandlerResult.success()));

		assertThat(result.failure()).isSameAs(down);
		assertThat(runs).hasValue(0);
	}

	@Test
	void aClaimLostDuringARunMakesTheRunFail() {
		MovingClock clock = new MovingClock(Instant.now());
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(clock);
		IdempotencyGuard guard = new IdempotencyGuard("listener", store, IdempotencyKeyResolver.birthplace("orders"),
				Duration.ofMinutes(5), null, this.observer);

		HandlerResult result = guard.run(record("orders", 0, 1), () -> {
			clock.advance(Duration.ofMinutes(6)); // the run outlives its lease
			assertThat(store.claim("listener", "orders/0/1", Duration.ofMinutes(5)).status())
				.isEqualTo(Claim.Status.CLAIMED);
			return HandlerResult.success();
		});

		assertThat(result.failure()).isInstanceOf(ClaimLostException.class);
	}

	@Test
	void aKeyExpressionIsEvaluatedOnTheRecordAndChecked() {
		ExpressionKeyResolver byValue = new ExpressionKeyResolver("value.toUpperCase()", null);

		assertThat(byValue.keyOf(record("orders", 0, 1))).isEqualTo("V-1");
		assertThat(guard(new ExpressionKeyResolver("headers.lastHeader('missing')", null))
			.run(record("orders", 0, 1), HandlerResult::success)
			.failure()).isInstanceOf(PermanentFailureException.class).hasMessageContaining("gave null");
		assertThatIllegalArgumentException().isThrownBy(() -> new ExpressionKeyResolver("value.", null))
			.withMessageContaining("'value.'");
	}

	@Test
	void aKeyExpressionOnAListenerThatIsNotIdempotentFailsStartup() {
		IdempotencyGuards guards = new IdempotencyGuards(
				new IdempotencyGuards.Settings(false, Duration.ofMinutes(5), Duration.ofDays(7), Duration.ofHours(1)),
				() -> this.store, IdempotencyKeyResolver::birthplace, null, null,
				(listener, topic) -> IdempotencyObserver.NONE, Clock.systemUTC());
		try {
			assertThat(guards.guard("payments", null, null, "orders")).isNull();
			assertThat(guards.guard("payments", true, null, "orders")).isNotNull();
			assertThatIllegalStateException().isThrownBy(() -> guards.guard("payments", false, "value", "orders"))
				.withMessageContaining("'payments'")
				.withMessageContaining("idempotent");
		}
		finally {
			guards.destroy();
		}
	}

	private IdempotencyGuard guard(IdempotencyKeyResolver keys) {
		return new IdempotencyGuard("listener", this.store, keys, Duration.ofMinutes(5), null, this.observer);
	}

	private static HandlerResult run(AtomicInteger runs, HandlerResult result) {
		runs.incrementAndGet();
		return result;
	}

	private static ConsumerRecord<String, String> record(String topic, int partition, long offset) {
		return new ConsumerRecord<>(topic, partition, offset, "k", "v-" + offset);
	}

	private static ConsumerRecord<String, String> withBirthplace(ConsumerRecord<String, String> record, String topic,
			int partition, long offset) {
		record.headers().add("original.topic", topic.getBytes(StandardCharsets.UTF_8));
		record.headers().add("original.partition", Integer.toString(partition).getBytes(StandardCharsets.UTF_8));
		record.headers().add("original.offset", Long.toString(offset).getBytes(StandardCharsets.UTF_8));
		return record;
	}

}
