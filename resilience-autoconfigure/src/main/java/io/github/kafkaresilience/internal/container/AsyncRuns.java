package io.github.kafkaresilience.internal.container;

import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.ladder.AsyncRecordHandler;
import io.github.kafkaresilience.ladder.AsyncRecordHandler.Completion;
import io.github.kafkaresilience.internal.ladder.AttemptObservation.Attempt;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.ladder.ReadyRun;
import io.github.kafkaresilience.internal.ladder.StageRouter;
import io.github.kafkaresilience.internal.support.Futures;

/**
 * Runs the records of a listener whose method returns a result that completes later: the
 * method is called on the worker whose turn the record has, which is let go once it
 * returned; the record is {@link RecordState#AWAITING} and its key stays busy until the
 * result completes. The completion, on whatever thread completes the result, only queues
 * the end of the attempt ({@link Task.Completion}), which a worker takes in its turn: the
 * attempt is finished and the rest of the record's step taken there, never on the
 * completing thread.
 * <p>
 * A pending result counts as a handler run under way on its partition
 * ({@link PendingResults}): a revocation lets it complete and its record be committed, up
 * to the shutdown timeout, as it lets a running handler finish; so does stopping the
 * container.
 */
final class AsyncRuns {

	/** What becomes of a record once its result completed. */
	@FunctionalInterface
	interface Outcomes {

		/**
		 * The record's result completed: on a worker, takes the rest of its step.
		 * @param task the record
		 * @param run its run
		 * @param completion finishes the attempt, in the step
		 * @param nanos how long the call and the wait for its result took
		 * @param attempt the observed attempt, to end with the outcome
		 */
		void completed(RecordTask task, ReadyRun run, Completion completion, long nanos, Attempt attempt);

	}

	private final Map<StageRouter, AsyncRecordHandler> handlers;

	private final Workers workers;

	private final Outcomes outcomes;

	/**
	 * The records whose result is pending, until the rest of their step was taken or
	 * given up.
	 */
	private final PendingResults pending;

	AsyncRuns(Map<StageRouter, AsyncRecordHandler> handlers, Workers workers, PendingResults pending,
			Outcomes outcomes) {
		this.handlers = Map.copyOf(handlers);
		this.workers = workers;
		this.pending = pending;
		this.outcomes = outcomes;
	}

	/**
	 * Calls the handler on a record its route let run now, on this worker, and lets the
	 * worker go: the record waits for its result. Nothing runs when the record's
	 * partition is being revoked: its next owner runs it.
	 */
	void start(RecordTask task, ReadyRun run) {
		AsyncRecordHandler handler = this.handlers.get(task.work.route.router());
		if (handler == null) {
			throw new IllegalStateException("No handler for the ladder of " + task.work.partition);
		}
		if (!task.work.runs.begin()) {
			return;
		}
		PendingResults.Pending pending = this.pending.add(1, task.work.runs::end);
		task.work.advance(task, RecordState.AWAITING);
		Attempt attempt = run.startAttempt();
		long started = System.nanoTime();
		CompletableFuture<Completion> result;
		try {
			result = handler.start(run.record());
		}
		catch (RuntimeException | Error ex) {
			result = CompletableFuture.completedFuture(Completion.of(HandlerResult.failed(ex)));
		}
		finally {
			attempt.called();
		}
		result.whenComplete((completion, ex) -> {
			long nanos = System.nanoTime() - started;
			Completion ended = (ex != null) ? Completion.of(HandlerResult.failed(Futures.cause(ex))) : completion;
			this.pending.completed(pending, this.workers, () -> {
				if (!task.work.isRevoked()) {
					this.outcomes.completed(task, run, ended, nanos, attempt);
				}
			});
		});
	}

}
