package io.github.kafkaresilience.internal.container;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.ladder.Step;
import io.github.kafkaresilience.internal.outage.OutageBreaker;

/**
 * How a container holds while its outage breaker is open: the poll thread pauses the main
 * topics' partitions (no record is taken from them), the workers hold every task that
 * becomes ready (retries read from the stages and those that come due wait in memory),
 * and a record whose run fails transiently is held instead of moved into the ladder. Its
 * offset stays pending, so no commit passes it, and its locks stay as they are. Now and
 * then the record held longest that runs its handler runs as a probe; a success closes
 * the breaker, and everything held runs, each key's records in their order, on half the
 * workers for the ramp-up and then on all of them. The hold is local to the instance: a
 * rebalance or a crash meanwhile leaves held records uncommitted, to be delivered again.
 */
final class OutageHold implements RecordHold {

	private final OutageBreaker breaker;

	private final Workers workers;

	private final PauseRequest pauseRequest;

	/** Counts ramps and holds, so that a ramp's end does not end a later one. */
	private final AtomicInteger ramps = new AtomicInteger();

	/** Probes in a row that found nothing held; timer thread only. */
	private int emptyProbes;

	/** The records the container holds in memory, running, waiting or held. */
	private final LongSupplier inFlight;

	OutageHold(OutageBreaker breaker, Workers workers, PauseRequest pauseRequest, LongSupplier inFlight) {
		this.breaker = breaker;
		this.inFlight = inFlight;
		this.workers = workers;
		this.pauseRequest = pauseRequest;
		breaker.onChange((open) -> {
			if (open) {
				endRamp(this.ramps.incrementAndGet());
				pauseRequest.holdForOutage();
				probeLater();
			}
			else {
				rampUp();
				pauseRequest.endOutageHold();
			}
		});
	}

	/**
	 * Whether the listener runs on part of its workers, the breaker having closed less
	 * than the ramp-up ago.
	 */
	boolean rampingUp() {
		return this.workers.limit() < this.workers.concurrency();
	}

	/**
	 * Lets half the workers (at least one) run the records held, until the ramp-up is
	 * over, so that a dependency that just came back is not hit by the whole backlog at
	 * once. Set before the held records are released, so that they start on that many.
	 */
	private void rampUp() {
		long millis = this.breaker.settings().rampUp().toMillis();
		int ramp = this.ramps.incrementAndGet();
		if (millis == 0 || this.workers.concurrency() < 2) {
			return;
		}
		this.workers.limit(this.workers.concurrency() / 2);
		this.workers.later(() -> endRamp(ramp), millis);
	}

	/** Ends a ramp unless a later one (or a hold) has begun since. */
	private void endRamp(int ramp) {
		if (this.ramps.get() == ramp && rampingUp()) {
			this.workers.limit(this.workers.concurrency());
		}
	}

	OutageBreaker breaker() {
		return this.breaker;
	}

	/**
	 * Looks at a record's step after its run: returns true when the record is held (its
	 * run failed for the outage), and closes or keeps the hold when the run was a probe.
	 */
	@Override
	public boolean heldAfter(RecordTask task, Step step) {
		boolean probe = task.state() == RecordState.PROBING;
		HandlerResult failure = (step.kind() == Step.Kind.FAILED) ? step.failure() : null;
		if (failure != null && this.breaker.holds(failure)) {
			if (probe) {
				// the next probe waits longer; holds() is true only for a failure with
				// its throwable
				this.breaker.probeFailed(Objects.requireNonNull(failure.failure()));
			}
			this.workers.holdBack(task);
			return true;
		}
		return false; // a success closed the breaker as it happened
	}

	/**
	 * Puts off the failure handling of a record of the main topic whose run failed
	 * transiently, until the breaker can tell a burst from an outage (see
	 * {@link OutageBreaker#deferral}); returns whether it did. When it is due, the
	 * breaker looks again, and the failure handling runs, or is held if the breaker
	 * opened.
	 */
	@Override
	public boolean defers(RecordTask task, Step step) {
		if (!task.work.route.router().plan().mainTopic().equals(task.delivery.topic())) {
			return false;
		}
		long delay = this.breaker.deferral(step.failure());
		if (delay < 0) {
			return false;
		}
		this.workers.later(() -> {
			this.breaker.evaluate();
			this.workers.submitFailure(task);
		}, delay);
		return true;
	}

	/**
	 * Whether the failure handling of a record whose run failed before the breaker opened
	 * is held instead: once the breaker is open, no record moves into the ladder.
	 */
	@Override
	public boolean holdsFailureHandling(RecordTask task, HandlerResult failure) {
		if (this.breaker.isOpen() && this.breaker.holds(failure)) {
			this.workers.holdBack(task);
			return true;
		}
		return false;
	}

	private void probeLater() {
		this.workers.later(this::probe, this.breaker.nextProbe().toMillis());
	}

	/**
	 * Runs the record held longest that runs its handler, and schedules the next probe,
	 * whatever this one's outcome (its route may fail, or end without running the
	 * handler): the probes go on until the breaker closes. When no record at all has been
	 * in flight for two probes in a row (a rebalance gave the held records' partitions
	 * away), the breaker half opens.
	 */
	private void probe() {
		if (!this.breaker.isOpen()) {
			this.emptyProbes = 0;
			return;
		}
		KeyedTask task = this.workers.holds().take(OutageHold::runsItsHandler);
		if (task != null) {
			this.emptyProbes = 0;
			this.workers.submitProbe(task);
		}
		else if (this.inFlight.getAsLong() > 0) {
			// records of held keys, or retries not due yet: those come to be held in time
			this.emptyProbes = 0;
		}
		else if (++this.emptyProbes >= 2) {
			this.emptyProbes = 0;
			this.breaker.halfOpen("no record has been in flight to probe with for two probes");
			return;
		}
		probeLater();
	}

	/**
	 * Whether a held record runs the handler when routed, and so can tell whether the
	 * dependency is back: a retry, or a record of the main topic whose key is not in the
	 * ladder. Another record of the main topic would follow its key into the ladder, a
	 * move that the hold is there to spare.
	 */
	private static boolean runsItsHandler(KeyedTask held) {
		if (!(held instanceof RecordTask task)) {
			return false;
		}
		RetryContainer.Route route = task.work.route;
		return !route.router().plan().mainTopic().equals(task.delivery.topic()) || task.key == null
				|| route.registry().locksOf(task.key).isEmpty();
	}

}
