package io.github.kafkaresilience.internal.listener;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.support.Futures;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

import org.springframework.core.KotlinDetector;
import org.springframework.kafka.listener.adapter.AdapterUtils;
import org.springframework.util.ClassUtils;

/**
 * The results of listener methods that complete later, as spring-kafka takes them from a
 * {@code @KafkaListener} method: a {@link CompletableFuture} or any
 * {@link CompletionStage}, a {@link Mono} when Reactor is on the class path, and a Kotlin
 * {@code suspend} function, which spring-kafka's handler-method factory invokes as a
 * {@code Mono}.
 */
final class AsyncResults {

	private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
			AsyncResults.class.getClassLoader());

	private AsyncResults() {
	}

	/** Whether a listener method's result completes later. */
	static boolean isAsync(Method method) {
		Class<?> returned = method.getReturnType();
		return CompletionStage.class.isAssignableFrom(returned) || AdapterUtils.isMono(returned)
				|| KotlinDetector.isSuspendingFunction(method);
	}

	/**
	 * The value a listener method returned as a future.
	 * @param returned what the method returned
	 * @param description names the method in a failure
	 * @return a future that completes as the result does; it may be cancelled, which
	 * cancels a {@code Mono}'s subscription and a {@code CompletableFuture} the method
	 * returned
	 */
	static CompletableFuture<?> toFuture(@Nullable Object returned, String description) {
		if (returned instanceof CompletableFuture<?> future) {
			return future;
		}
		if (returned instanceof CompletionStage<?> stage) {
			return stage.toCompletableFuture();
		}
		if (REACTOR_PRESENT && returned != null && ReactorResults.isPublisher(returned)) {
			return ReactorResults.toFuture(returned);
		}
		return CompletableFuture.failedFuture(new IllegalStateException("Listener method " + description + " returned "
				+ ((returned != null) ? returned.getClass().getName() : "null")
				+ " instead of a result that completes later"));
	}

	/**
	 * The outcome of a result that completes later, waited for up to {@code timeout}.
	 * @param result the method's result, as {@link #toFuture} gives it
	 * @param timeout how long it is waited for; when it runs out, the result is cancelled
	 * @param completed the outcome of the result: its value, or the cause of its failure
	 * @param timedOut the outcome of a result that did not complete in time
	 * @return completes with the outcome, never exceptionally
	 */
	static <T> CompletableFuture<T> outcome(CompletableFuture<?> result, Duration timeout,
			BiFunction<@Nullable Object, @Nullable Throwable, T> completed, Supplier<T> timedOut) {
		CompletableFuture<T> outcome = new CompletableFuture<>();
		result.whenComplete(
				(value, ex) -> outcome.complete(completed.apply(value, (ex != null) ? Futures.cause(ex) : null)));
		if (outcome.isDone()) {
			return outcome;
		}
		return outcome.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).exceptionally((ex) -> {
			result.cancel(true);
			return timedOut.get();
		});
	}

	/** Holds the Reactor types away from a class path without Reactor. */
	private static final class ReactorResults {

		static boolean isPublisher(@Nullable Object returned) {
			return returned instanceof Publisher<?>;
		}

		static CompletableFuture<?> toFuture(Object publisher) {
			return Mono.from((Publisher<?>) publisher).toFuture();
		}

	}

}
