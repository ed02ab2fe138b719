package io.github.kafkaresilience.internal.support;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;

/**
 * The few ways the library chains the steps of a write that it does not wait for.
 *
 * @since 0.1.0
 */
public final class Futures {

	private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

	private Futures() {
	}

	/** A future that is already complete, without a value. */
	public static CompletableFuture<Void> done() {
		return DONE;
	}

	/**
	 * Runs an awaited write as a future: complete when it returned, failed when it threw
	 * a {@link RuntimeException}. An {@link Error} is thrown on.
	 */
	public static CompletableFuture<Void> of(Runnable write) {
		try {
			write.run();
			return DONE;
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Calls a step that starts a write: its future, or a failed one when starting it
	 * threw a {@link RuntimeException}.
	 */
	public static <T> CompletableFuture<T> call(Supplier<CompletableFuture<T>> step) {
		try {
			return step.get();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/** The failure a future completed with, without the wrapper that chaining adds. */
	public static Throwable cause(Throwable ex) {
		Throwable current = ex;
		while ((current instanceof CompletionException || current instanceof ExecutionException)
				&& current.getCause() != null) {
			current = current.getCause();
		}
		return current;
	}

	/**
	 * Waits for a future that is done and returns normally when it succeeded; throws its
	 * failure as it was thrown (a {@link RuntimeException} or an {@link Error}) when it
	 * failed.
	 */
	public static void rethrowIfFailed(CompletableFuture<?> done) {
		if (!done.isCompletedExceptionally()) {
			return;
		}
		try {
			done.join();
		}
		catch (CompletionException | CancellationException ex) {
			Throwable cause = cause(ex);
			if (cause instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw new IllegalStateException(cause);
		}
	}

}
