package io.github.kafkaresilience.internal.container;

import io.github.kafkaresilience.internal.lock.Lock;

/**
 * The admission of a replayed dead letter's pending lock (docs/PROTOCOL.md, rule 2.0), in
 * its key's turn behind the records of its key taken from the partition so far.
 */
final class AdmissionTask extends KeyedTask {

	/** The pending lock this task admits. */
	final String lockId;

	/** The last record taken from the partition when its turn was queued. */
	final long lastTaken;

	AdmissionTask(PartitionWork work, Lock pending, long lastTaken) {
		super(work, pending.key());
		this.lockId = pending.id();
		this.lastTaken = lastTaken;
	}

	@Override
	public String toString() {
		return "admission of " + this.lockId;
	}

}
