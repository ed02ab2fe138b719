package io.github.kafkaresilience.internal.lock;

import java.time.Instant;
import java.util.Comparator;
import java.util.Objects;

import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * One live lock of a business key: the record born at {@code origin} in the main topic is
 * in the ladder. {@code at} is the offset of the record that carries the lock in the
 * topic of {@code stage}; while a move is in flight {@code at} is absent and {@code from}
 * names the record being moved.
 * <p>
 * A dead letter replayed into the ladder was not born in the main topic at a place of its
 * own: its lock names the stage 1 offset where it entered ({@code entry}) and is
 * <em>pending</em> until the instance that owns its main-topic partition admits it,
 * giving it the origin of the main topic's last record it had taken and moving the entry
 * to the end of stage 1 (docs/PROTOCOL.md, rule 2.0). Locks of a key are ordered by
 * origin offset, then entry (a replay comes after the main-topic record of the same
 * origin), then id; a pending lock comes after every admitted one.
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
 * @param entry for the lock of a replayed dead letter, the offset in stage 1 where it
 * entered the ladder; {@code null} for a record born in the main topic
 * @since 0.1.0
 */
public record Lock(String id, Bytes key, int originPartition, long originOffset, int stage, @Nullable Long at,
		@Nullable Position from, int retryCount, @Nullable FailureInfo failure, Instant updated, @Nullable Long entry) {

	/** The origin offset of a replay's lock not admitted yet: after every other. */
	public static final long PENDING = Long.MAX_VALUE;

	/** Orders the locks of a key: by origin offset, then entry (none first), then id. */
	public static final Comparator<Lock> BY_ORIGIN = Comparator.comparingLong(Lock::originOffset)
		.thenComparingLong(Lock::sequence)
		.thenComparing(Lock::id);

	public Lock {
		Objects.requireNonNull(id, "id");
		Objects.requireNonNull(key, "key");
		if (stage < 1) {
			throw new IllegalArgumentException("A lock's stage starts at 1 but was " + stage);
		}
		if ((at == null) == (from == null)) {
			throw new IllegalArgumentException(
					"A lock has either 'at' or 'from', not " + ((at == null) ? "neither" : "both"));
		}
		if (originOffset == PENDING && entry == null) {
			throw new IllegalArgumentException("Only the lock of a replayed dead letter is pending admission");
		}
		if (entry != null && entry < 0) {
			throw new IllegalArgumentException("A replay's entry offset cannot be negative but was " + entry);
		}
	}

	/** A lock of a record born in the main topic. */
	public Lock(String id, Bytes key, int originPartition, long originOffset, int stage, @Nullable Long at,
			@Nullable Position from, int retryCount, @Nullable FailureInfo failure, Instant updated) {
		this(id, key, originPartition, originOffset, stage, at, from, retryCount, failure, updated, null);
	}

	/**
	 * The lock of a dead letter replayed into partition {@code partition} of stage 1 at
	 * {@code entry}, which carries it there: pending until admitted.
	 */
	public static Lock pendingReplay(String id, Bytes key, int partition, long entry, Instant now) {
		return new Lock(id, key, partition, PENDING, 1, entry, null, 0, null, now, entry);
	}

	/**
	 * Whether this is a replay's lock that its main-topic partition has not admitted yet.
	 */
	public boolean isPending() {
		return this.originOffset == PENDING;
	}

	/**
	 * This pending lock, admitted behind the main-topic record at {@code originOffset},
	 * and moving its entry record to the end of stage 1. Records of its key may have
	 * entered stage 1 after the entry did (followers published since), and with this
	 * origin they come before the replay; carried where it entered, the replay would sit
	 * before its predecessors in stage 1 and could wait for a move whose source is queued
	 * behind it. Written again at the end of the stage, it is behind every one of them.
	 */
	public Lock admittedAfter(long originOffset, Instant now) {
		if (!isPending()) {
			throw new IllegalStateException(this + " is not pending admission");
		}
		long entry = Objects.requireNonNull(this.entry, "a pending lock has its entry");
		return new Lock(this.id, this.key, this.originPartition, originOffset, 1, null, new Position(1, entry),
				this.retryCount, null, now, entry);
	}

	/**
	 * Tells apart locks of one origin offset: -1 for a main-topic record, the entry for a
	 * replay.
	 */
	long sequence() {
		return (this.entry != null) ? this.entry : -1;
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
				newRetryCount, cause, now, this.entry);
	}

	/**
	 * This lock with its move confirmed: the record now sits at {@code offset} of its
	 * stage.
	 */
	public Lock confirmedAt(long offset, Instant now) {
		return new Lock(this.id, this.key, this.originPartition, this.originOffset, this.stage, offset, null,
				this.retryCount, null, now, this.entry);
	}

	@Override
	public String toString() {
		String origin = isPending() ? "pending" : Long.toString(this.originOffset);
		return "Lock[" + this.id + " origin=" + this.originPartition + "/" + origin
				+ ((this.entry != null) ? " replay entry=" + this.entry : "") + " stage=" + this.stage
				+ ((this.at != null) ? " at=" + this.at : " from=" + this.from) + " retryCount=" + this.retryCount
				+ "]";
	}

}
