package io.github.kafkaresilience.ladder;

import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.internal.support.Futures;

/**
 * Runs the user's handler on a record whose listener method returns a result that
 * completes later (a {@code CompletableFuture}, a {@code CompletionStage}, a
 * {@code Mono}, or a Kotlin {@code suspend} function): the method is called on the
 * calling worker, which is let go as soon as it returned; the attempt ends when its
 * result completes.
 * <p>
 * The result completes on any thread (the application's executor, Netty's, Reactor's, the
 * coroutine dispatcher's), with what {@link Completion#finish() finishes} the attempt:
 * the writes an attempt's end needs (an idempotency claim completed or released) are done
 * by {@code finish}, which the caller runs on one of its workers, never on the completing
 * thread.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface AsyncRecordHandler {

	/**
	 * Calls the handler on a record, on the calling thread.
	 * @param delivery the record
	 * @return completes once the attempt's result did: normally, with what finishes the
	 * attempt. A failure to call the method, or a result that completed exceptionally, is
	 * a {@link Completion} that gives the failed {@link HandlerResult}; the future itself
	 * does not complete exceptionally.
	 */
	CompletableFuture<Completion> start(Delivery delivery);

	/** What finishes an attempt once its result completed. */
	@FunctionalInterface
	interface Completion {

		/**
		 * Finishes the attempt on a worker thread, inside the record's step (in
		 * {@code transaction} mode, in its transaction), and says how it went.
		 * @return the attempt's outcome, and the sends of its replies
		 */
		Finished finish();

		/** A completion that gives {@code result} and sends nothing. */
		static Completion of(HandlerResult result) {
			Finished finished = Finished.of(result);
			return () -> finished;
		}

	}

	/**
	 * How an attempt ended.
	 *
	 * @param result the attempt's outcome
	 * @param replies completes once the replies a successful attempt sends (a
	 * {@code @SendTo} method's) were sent: part of the writes of the record's step, which
	 * is not done before they are; complete at once when there are none
	 */
	record Finished(HandlerResult result, CompletableFuture<?> replies) {

		/** An attempt that ended with {@code result} and sends no reply. */
		public static Finished of(HandlerResult result) {
			return new Finished(result, Futures.done());
		}

	}

}
