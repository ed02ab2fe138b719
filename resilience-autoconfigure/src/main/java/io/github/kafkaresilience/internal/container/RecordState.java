package io.github.kafkaresilience.internal.container;

import java.util.EnumSet;
import java.util.Set;

/**
 * Where a record taken from a partition is in its life. A record task is created
 * {@link #QUEUED}; its state changes only through its partition's {@link PartitionWork},
 * along the transitions {@link #next()} lists (docs/ARCHITECTURE.md, "A record's life",
 * lists them too, and a test holds the two together).
 */
enum RecordState {

	/** Taken: waits for its key's turn, or for a worker. */
	QUEUED,

	/** A worker routes it (and runs its handler), or its batch runs it. */
	RUNNING,

	/** Runs as the probe of an outage hold, although the workers hold. */
	PROBING,

	/**
	 * Its handler was called and returned a result that completes later: no worker holds
	 * it, and its key waits until the result completes and a worker takes the rest of its
	 * step.
	 */
	AWAITING,

	/**
	 * Right behind the head of its key, rides in the head's batch (docs/PROTOCOL.md, rule
	 * 10): no one but its batch hands it out.
	 */
	RIDING,

	/**
	 * Its handler failed: the rest of its step (what the failure means, and its writes)
	 * waits for a worker's failure turn, or for its key's turn when it rode.
	 */
	FAILURE_PENDING,

	/**
	 * The writes of its step (a move into the ladder, a lock's release) are under way;
	 * its key waits.
	 */
	SETTLING,

	/**
	 * Waits in memory: for its due time, for its key, for the lock tailer, or for a
	 * backoff.
	 */
	WAITING,

	/**
	 * Held by the workers' holders (the application's pause, an outage hold) until they
	 * release it.
	 */
	HELD,

	/**
	 * Let go with its offset pending, to be read again from the log when it comes due.
	 */
	PARKED,

	/**
	 * Can go nowhere until a setting is raised: its partition stopped at it, uncommitted.
	 */
	STOPPED,

	/** Done: its offset may be committed. */
	DONE;

	/** The states a record may go to from this one. */
	Set<RecordState> next() {
		return switch (this) {
			case QUEUED -> EnumSet.of(RUNNING, HELD, RIDING, PARKED);
			case RUNNING, PROBING ->
				EnumSet.of(AWAITING, DONE, SETTLING, WAITING, PARKED, FAILURE_PENDING, HELD, QUEUED, STOPPED);
			case RIDING, AWAITING ->
				EnumSet.of(DONE, SETTLING, WAITING, PARKED, FAILURE_PENDING, HELD, QUEUED, STOPPED);
			case FAILURE_PENDING -> EnumSet.of(RUNNING);
			case SETTLING -> EnumSet.of(DONE, QUEUED, WAITING, STOPPED);
			case WAITING -> EnumSet.of(QUEUED);
			case HELD -> EnumSet.of(QUEUED, PROBING);
			case PARKED, STOPPED, DONE -> EnumSet.noneOf(RecordState.class);
		};
	}

}
