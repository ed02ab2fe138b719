package io.github.kafkaresilience.lock;

import java.time.Instant;
import java.util.Objects;

import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * One live lock of a business key: the record born at {@code origin} in the main topic is in
 * the ladder. {@code at} is the offset of the record that carries the lock in the topic of
 * {@code stage}; while a move is in flight {@code at} is absent and {@code from} names the
 * record being moved.
 *
 * @param id the lock id (a random UUID, the Kafka key of the lock record)
 * @param key the business key (raw record key bytes)
 * @param originPartition the partition of the main topic the record was born in
 * @param originOffset the offset in the main topic the record was born at
 * @param stage the stage (1..n) the lock is at or moving to
 * @param at the offset of the carrying record in the stage topic, absent while moving
 * @param from the record being moved, present only while {@code at} is absent
 * @param retryCount the {@code retry.count} of the carrying record
 * @param failure the failure that caused an in-flight move, if any
 * @param updated when this version was written
 * @since 0.1.0
 */
public record Lock(String id, Bytes key, int originPartition, long originOffset, int stage, @Nullable Long at,
		@Nullable Position from, int retryCount, @Nullable FailureInfo failure, Instant updated) {

	public Lock {
		Objects.requireNonNull(id, "id");
		Objects.requireNonNull(key, "key");
		if (stage < 1) {
			throw new IllegalArgumentException("A lock's stage starts at 1 but was " + stage);
		}
		if ((at == null) == (from == null)) {
			throw new IllegalArgumentException("A lock has either 'at' or 'from', not " + ((at == null) ? "neither" : "both"));
		}
	}

	/**
	 * A new lock on its way to {@code stage}, moving the record at {@code from}.
	 */
	public static Lock moving(String id, Bytes key, int originPartition, long originOffset, int stage, Position from,
			int retryCount, @Nullable FailureInfo failure, Instant now) {
		return new Lock(id, key, originPartition, originOffset, stage, null, from, retryCount, failure, now);
	}

	public boolean isMoving() {
		return this.at == null;
	}

	/**
	 * The confirmed position of the carrying record, or {@code null} while moving.
	 */
	public @Nullable Position position() {
		return (this.at != null) ? new Position(this.stage, this.at) : null;
	}

	/**
	 * This lock, moving the record at {@code source} to {@code targetStage}.
	 */
	public Lock moveTo(int targetStage, Position source, int newRetryCount, @Nullable FailureInfo cause, Instant now) {
		return new Lock(this.id, this.key, this.originPartition, this.originOffset, targetStage, null, source,
				newRetryCount, cause, now);
	}

	/**
	 * This lock with its move confirmed: the record now sits at {@code offset} of its stage.
	 */
	public Lock confirmedAt(long offset, Instant now) {
		return new Lock(this.id, this.key, this.originPartition, this.originOffset, this.stage, offset, null,
				this.retryCount, null, now);
	}

	@Override
	public String toString() {
		return "Lock[" + this.id + " origin=" + this.originPartition + "/" + this.originOffset + " stage=" + this.stage
				+ ((this.at != null) ? " at=" + this.at : " from=" + this.from) + " retryCount=" + this.retryCount + "]";
	}

}
