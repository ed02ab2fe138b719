package io.github.kafkaresilience.internal.listener;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.kafkaresilience.AttemptTimeoutException;
import io.github.kafkaresilience.idempotency.Claim;
import io.github.kafkaresilience.internal.idempotency.IdempotencyGuard;
import io.github.kafkaresilience.idempotency.IdempotencyKeyResolver;
import io.github.kafkaresilience.idempotency.IdempotencyObserver;
import io.github.kafkaresilience.idempotency.InMemoryIdempotencyStore;
import io.github.kafkaresilience.ladder.AsyncRecordHandler.Completion;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A listener method whose result completes later, invoked record by record: the attempt
 * ends with the result, and the idempotency claim is completed or released only then.
 */
class AsyncHandlerInvokerTests {

	private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();

	private final Listener listener = new Listener();

	@Test
	void theAttemptEndsWhenTheResultCompletesAndAnExceptionalOneIsItsFailure() throws Exception {
		HandlerInvoker invoker = invoker(null, Duration.ofSeconds(30));
		CompletableFuture<Completion> ok = invoker.start(delivery(1, "a"));
		CompletableFuture<Completion> bad = invoker.start(delivery(2, "b"));
		assertThat(ok).as("pending until the method's result completes").isNotDone();
		this.listener.results.get(0).complete("done");
		this.listener.results.get(1).completeExceptionally(new IllegalStateException("b failed later"));
		assertThat(finish(ok)).isEqualTo(HandlerResult.success());
		HandlerResult failed = finish(bad);
		assertThat(failed.outcome()).isEqualTo(HandlerResult.Outcome.FAILURE);
		assertThat(failed.failure()).isInstanceOf(IllegalStateException.class).hasMessage("b failed later");
	}

	@Test
	void anExceptionThrownBeforeTheResultExistsFailsTheAttemptAlike() throws Exception {
		HandlerInvoker invoker = invoker(null, Duration.ofSeconds(30));
		HandlerResult result = finish(invoker.start(delivery(1, "throw")));
		assertThat(result.outcome()).isEqualTo(HandlerResult.Outcome.FAILURE);
		assertThat(result.failure()).isInstanceOf(IllegalArgumentException.class).hasMessage("no result for throw");
	}

	@Test
	void aResultThatNeverCompletesFailsAfterTheAttemptTimeoutAndIsCancelled() throws Exception {
		HandlerInvoker invoker = invoker(null, Duration.ofMillis(200));
		CompletableFuture<Completion> started = invoker.start(delivery(7, "a"));
		HandlerResult result = finish(started);
		assertThat(result.failure()).isInstanceOf(AttemptTimeoutException.class)
			.hasMessageContaining("orders-0@7")
			.hasMessageContaining("did not complete within the attempt timeout of PT0.2S");
		assertThat(this.listener.results.get(0)).isCancelled();
	}

	@Test
	void theIdempotencyClaimIsHeldWhileTheResultIsPendingCompletedWithItsSuccessAndReleasedWithItsFailure()
			throws Exception {
		IdempotencyGuard guard = new IdempotencyGuard("orders-listener", this.store,
				IdempotencyKeyResolver.birthplace("orders"), Duration.ofMinutes(5), null, IdempotencyObserver.NONE);
		HandlerInvoker invoker = invoker(guard, Duration.ofSeconds(30));
		CompletableFuture<Completion> ok = invoker.start(delivery(1, "a"));
		CompletableFuture<Completion> bad = invoker.start(delivery(2, "b"));
		assertThat(statusOf(1)).as("claimed while pending").isEqualTo(Claim.Status.HELD);
		this.listener.results.get(0).complete("done");
		this.listener.results.get(1).completeExceptionally(new IllegalStateException("b failed later"));
		assertThat(finish(ok)).isEqualTo(HandlerResult.success());
		assertThat(finish(bad).outcome()).isEqualTo(HandlerResult.Outcome.FAILURE);
		assertThat(statusOf(1)).as("completed with its success").isEqualTo(Claim.Status.COMPLETED);
		assertThat(statusOf(2)).as("released with its failure: the next attempt claims it")
			.isEqualTo(Claim.Status.CLAIMED);
		assertThat(finish(invoker.start(delivery(1, "a")))).as("a completed key runs no more")
			.isEqualTo(HandlerResult.success());
		assertThat(this.listener.results).hasSize(2);
	}

	private Claim.Status statusOf(long offset) {
		Claim claim = this.store.claim("orders-listener", "orders/0/" + offset, Duration.ofMinutes(5));
		if (claim.status() == Claim.Status.CLAIMED) {
			this.store.release(claim);
		}
		return claim.status();
	}

	private static HandlerResult finish(CompletableFuture<Completion> started) throws Exception {
		await().atMost(Duration.ofSeconds(10)).until(started::isDone);
		return started.get(1, TimeUnit.SECONDS).finish().result();
	}

	private HandlerInvoker invoker(@Nullable IdempotencyGuard guard, Duration attemptTimeout) {
		Method handler = ReflectionUtils.findMethod(Listener.class, "onValue", String.class);
		ListenerEndpoint endpoint = new ListenerEndpoint("orders-listener", "orders-group", List.of("orders"), null,
				null, null, null, null, this.listener, handler);
		return new HandlerInvoker(endpoint, "orders", ListenerMessaging.defaults(), new StringDeserializer(),
				new StringDeserializer(), guard, attemptTimeout);
	}

	private static Delivery delivery(long offset, String value) {
		return new Delivery("orders", 0, offset, 1L, "k".getBytes(StandardCharsets.UTF_8),
				value.getBytes(StandardCharsets.UTF_8), new RecordHeaders());
	}

	static class Listener {

		final List<CompletableFuture<String>> results = new ArrayList<>();

		CompletableFuture<String> onValue(String value) {
			if (value.equals("throw")) {
				throw new IllegalArgumentException("no result for throw");
			}
			CompletableFuture<String> result = new CompletableFuture<>();
			this.results.add(result);
			return result;
		}

	}

}
