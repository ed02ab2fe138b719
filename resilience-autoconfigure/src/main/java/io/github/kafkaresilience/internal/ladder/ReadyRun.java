package io.github.kafkaresilience.internal.ladder;

import java.util.function.Supplier;

import io.github.kafkaresilience.internal.ladder.AttemptObservation.Attempt;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;

/**
 * A record the rules let run now, in a listener that runs its records itself
 * ({@link StageRouter.Builder#batchRuns(boolean)}): the caller runs the handler on it, in
 * a batch together with other ready records or alone with a result that completes later,
 * then tells the outcome with {@link #ran}, which takes the rest of the record's step. A
 * record the batch did not get to is routed again from the start, without an attempt
 * counted.
 * <p>
 * The record's attempt is observed in its own trace once its outcome is known, so that
 * the sends that carry it on continue that trace; the time the call took is observed once
 * for the batch.
 *
 * @since 0.1.0
 */
public final class ReadyRun {

	private final StageRouter router;

	private final Delivery record;

	private final Decision.Run run;

	private final boolean deferFailures;

	ReadyRun(StageRouter router, Delivery record, Decision.Run run, boolean deferFailures) {
		this.router = router;
		this.record = record;
		this.run = run;
		this.deferFailures = deferFailures;
	}

	/** The record to run. */
	public Delivery record() {
		return this.record;
	}

	Decision.Run run() {
		return this.run;
	}

	boolean defersFailures() {
		return this.deferFailures;
	}

	/** The stage the record was read from, 0 for the main topic. */
	public int stage() {
		return this.run.stage();
	}

	/**
	 * The handler ran on the record: takes the rest of its step, as
	 * {@link StageRouter#route(Delivery, boolean, boolean)} takes it after running the
	 * handler on a single record. Call it with the lock view and, in {@code transaction}
	 * mode, inside the step's transaction, as the route that returned this run was.
	 * @param result the record's outcome
	 * @param nanos the record's share of the batch call's time
	 * @return what to do with the record next
	 */
	public Step ran(HandlerResult result, long nanos) {
		return ran(result, nanos, AttemptObservation.Batch.NONE);
	}

	/**
	 * As {@link #ran(HandlerResult, long)}, for a record that ran in an observed batch.
	 * @param batch the batch the record ran in: its attempt carries the batch's id
	 */
	public Step ran(HandlerResult result, long nanos, AttemptObservation.Batch batch) {
		Attempt attempt = this.router.attempted(this.record, this.run.stage(), result, nanos, batch);
		return rest(result, attempt);
	}

	/**
	 * Starts the record's attempt before its handler is called on it alone, for a handler
	 * whose result completes later: the attempt is the calling thread's current
	 * observation until {@link Attempt#called()}, and is observed until
	 * {@link #ran(HandlerResult, long, Attempt)} ends it, so that it spans the call and
	 * the wait for its result.
	 * @return the attempt, to pass to {@link #ran(HandlerResult, long, Attempt)}
	 */
	public Attempt startAttempt() {
		return this.router.startAttempt(this.record, this.run.stage());
	}

	/**
	 * As {@link #ran(HandlerResult, long)}, for a record whose attempt was started with
	 * {@link #startAttempt()}: ends that attempt with the record's outcome.
	 * @param attempt the attempt {@link #startAttempt()} gave
	 */
	public Step ran(HandlerResult result, long nanos, Attempt attempt) {
		this.router.ended(attempt, this.run.stage(), result, nanos);
		return rest(result, attempt);
	}

	private Step rest(HandlerResult result, Attempt attempt) {
		Supplier<Step> rest = () -> this.router.afterRun(this.record, this.run, result, attempt);
		boolean failed = result.outcome() != HandlerResult.Outcome.SUCCESS;
		return (this.deferFailures && failed) ? Step.failed(result, rest) : rest.get();
	}

	@Override
	public String toString() {
		return "ready " + this.record;
	}

}
