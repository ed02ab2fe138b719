package io.github.kafkaresilience.container;

import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.Step;
import io.github.kafkaresilience.outage.OutageBreaker;

/**
 * How a container holds while its outage breaker is open: the poll thread pauses every
 * partition (no record is taken from the main topic, none from a stage), the workers hold
 * every task that becomes ready (records whose stage comes due wait where they are), and a
 * record whose run fails transiently is held instead of moved into the ladder. Its offset
 * stays pending, so no commit passes it, and its locks stay as they are. Now and then the
 * record held longest runs as a probe; its success closes the breaker, and everything held
 * runs at once, each key's records in their order. The hold is local to the instance: a
 * rebalance or a crash meanwhile leaves held records uncommitted, to be delivered again.
 */
final class OutageHold {

	private final OutageBreaker breaker;

	private final Workers workers;

	private final PauseRequest pauseRequest;

	OutageHold(OutageBreaker breaker, Workers workers, PauseRequest pauseRequest) {
		this.breaker = breaker;
		this.workers = workers;
		this.pauseRequest = pauseRequest;
		breaker.onChange((open) -> {
			if (open) {
				pauseRequest.holdForOutage();
				probeLater();
			}
			else {
				pauseRequest.endOutageHold();
			}
		});
	}

	OutageBreaker breaker() {
		return this.breaker;
	}

	/**
	 * Looks at a record's step after its run: returns true when the record is held (its run
	 * failed for the outage), and closes or keeps the hold when the run was a probe.
	 */
	boolean heldAfter(Task task, Step step) {
		boolean probe = task.probe;
		task.probe = false;
		HandlerResult failure = (step.kind() == Step.Kind.FAILED) ? step.failure() : null;
		if (failure != null && this.breaker.holds(failure)) {
			if (probe) {
				this.breaker.probeFailed(failure.failure());
				probeLater();
			}
			this.workers.holdBack(task);
			return true;
		}
		if (probe) {
			switch (step.kind()) {
				case DONE, SETTLING, FAILED -> this.breaker.close("a probe succeeded on " + task);
				default -> probe(); // it did not reach the handler: another one now
			}
		}
		return false;
	}

	/**
	 * Whether the failure handling of a record whose run failed before the breaker opened is
	 * held instead: once the breaker is open, no record moves into the ladder.
	 */
	boolean holdsFailureHandling(Task task, HandlerResult failure) {
		if (this.breaker.isOpen() && this.breaker.holds(failure)) {
			this.workers.holdBack(task);
			return true;
		}
		return false;
	}

	private void probeLater() {
		this.workers.later(this::probe, this.breaker.nextProbe().toMillis());
	}

	private void probe() {
		if (!this.breaker.isOpen()) {
			return;
		}
		Task task = this.workers.takeHeld();
		if (task == null) {
			this.breaker.halfOpen("no record is held to probe with");
			return;
		}
		this.workers.submitProbe(task);
	}

}
