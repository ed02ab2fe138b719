package io.github.kafkaresilience.internal.container;

import java.util.function.Supplier;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.ladder.Step;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import org.jspecify.annotations.Nullable;

/**
 * A record taken from a partition, in its {@link RecordState}. Only its partition's
 * {@link PartitionWork} changes the state.
 */
final class RecordTask extends KeyedTask {

	final Delivery delivery;

	private volatile RecordState state = RecordState.QUEUED;

	/**
	 * While {@link RecordState#FAILURE_PENDING}: what the failed run gave and the rest of
	 * its step.
	 */
	private volatile @Nullable PendingFailure failure;

	/** Its tenant, or the empty string when the listener's records have none. */
	private final String tenant;

	RecordTask(PartitionWork work, Delivery delivery) {
		super(work, delivery.businessKey());
		this.delivery = delivery;
		this.tenant = work.tenantOf(delivery);
	}

	String tenant() {
		return this.tenant;
	}

	RecordState state() {
		return this.state;
	}

	/** Moves the record to {@code next}, as its partition's work says. */
	void become(RecordState next) {
		assert this.state.next().contains(next) : this + " may not go from " + this.state + " to " + next;
		this.state = next;
	}

	/**
	 * Moves the record to {@link RecordState#FAILURE_PENDING} with what its failed run
	 * gave.
	 */
	void failWith(PendingFailure failure) {
		this.failure = failure;
		become(RecordState.FAILURE_PENDING);
	}

	/**
	 * Starts a run of the record: returns the rest of the step its failed run left, or
	 * {@code null} when it is routed afresh. A probe stays {@link RecordState#PROBING}
	 * while it runs.
	 */
	@Nullable PendingFailure startRun() {
		RecordState state = this.state;
		if (state == RecordState.PROBING || state == RecordState.RUNNING) {
			return null;
		}
		PendingFailure failure = (state == RecordState.FAILURE_PENDING) ? this.failure : null;
		this.failure = null;
		become(RecordState.RUNNING);
		return failure;
	}

	/**
	 * Whether an operator's command names this record: the lock its {@code lock.id}
	 * header names, at its stage and offset (docs/PROTOCOL.md, rule 11).
	 */
	boolean isNamedBy(OperatorCommand command) {
		return command.partition() == this.delivery.partition() && command.position().offset() == this.delivery.offset()
				&& command.position().stage() == this.work.route.router().plan().stageOf(this.delivery.topic())
				&& command.lockId().equals(ProtocolHeaders.text(this.delivery.headers(), ProtocolHeaders.LOCK_ID));
	}

	/**
	 * Whether an operator's command names the lock this record carries, at this record.
	 */
	boolean commandPending() {
		String lockId = ProtocolHeaders.text(this.delivery.headers(), ProtocolHeaders.LOCK_ID);
		return lockId != null && this.work.route.registry().commandsOf(lockId).stream().anyMatch(this::isNamedBy);
	}

	@Override
	public String toString() {
		return String.valueOf(this.delivery);
	}

	/**
	 * What a record's failed run gave, and the rest of its step, until a worker takes it.
	 *
	 * @param result the failed run's result
	 * @param rest the rest of the step
	 */
	record PendingFailure(HandlerResult result, Supplier<Step> rest) {
	}

}
