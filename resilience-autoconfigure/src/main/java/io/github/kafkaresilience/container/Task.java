package io.github.kafkaresilience.container;

import java.util.function.Supplier;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.RetryHeaders;
import io.github.kafkaresilience.ladder.Step;
import io.github.kafkaresilience.lock.Lock;
import io.github.kafkaresilience.lock.OperatorCommand;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * A record to route, or the admission of a replay ({@link #admission} set, no record): both
 * take their turn in their key's queue of their partition. A task may instead be an
 * {@link #action} of the container, which takes its turn among the records whose turn it is
 * and belongs to no partition.
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

	/** An action of the container instead of a record, or {@code null}. */
	final @Nullable Runnable action;

	/**
	 * Whether the record rides in a batch behind an earlier record of its key, which is the
	 * head of the key's queue: it stays queued, and is not handed out when the records before
	 * it are done, until its batch tells its outcome. Under its partition's monitor.
	 */
	boolean riding;

	/** Whether the task runs as the probe of an outage hold: it runs although the workers hold. */
	volatile boolean probe;

	Task(PartitionWork work, Delivery delivery) {
		this.work = work;
		this.delivery = delivery;
		this.key = delivery.businessKey();
		this.admission = null;
		this.lastTaken = -1;
		this.action = null;
	}

	Task(PartitionWork work, Lock pending, long lastTaken) {
		this.work = work;
		this.delivery = null;
		this.key = pending.key();
		this.admission = pending.id();
		this.lastTaken = lastTaken;
		this.action = null;
	}

	@SuppressWarnings("NullAway")
	private Task(Runnable action) {
		this.work = null;
		this.delivery = null;
		this.key = null;
		this.admission = null;
		this.lastTaken = -1;
		this.action = action;
	}

	/** A task that runs an action of the container in the turn of the records queued before it. */
	static Task action(Runnable action) {
		return new Task(action);
	}

	/** Whether the task's partition was revoked; an action's never is. */
	boolean revoked() {
		return this.action == null && this.work.isRevoked();
	}

	@Override
	public String toString() {
		if (this.action != null) {
			return "action " + this.action;
		}
		return (this.admission != null) ? "admission of " + this.admission : String.valueOf(this.delivery);
	}

	/**
	 * Whether an operator's command names this record: the lock its {@code lock.id} header
	 * names, at its stage and offset (docs/PROTOCOL.md, rule 11).
	 */
	boolean isNamedBy(OperatorCommand command) {
		return command.partition() == this.delivery.partition() && command.position().offset() == this.delivery.offset()
				&& command.position().stage() == this.work.route.router().plan().stageOf(this.delivery.topic())
				&& command.lockId().equals(RetryHeaders.text(this.delivery.headers(), RetryHeaders.LOCK_ID));
	}

}
