package io.github.kafkaresilience.internal.outage;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import io.github.kafkaresilience.DependencyUnavailableException;
import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.ladder.AsyncBatchHandler;
import io.github.kafkaresilience.ladder.AsyncRecordHandler;
import io.github.kafkaresilience.ladder.BatchResult;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.RecordHandler;
import io.github.kafkaresilience.internal.support.MovingClock;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The outage breaker opens when nearly every attempt fails across several keys, or when
 * the handler says its dependency is unavailable, and never for failures that belong to
 * some keys.
 */
class OutageBreakerTests {

	private final MovingClock clock = new MovingClock(Instant.parse("2026-11-28T10:00:00Z"));

	private final List<Boolean> changes = new ArrayList<>();

	private final AtomicReference<HandlerResult> next = new AtomicReference<>(HandlerResult.success());

	private final OutageBreaker breaker = breaker(OutageSettings.DEFAULTS);

	private long offset;

	@Test
	void everyKeyFailingOpensItOnceTheWindowHoldsEnoughAttempts() {
		RecordHandler handler = observe(this.breaker, (delivery) -> this.next.get());
		this.next.set(HandlerResult.failed(new IllegalStateException("503 from the payment provider")));
		for (int i = 0; i < 19; i++) {
			handler.handle(record("k-" + (i % 40)));
			this.clock.advance(100);
		}
		assertThat(this.breaker.isOpen()).as("19 attempts over 1.9 s: fewer than minimum-attempts").isFalse();
		handler.handle(record("k-19"));
		assertThat(this.breaker.isOpen()).isTrue();
		assertThat(this.changes).containsExactly(true);
		assertThat(this.breaker.reason()).contains("95 %").contains("503 from the payment provider");
		assertThat(this.breaker.holds(this.next.get())).as("a transient failure while open is held").isTrue();
		assertThat(this.breaker.holds(HandlerResult.failed(new PermanentFailureException("bad record"))))
			.as("a permanent failure belongs to its record")
			.isFalse();
		assertThat(this.breaker.holds(HandlerResult.poison(new IllegalArgumentException("not JSON")))).isFalse();
		assertThat(this.breaker.holds(HandlerResult.success())).isFalse();

		this.breaker.close("a probe succeeded");
		assertThat(this.breaker.isOpen()).isFalse();
		assertThat(this.changes).containsExactly(true, false);
		assertThat(this.breaker.holds(this.next.get())).isFalse();
		this.clock.advance(100);
		handler.handle(record("k-1"));
		assertThat(this.breaker.isOpen()).as("closing forgets the failures before").isFalse();
	}

	@Test
	void resultsThatCompleteLaterCountWhenTheirAttemptFinishesNotWhenTheMethodIsCalled() {
		List<CompletableFuture<AsyncRecordHandler.Completion>> pending = new ArrayList<>();
		AsyncRecordHandler calls = (delivery) -> {
			CompletableFuture<AsyncRecordHandler.Completion> result = new CompletableFuture<>();
			pending.add(result);
			return result;
		};
		AsyncRecordHandler handler = this.breaker.observing(calls, "orders");
		List<CompletableFuture<AsyncRecordHandler.Completion>> started = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			started.add(handler.start(record("k-" + i)));
		}
		AsyncRecordHandler.Completion failed = AsyncRecordHandler.Completion
			.of(HandlerResult.failed(new IllegalStateException("503 from the payment provider")));
		pending.forEach((result) -> result.complete(failed));
		this.clock.advance(100);
		assertThat(this.breaker.isOpen()).as("20 calls whose results completed, none finished yet").isFalse();

		for (int i = 0; i < 19; i++) {
			started.get(i).join().finish();
			this.clock.advance(100);
		}
		assertThat(this.breaker.isOpen()).as("19 attempts finished over 1.9 s").isFalse();
		AsyncRecordHandler.Finished last = started.get(19).join().finish();

