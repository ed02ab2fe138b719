package io.github.kafkaresilience.container;

import java.util.function.Supplier;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.Step;
import io.github.kafkaresilience.lock.Lock;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * A record to route, or the admission of a replay ({@link #admission} set, no record): both
 * take their turn in their key's queue of their partition.
 */
final class Task {

	final PartitionWork work;

	final Delivery delivery;

	final @Nullable Bytes key;

	/** The pending lock this task admits, or {@code null} for a record. */
	final @Nullable String admission;

	/** For an admission: the last record taken from the partition when its turn was queued. */
	final long lastTaken;

	volatile boolean tailerSynced;

	volatile int failures;

	/**
	 * The rest of the step of a record whose handler just failed, until a worker runs it;
	 * {@code null} otherwise.
	 */
	volatile @Nullable Supplier<Step> rest;

	/** With {@link #rest}: what the handler's failed run gave. */
	volatile @Nullable HandlerResult failed;

	/** Whether the task runs as the probe of an outage hold: it runs although the workers hold. */
	volatile boolean probe;

	Task(PartitionWork work, Delivery delivery) {
		this.work = work;
		this.delivery = delivery;
		this.key = delivery.businessKey();
		this.admission = null;
		this.lastTaken = -1;
	}

	Task(PartitionWork work, Lock pending, long lastTaken) {
		this.work = work;
		this.delivery = null;
		this.key = pending.key();
		this.admission = pending.id();
		this.lastTaken = lastTaken;
	}

	@Override
	public String toString() {
		return (this.admission != null) ? "admission of " + this.admission : String.valueOf(this.delivery);
	}

}
