package io.github.kafkaresilience.ladder;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Runs the user's batch handler on records that may all run now, when the listener method
 * returns a result that completes later (a {@code CompletableFuture}, a
 * {@code CompletionStage}, a {@code Mono}, or a Kotlin {@code suspend} function): the
 * method is called on the calling worker, which is let go as soon as it returned; the
 * batch's outcomes are known when its result completes.
 * <p>
 * What follows a completion (another call on part of a batch that is split to find its
 * failing records, the idempotency claims of the records that succeeded) runs on the
 * {@code worker} executor given, never on the thread that completed the result.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface AsyncBatchHandler {

	/**
	 * Calls the handler on a batch, on the calling thread.
	 * @param records the records, in the order the method gets them; records of one key
	 * (in one partition) come in offset order
	 * @param worker runs what follows a completion on one of the caller's workers; it
	 * rejects work once the caller stops
	 * @return completes with the outcome of each record, as {@link BatchHandler#handle}
	 * gives them; exceptionally only when the batch could not be run at all (every record
	 * then runs again later)
	 */
	CompletableFuture<BatchResult> start(List<Delivery> records, Executor worker);

	/**
	 * A batch handler that returns once done, as one whose result is complete when it
	 * returns.
	 */
	static AsyncBatchHandler of(BatchHandler handler) {
		return (records, worker) -> CompletableFuture.completedFuture(handler.handle(records));
	}

}