		assertThat(last.result().outcome()).isEqualTo(HandlerResult.Outcome.FAILURE);
		assertThat(this.breaker.isOpen()).isTrue();
		assertThat(this.breaker.reason()).contains("503 from the payment provider");
	}

	@Test
	void aBatchWhoseResultCompletesLaterCountsEachRecordThatRanOnceItCompleted() {
		CompletableFuture<BatchResult> result = new CompletableFuture<>();
		AsyncBatchHandler calls = (records, worker) -> result;
		AsyncBatchHandler handler = this.breaker.observing(calls, "orders");
		RecordHandler earlier = observe(this.breaker,
				(delivery) -> HandlerResult.failed(new IllegalStateException("503")));
		for (int i = 0; i < 10; i++) {
			earlier.handle(record("e-" + i));
			this.clock.advance(200);
		}
		List<Delivery> records = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			records.add(record("k-" + i));
		}
		CompletableFuture<BatchResult> ran = handler.start(records, Runnable::run);
		assertThat(this.breaker.isOpen()).as("10 failed attempts over 2 s, the batch's result pending").isFalse();

		List<HandlerResult> results = new ArrayList<>();
		records.forEach((record) -> results.add(HandlerResult.failed(new IllegalStateException("503"))));
		result.complete(BatchResult.of(results));

		assertThat(ran).isDone();
		assertThat(this.breaker.isOpen()).isTrue();
	}

	@Test
	void failuresOfEveryKeyOpenItOnlyOnceTheyHaveLastedTheMinimumDuration() {
		RecordHandler handler = observe(this.breaker, (delivery) -> this.next.get());
		this.next.set(HandlerResult.failed(new IllegalStateException("503")));
		for (int i = 0; i < 500; i++) {
			handler.handle(record("k-" + i));
			this.clock.advance(1);
		}
		assertThat(this.breaker.isOpen()).as("500 failures in 0.5 s: maybe a burst").isFalse();
		this.clock.advance(500);
		handler.handle(record("k-500"));
		assertThat(this.breaker.isOpen()).as("still failing after 1 s: an outage").isTrue();
	}

	@Test
	void aBurstWhoseFailuresComeFirstOnAFreshInstanceNeverOpensIt() {
		// as a freshly started instance saw it: one partition's records first, the
		// failing keys of
		// a burst in long stretches between the turns of the few keys that succeed
		RecordHandler handler = observe(this.breaker,
				(delivery) -> new String(delivery.key(), StandardCharsets.UTF_8).startsWith("failing")
						? HandlerResult.failed(new IllegalStateException("bad deploy")) : HandlerResult.success());
		int failing = 0;
		int clean = 0;
		for (int turn = 0; turn < 40; turn++) {
			for (int i = 0; i < 25 && failing < 1000; i++) {
				handler.handle(record("failing-" + failing++));
				this.clock.advance(1);
			}
			for (int i = 0; i < 32 && clean < 1600; i++) {
				handler.handle(record("clean-" + (clean++ % 8)));
			}
			assertThat(this.breaker.isOpen()).as("after turn " + turn).isFalse();
		}
		this.clock.advance(2000);
		for (int i = 0; i < 100; i++) {
			handler.handle(record("clean-" + (i % 8)));
		}
		assertThat(this.breaker.isOpen()).isFalse();
	}

	@Test
	void halfOpenAfterAHoldWithNothingToProbeTheFirstAttemptDecides() {
		RecordHandler handler = observe(this.breaker, (delivery) -> this.next.get());
		HandlerResult failed = HandlerResult.failed(new IllegalStateException("503"));
		this.next.set(failed);
		for (int i = 0; i < 20; i++) {
			handler.handle(record("k-" + i));
			this.clock.advance(100);
		}
		this.breaker.halfOpen("no record is held to probe with");
		assertThat(this.breaker.isOpen()).isFalse();
		assertThat(this.changes).containsExactly(true, false);
		handler.handle(record("k-1"));
		assertThat(this.breaker.isOpen()).as("one failure is enough: it was down a moment ago").isTrue();
		assertThat(this.breaker.holds(failed)).isTrue();
		assertThat(this.changes).containsExactly(true, false, true);

		this.breaker.halfOpen("no record is held to probe with");
		this.next.set(HandlerResult.success());
		handler.handle(record("k-2"));
		this.next.set(failed);
		for (int i = 0; i < 19; i++) {
			handler.handle(record("k-" + i));
			this.clock.advance(100);
		}
		assertThat(this.breaker.isOpen()).as("a success closed it, and forgot the failures before").isFalse();
		assertThat(this.breaker.timesOpened()).isEqualTo(2);
	}

	@Test
	void anyRecordThatSucceedsWhileItIsOpenClosesIt() {
		RecordHandler handler = observe(this.breaker, (delivery) -> this.next.get());
		this.next.set(HandlerResult.failed(new DependencyUnavailableException("down")));
		handler.handle(record("k-0"));
		assertThat(this.breaker.isOpen()).isTrue();
		this.next.set(HandlerResult.success());
		handler.handle(new Delivery("g.orders.retry.30s", 0, 7, 0L, "k-1".getBytes(StandardCharsets.UTF_8),
				"v".getBytes(StandardCharsets.UTF_8), new RecordHeaders()));
		assertThat(this.breaker.isOpen()).as("a retry that succeeds says the dependency answers").isFalse();
		assertThat(this.changes).containsExactly(true, false);
	}

	@Test
	void recordsHeldBehindAFailureCountWithTheFailuresOnceOneBegan() {
		RecordHandler handler = observe(this.breaker, (delivery) -> this.next.get());
		for (int i = 0; i < 100; i++) {
			this.breaker.followed(record("k-" + (i % 5)));
		}
		assertThat(this.breaker.isOpen()).as("keys held since long ago say nothing about now").isFalse();
		this.next.set(HandlerResult.failed(new IllegalStateException("503")));
		for (int i = 0; i < 5; i++) {
			handler.handle(record("k-" + i)); // every key fails once, and is held from
												// then on
		}
		for (int i = 0; i < 100; i++) {
			this.clock.advance(10);
			this.breaker.followed(record("k-" + (i % 5)));
		}
		assertThat(this.breaker.isOpen()).as("five keys, their later records all held: an outage").isTrue();
	}

	@Test
	void recordsOfKeysHeldSinceBeforeTheEpisodeDoNotCount() {
		// after a restart: a backlog of records whose keys have been in the ladder for a
		// while
		RecordHandler handler = observe(this.breaker, (delivery) -> this.next.get());
		this.next.set(HandlerResult.failed(new IllegalStateException("rule t2")));
		for (int i = 0; i < 5; i++) {
			handler.handle(record("failing-" + i)); // a few of the usual failures start
													// an episode
		}
		for (int i = 0; i < 2000; i++) {
			this.clock.advance(1);
			this.breaker.followed(record("locked-" + (i % 300)));
		}
		assertThat(this.breaker.isOpen()).isFalse();
	}

	@Test
	void oneKeyThatAlwaysFailsNeverOpensIt() {
		RecordHandler handler = observe(this.breaker, (delivery) -> this.next.get());
		this.next.set(HandlerResult.failed(new IllegalStateException("bad key")));
		for (int i = 0; i < 500; i++) {
			handler.handle(record("bad"));
		}
		assertThat(this.breaker.isOpen()).isFalse();
		assertThat(this.changes).isEmpty();
	}

	@Test
	void aTenthOfTheKeysFailingNeverOpensIt() {
		RecordHandler handler = observe(this.breaker, (delivery) -> delivery.businessKey().hashCode() % 10 == 0
				? HandlerResult.failed(new IllegalStateException("some keys fail")) : HandlerResult.success());
		for (int i = 0; i < 5000; i++) {
			handler.handle(record("k-" + (i % 1000)));
		}
		assertThat(this.breaker.isOpen()).isFalse();
	}

	@Test
	void aBurstOfFailingKeysAmongKeysThatSucceedNeverOpensIt() {
		// the failure-burst issue's burst: 1,000 keys failing once among 8 keys sending
		// 200 each
		RecordHandler handler = observe(this.breaker,
				(delivery) -> new String(delivery.key(), StandardCharsets.UTF_8).startsWith("failing")
						? HandlerResult.failed(new IllegalStateException("bad deploy")) : HandlerResult.success());
		int failing = 0;
		for (int clean = 0; clean < 1600; clean++) {
			handler.handle(record("clean-" + (clean % 8)));
			for (; failing < 1000 && failing * 1600 < (clean + 1) * 1000; failing++) {
				handler.handle(record("failing-" + failing));
			}
		}
		assertThat(this.breaker.isOpen()).isFalse();
	}

	@Test
	void anEpisodeThatDidNotOpenItWithinTheWindowStartsOver() {
		RecordHandler handler = observe(this.breaker, (delivery) -> this.next.get());
		this.next.set(HandlerResult.success());
		this.next.set(HandlerResult.failed(new IllegalStateException("503")));
		handler.handle(record("k-0"));
		this.next.set(HandlerResult.success());
		for (int i = 0; i < 1000; i++) {
			handler.handle(record("ok-" + i)); // the success of 1,000 records after the
												// first failure
		}
		this.clock.advance(Duration.ofSeconds(31));
		this.next.set(HandlerResult.failed(new IllegalStateException("503")));
		for (int i = 0; i < 20; i++) {
			handler.handle(record("k-" + i));
			this.clock.advance(100);
		}
		assertThat(this.breaker.isOpen()).as("the successes of an older episode do not hide this outage").isTrue();
	}

	@Test
	void failuresBelowTheRateLeaveItClosedAndPermanentFailuresCountAsAnswers() {
		RecordHandler handler = observe(this.breaker, (delivery) -> this.next.get());
		for (int i = 0; i < 100; i++) {
			this.next.set((i % 10 == 0) ? HandlerResult.failed(new PermanentFailureException("bad record"))
					: HandlerResult.failed(new IllegalStateException("503")));
			handler.handle(record("k-" + i));
			this.clock.advance(100);
		}
		assertThat(this.breaker.isOpen()).as("90 % failed transiently, below 95 %").isFalse();
	}

	@Test
	void aDependencyUnavailableExceptionOpensItAtOnceAndIsHeld() {
		RecordHandler handler = observe(this.breaker, (delivery) -> this.next.get());
		HandlerResult unavailable = HandlerResult
			.failed(new RuntimeException("wrapped", new DependencyUnavailableException("database fails over")));
		this.next.set(unavailable);
		handler.handle(record("k"));
		assertThat(this.breaker.isOpen()).isTrue();
		assertThat(this.breaker.reason()).contains("database fails over");
		assertThat(this.breaker.holds(unavailable)).isTrue();
	}

	@Test
	void resilience4jsCallNotPermittedExceptionOpensItAtOnce() {
		CircuitBreaker userBreaker = CircuitBreaker.ofDefaults("payments");
		userBreaker.transitionToOpenState();
		RecordHandler handler = observe(this.breaker, (delivery) -> {
			try {
				userBreaker.executeRunnable(() -> {
				});
				return HandlerResult.success();
			}
			catch (CallNotPermittedException ex) {
				return HandlerResult.failed(ex);
			}
		});
		HandlerResult result = handler.handle(record("k"));
		assertThat(this.breaker.isOpen()).isTrue();
		assertThat(this.breaker.holds(result)).isTrue();
	}

	@Test
	void whenDisabledNothingOpensItAndNothingIsHeld() {
		OutageBreaker disabled = breaker(new OutageSettings(false, Duration.ofSeconds(1), Duration.ofSeconds(30), 20,
				0.95, 5, Duration.ofSeconds(1), Duration.ofSeconds(30), Duration.ZERO));
		RecordHandler handler = observe(disabled, (delivery) -> this.next.get());
		HandlerResult unavailable = HandlerResult.failed(new DependencyUnavailableException("down"));
		this.next.set(unavailable);
		for (int i = 0; i < 100; i++) {
			handler.handle(record("k-" + i));
			this.clock.advance(100);
		}
		assertThat(disabled.isOpen()).isFalse();
		assertThat(disabled.holds(unavailable)).as("a transient failure like any other").isFalse();
	}

	@Test
	void withTheDefaultsProbesComeEverySecondHoweverManyFailed() {
		for (int failed = 0; failed < 50; failed++) {
			assertThat(this.breaker.nextProbe()).isBetween(Duration.ofMillis(800), Duration.ofSeconds(1));
			this.breaker.probeFailed(new IllegalStateException("503"));
		}
	}

	@Test
	void probesBackOffWithJitterUpToTheLongestIntervalWhenItIsLonger() {
		OutageSettings defaults = OutageSettings.DEFAULTS;
		OutageBreaker backingOff = breaker(new OutageSettings(true, defaults.minimumDuration(), defaults.window(),
				defaults.minimumAttempts(), defaults.failureRate(), defaults.minimumKeys(), Duration.ofSeconds(1),
				Duration.ofSeconds(30), defaults.rampUp()));
		for (int i = 0; i < 20; i++) {
			assertThat(backingOff.nextProbe()).isBetween(Duration.ofMillis(800), Duration.ofSeconds(1));
		}
		backingOff.probeFailed(new IllegalStateException("503"));
		assertThat(backingOff.nextProbe()).isBetween(Duration.ofMillis(1600), Duration.ofSeconds(2));
		for (int i = 0; i < 10; i++) {
			backingOff.probeFailed(new IllegalStateException("503"));
		}
		assertThat(backingOff.nextProbe()).isBetween(Duration.ofSeconds(24), Duration.ofSeconds(30));
	}

	@Test
	void settingsThatCannotWorkTogetherAreRefusedWithTheirName() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new OutageSettings(true, Duration.ofSeconds(30), Duration.ofSeconds(30), 20, 0.95, 5,
					Duration.ofSeconds(1), Duration.ofSeconds(30), Duration.ZERO))
			.withMessageContaining("window must be longer than minimum-duration");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new OutageSettings(true, Duration.ofSeconds(1), Duration.ofSeconds(30), 20, 1.5, 5,
					Duration.ofSeconds(1), Duration.ofSeconds(30), Duration.ZERO))
			.withMessageContaining("failure-rate");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new OutageSettings(true, Duration.ofSeconds(1), Duration.ofSeconds(30), 20, 0.95, 5,
					Duration.ofSeconds(10), Duration.ofSeconds(1), Duration.ZERO))
			.withMessageContaining("max-probe-interval");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new OutageSettings(true, Duration.ofSeconds(1), Duration.ofSeconds(30), 20, 0.95, 21,
					Duration.ofSeconds(1), Duration.ofSeconds(30), Duration.ZERO))
			.withMessageContaining("minimum-keys");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new OutageSettings(true, Duration.ofSeconds(1), Duration.ofSeconds(30), 20, 0.95, 5,
					Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(-1)))
			.withMessageContaining("ramp-up");
	}

	private static RecordHandler observe(OutageBreaker breaker, RecordHandler handler) {
		return breaker.observing(handler, "orders");
	}

	private OutageBreaker breaker(OutageSettings settings) {
		OutageBreaker breaker = new OutageBreaker("orders", settings, new FailureClassifier(List.of()), this.clock);
		breaker.onChange(this.changes::add);
		return breaker;
	}

	private Delivery record(String key) {
		return new Delivery("orders", 0, this.offset++, 0L, key.getBytes(StandardCharsets.UTF_8),
				"v".getBytes(StandardCharsets.UTF_8), new RecordHeaders());
	}

}
