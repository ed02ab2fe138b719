package io.github.kafkaresilience.internal.container;

import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * A task that takes its turn in its key's queue of its partition: a record, or the
 * admission of a replay. Besides its kind's state, it keeps how its routing has gone so
 * far: how many times in a row it failed (for the backoff) and whether the lock tailer
 * has caught up with its lock partition since it was taken or last failed.
 */
abstract sealed class KeyedTask implements Task permits RecordTask, AdmissionTask {

	final PartitionWork work;

	final @Nullable Bytes key;

	private volatile Routing routing = Routing.FIRST;

	KeyedTask(PartitionWork work, @Nullable Bytes key) {
		this.work = work;
		this.key = key;
	}

	@Override
	public boolean revoked() {
		return this.work.isRevoked();
	}

	/**
	 * Whether the lock tailer has caught up with the task's lock partition since it was
	 * taken or its routing last failed: a lock it names that is still unknown was
	 * released.
	 */
	final boolean tailerSynced() {
		return this.routing.tailerSynced();
	}

	/** How many times in a row the task's routing failed. */
	final int failures() {
		return this.routing.failures();
	}

	/** The tailer caught up with the task's lock partition. */
	final void caughtUp() {
		this.routing = new Routing(this.routing.failures(), true);
	}

	/**
	 * The task's routing (or the tailer's catching up for it) failed: a write it reported
	 * failed may have landed, so the tailer must catch up again. Returns the failures in
	 * a row.
	 */
	final int countFailure() {
		Routing failed = new Routing(this.routing.failures() + 1, false);
		this.routing = failed;
		return failed.failures();
	}

	/** A step was taken: the failures in a row start again from none. */
	final void stepTaken() {
		Routing routing = this.routing;
		if (routing.failures() != 0) {
			this.routing = new Routing(0, routing.tailerSynced());
		}
	}

	/** How a task's routing has gone: replaced whole, never changed. */
	private record Routing(int failures, boolean tailerSynced) {

		static final Routing FIRST = new Routing(0, false);

	}

}
