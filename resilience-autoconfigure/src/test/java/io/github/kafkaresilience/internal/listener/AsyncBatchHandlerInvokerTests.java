package io.github.kafkaresilience.internal.listener;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;

import io.github.kafkaresilience.AttemptTimeoutException;
import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.idempotency.Claim;
import io.github.kafkaresilience.internal.idempotency.IdempotencyGuard;
import io.github.kafkaresilience.idempotency.IdempotencyKeyResolver;
import io.github.kafkaresilience.idempotency.IdempotencyObserver;
import io.github.kafkaresilience.idempotency.InMemoryIdempotencyStore;
import io.github.kafkaresilience.ladder.BatchResult;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult.Outcome;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A batch listener method whose result completes later, without a broker: the batch's
 * outcomes follow how its result completed, by the rules of a batch method that returns
 * once done, and what follows a completion runs on the caller's worker.
 */
class AsyncBatchHandlerInvokerTests {

	private final Listener listener = new Listener();

	private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();

	/**
	 * The caller's worker: runs what it is given when the test says so, and counts it.
	 */
	private final Worker worker = new Worker();

	@Test
	void theBatchIsPendingUntilItsResultCompletesAndThenEveryRecordSucceeded() {
		CompletableFuture<BatchResult> ran = invoker("onFuture").start(deliveries("v10", "v11", "v12"), this.worker);

		assertThat(this.listener.calls).as("called on the calling thread")
			.containsExactly(List.of("v10", "v11", "v12"));
		assertThat(ran).isNotDone();
		this.listener.results.get(0).complete(null);
		assertThat(ran).as("taken on by the worker, not the completing thread").isNotDone();
		this.worker.runAll();

		assertThat(outcomes(ran.join())).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS, Outcome.SUCCESS);
	}

	@Test
	void aResultThatFailsNamingARecordFailsItWithItsCauseAndTheRecordsAfterItDoNotRun() {
		CompletableFuture<BatchResult> ran = invoker("onFuture").start(deliveries("v10", "v11", "v12"), this.worker);

		this.listener.results.get(0)
			.completeExceptionally(new BatchListenerFailedException("v11 refused", new IllegalStateException("no"), 1));
		this.worker.runAll();

		BatchResult result = ran.join();
		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.FAILURE, null);
		assertThat(result.results().get(1).failure()).isInstanceOf(IllegalStateException.class).hasMessage("no");
		assertThat(this.listener.calls).hasSize(1);
	}

	@Test
	void aResultThatFailsAsAWholeIsBisectedWithEachHalfCalledOnTheWorker() {
		this.listener.complete = (values) -> values.contains("bad")
				? CompletableFuture.failedFuture(new IllegalStateException("cannot take " + values))
				: CompletableFuture.completedFuture(null);

		CompletableFuture<BatchResult> ran = invoker("onFuture").start(deliveries("v10", "bad", "v12", "v13"),
				this.worker);
		assertThat(this.listener.calls).as("the halves wait for the worker").hasSize(1);
		this.worker.runAll();

		BatchResult result = ran.join();
		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.FAILURE, Outcome.SUCCESS,
				Outcome.SUCCESS);
		assertThat(result.results().get(1).failure()).hasMessage("cannot take [bad]");
		assertThat(result.bisections()).isEqualTo(2);
		assertThat(this.listener.calls).containsExactly(List.of("v10", "bad", "v12", "v13"), List.of("v10", "bad"),
				List.of("v10"), List.of("bad"), List.of("v12", "v13"));
		assertThat(this.listener.threads).as("every call after the first made on the worker")
			.containsOnly(Thread.currentThread().getName());
		assertThat(this.worker.ran).isGreaterThanOrEqualTo(4);
	}

	@Test
	void aMonoIsTakenAsAFutureAndAFailureOfEveryCallIsBisectedToSingleRecords() {
		this.listener.monoFailure = new IllegalStateException("down");

		CompletableFuture<BatchResult> ran = invoker("onMono").start(deliveries("v10", "v11"), this.worker);

		assertThat(outcomes(drain(ran))).as("bisected to single records, each failing")
			.containsExactly(Outcome.FAILURE, Outcome.FAILURE);
		assertThat(this.listener.calls).containsExactly(List.of("v10", "v11"), List.of("v10"), List.of("v11"));
	}

	@Test
	void aResultNotCompleteWithinTheAttemptTimeoutIsCancelledAndFailsEveryRecordOfTheCallWithoutASplit() {
		CompletableFuture<BatchResult> ran = invoker("onFuture", Duration.ofMillis(50))
			.start(deliveries("v10", "v11", "v12"), this.worker);

		BatchResult result = drain(ran);
		assertThat(outcomes(result)).containsExactly(Outcome.FAILURE, Outcome.FAILURE, Outcome.FAILURE);
		assertThat(result.results().get(0).failure()).isInstanceOf(AttemptTimeoutException.class)
			.hasMessageContaining("did not complete within the attempt timeout of PT0.05S");
		assertThat(this.listener.results.get(0)).isCancelled();
		assertThat(this.listener.calls).hasSize(1);
	}

	@Test
	void theClaimsOfTheRecordsThatSucceededAreCompletedOnTheWorkerAndTheOthersReleased() {
		CompletableFuture<BatchResult> ran = guarded("onFuture").start(deliveries("v10", "v11", "v12"), this.worker);

		assertThat(claim(10)).as("claimed while the result is pending").isEqualTo(Claim.Status.HELD);
		this.listener.results.get(0)
			.completeExceptionally(new BatchListenerFailedException("v11 refused", new IllegalStateException("no"), 1));
		assertThat(claim(10)).as("not completed on the completing thread").isEqualTo(Claim.Status.HELD);
		this.worker.runAll();

		assertThat(outcomes(ran.join())).containsExactly(Outcome.SUCCESS, Outcome.FAILURE, null);
		assertThat(claim(10)).isEqualTo(Claim.Status.COMPLETED);
		assertThat(claim(11)).as("released, so claimed anew").isEqualTo(Claim.Status.CLAIMED);
		assertThat(claim(12)).as("released, so claimed anew").isEqualTo(Claim.Status.CLAIMED);
	}

	@Test
	void whenTheWorkerStoppedNoRecordRanAndTheirClaimsAreReleased() {
		CompletableFuture<BatchResult> ran = guarded("onFuture").start(deliveries("v10", "v11"), this.worker);

		this.worker.stopped = true;
		this.listener.results.get(0).complete(null);

		assertThat(outcomes(ran.join())).containsExactly(null, null);
		assertThat(claim(10)).as("released, so claimed anew").isEqualTo(Claim.Status.CLAIMED);
	}

	/** What another attempt finds when it claims the record at {@code offset}. */
	private Claim.Status claim(int offset) {
		return this.store.claim("orders-listener", "orders/0/" + offset, Duration.ofMinutes(5)).status();
	}

	/**
	 * Lets the worker run what comes, as results complete, until the batch's outcomes are
	 * known.
	 */
	private BatchResult drain(CompletableFuture<BatchResult> ran) {
		await().until(() -> {
			this.worker.runAll();
			return ran.isDone();
		});
		return ran.join();
	}

	private BatchHandlerInvoker invoker(String method) {
		return invoker(method, Duration.ofMinutes(1));
	}

	private BatchHandlerInvoker invoker(String method, Duration timeout) {
		return invoker(method, null, timeout);
	}

	private BatchHandlerInvoker guarded(String method) {
		IdempotencyGuard guard = new IdempotencyGuard("orders-listener", this.store,
				IdempotencyKeyResolver.birthplace("orders"), Duration.ofMinutes(5), null, IdempotencyObserver.NONE);
		return invoker(method, guard, Duration.ofMinutes(1));
	}

	private BatchHandlerInvoker invoker(String method, @Nullable IdempotencyGuard guard, Duration timeout) {
		Method handler = ReflectionUtils.findMethod(Listener.class, method, (Class<?>[]) null);
		ListenerEndpoint endpoint = new ListenerEndpoint("orders-listener", "orders-group", List.of("orders"), null,
				null, null, null, null, true, this.listener, handler, null, Map.of(), true, null);
		return new BatchHandlerInvoker(endpoint,
				new RecordReader("orders", new StringDeserializer(), new StringDeserializer()),
				ListenerMessaging.defaults(), guard, BatchSettings.Failure.BISECT, timeout);
	}

	private static List<@Nullable Outcome> outcomes(BatchResult result) {
		return result.results().stream().map((handled) -> (handled != null) ? handled.outcome() : null).toList();
	}

	/** Records of partition 0 from offset 10 on, keyed k10, k11, ... */
	private static List<Delivery> deliveries(String... values) {
		List<Delivery> deliveries = new ArrayList<>();
		for (int i = 0; i < values.length; i++) {
			deliveries
				.add(new Delivery("orders", 0, 10 + i, 1L, utf8("k" + (10 + i)), utf8(values[i]), new RecordHeaders()));
		}
		return deliveries;
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/** Runs the tasks it was given on the test's thread, when told to. */
	static final class Worker implements Executor {

		private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();

		volatile boolean stopped;

		int ran;

		@Override
		public void execute(Runnable task) {
			if (this.stopped) {
				throw new RejectedExecutionException("stopped");
			}
			this.tasks.add(task);
		}

		void runAll() {
			Runnable task;
			while ((task = this.tasks.poll()) != null) {
				this.ran++;
				task.run();
			}
		}

	}

	static class Listener {

		final List<List<String>> calls = new ArrayList<>();

		final List<String> threads = new ArrayList<>();

		final List<CompletableFuture<@Nullable Void>> results = new ArrayList<>();

		/** The result of each call; by default one the test completes. */
		@Nullable Function<List<String>, CompletableFuture<@Nullable Void>> complete;

		@Nullable RuntimeException monoFailure;

		CompletableFuture<@Nullable Void> onFuture(List<String> values) {
			this.calls.add(List.copyOf(values));
			this.threads.add(Thread.currentThread().getName());
			CompletableFuture<@Nullable Void> result = (this.complete != null) ? this.complete.apply(values)
					: new CompletableFuture<>();
			this.results.add(result);
			return result;
		}

		Mono<Void> onMono(List<String> values) {
			this.calls.add(List.copyOf(values));
			RuntimeException failure = this.monoFailure;
			return (failure != null) ? Mono.delay(Duration.ofMillis(10)).then(Mono.error(failure))
					: Mono.delay(Duration.ofMillis(10)).then();
		}

	}

}
