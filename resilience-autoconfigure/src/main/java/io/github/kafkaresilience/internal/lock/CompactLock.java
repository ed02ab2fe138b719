package io.github.kafkaresilience.internal.lock;

import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;

import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * A live lock as a {@link LockTable} stores it: the fields of a {@link Lock} as
 * primitives in one object, with the version bookkeeping of {@link LockVersion}. A
 * {@code Lock} holds a string id, a {@code Bytes} around the key, an {@code Instant}, a
 * boxed offset and a {@code Position}, five objects besides itself; this holds the id as
 * two longs, the key's bytes (one array shared by the live locks of a key) and nothing
 * else, except the failure of a move in flight, which is rare and short-lived and kept as
 * it came. {@link #toLock()} gives back an equal {@code Lock}.
 */
final class CompactLock extends LockVersion {

	private static final long NONE = -1;

	/** The business key, shared by every live lock of the key in the table. */
	final byte[] key;

	final int originPartition;

	final long originOffset;

	final int stage;

	/**
	 * {@code at} when the lock is confirmed; the offset of {@code from} while it moves.
	 */
	private final long stageOffset;

	/**
	 * The stage of {@code from} while the lock moves, {@link #NONE} when it is confirmed.
	 */
	private final int fromStage;

	private final int retryCount;

	private final @Nullable FailureInfo failure;

	private final long updatedSeconds;

	private final int updatedNanos;

	/**
	 * A replay's entry, {@link #NONE} for a record born in the main topic:
	 * {@link Lock#sequence()}.
	 */
	final long sequence;

	/**
	 * @param id the lock's id, as the lock record's key
	 * @param partition the lock partition of the record
	 * @param offset the offset of the record
	 * @param lock the lock the record holds
	 * @param key the lock's key bytes, the array of another live lock of the key if it
	 * has one
	 */
	CompactLock(LockId id, int partition, long offset, Lock lock, byte[] key) {
		super(id, partition, offset);
		this.key = key;
		this.originPartition = lock.originPartition();
		this.originOffset = lock.originOffset();
		this.stage = lock.stage();
		Position from = lock.from();
		this.stageOffset = (from != null) ? from.offset() : Objects.requireNonNull(lock.at());
		this.fromStage = (from != null) ? from.stage() : (int) NONE;
		this.retryCount = lock.retryCount();
		this.failure = lock.failure();
		this.updatedSeconds = lock.updated().getEpochSecond();
		this.updatedNanos = lock.updated().getNano();
		this.sequence = lock.sequence();
	}

	/** The lock this stands for, equal to the one it was made of. */
	Lock toLock() {
		boolean moving = this.fromStage != NONE;
		return new Lock(id(), Bytes.wrap(this.key), this.originPartition, this.originOffset, this.stage,
				moving ? null : this.stageOffset, moving ? new Position(this.fromStage, this.stageOffset) : null,
				this.retryCount, this.failure, Instant.ofEpochSecond(this.updatedSeconds, this.updatedNanos),
				(this.sequence != NONE) ? this.sequence : null);
	}

	boolean isPending() {
		return this.originOffset == Lock.PENDING;
	}

	/**
	 * Whether this is the lock of the record born at {@code originOffset} of the main
	 * topic.
	 */
	boolean isBornAt(long originOffset) {
		return this.originOffset == originOffset && this.sequence == NONE;
	}

	/** Orders as {@link Lock#BY_ORIGIN}. */
	int compareByOrigin(CompactLock other) {
		int byOrigin = compareByOrigin(other.originOffset, other.sequence);
		return (byOrigin != 0) ? byOrigin
				: LockId.compare(this.idHigh, this.idLow, this.idText, other.idHigh, other.idLow, other.idText);
	}

	/**
	 * Orders by origin offset, then sequence; 0 for every lock of that origin and
	 * sequence.
	 */
	int compareByOrigin(long originOffset, long sequence) {
		int byOffset = Long.compare(this.originOffset, originOffset);
		return (byOffset != 0) ? byOffset : Long.compare(this.sequence, sequence);
	}

	/** Orders by {@link Lock#updated()}. */
	int compareByUpdated(CompactLock other) {
		int bySeconds = Long.compare(this.updatedSeconds, other.updatedSeconds);
		return (bySeconds != 0) ? bySeconds : Integer.compare(this.updatedNanos, other.updatedNanos);
	}

	int keyHash() {
		// as Bytes.hashCode, so a lookup by a Bytes finds it
		return Arrays.hashCode(this.key);
	}

}
