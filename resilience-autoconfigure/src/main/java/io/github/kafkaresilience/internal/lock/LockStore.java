package io.github.kafkaresilience.internal.lock;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.internal.support.Futures;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * The locks of one main topic as the retry protocol sees them: reads come from this
 * instance's lock table, writes are durable when they return and are visible to the next
 * read at once (read-your-writes). Writes come in two forms: awaited, for the rare writes
 * outside a move, and without waiting, for the moves of records.
 *
 * @since 0.1.0
 */
public interface LockStore {

	@Nullable Lock find(String id);

	/** The live locks of a business key, oldest origin first. */
	List<Lock> locksOf(Bytes key);

	/** The live lock of the record born at {@code originOffset}, if any. */
	@Nullable Lock byOrigin(Bytes key, long originOffset);

	/**
	 * The live lock of the same key with the greatest origin below {@code lock}'s, if
	 * any.
	 */
	@Nullable Lock predecessor(Lock lock);

	/**
	 * The pending operator command to act on for {@code lock} as it is now
	 * (docs/PROTOCOL.md, rule 11): one that names the lock at its current confirmed
	 * position; {@code null} when none does.
	 */
	default @Nullable OperatorCommand commandFor(Lock lock) {
		return null;
	}

	/**
	 * Ends an operator command that was acted on, or is void, with a tombstone; completes
	 * like {@link #writing(Lock)}. Ending one twice is harmless.
	 */
	default CompletableFuture<Void> finishing(OperatorCommand command) {
		return CompletableFuture.completedFuture(null);
	}

	/** Writes a new version of a lock; durable on return. */
	void write(Lock lock);

	/** Releases a lock with a tombstone; durable on return. */
	void release(Lock lock);

	/**
	 * Writes a new version of a lock without waiting for it. The future completes once
	 * the write is durable (reads see it from then on), never on a Kafka client's network
	 * thread, so the next step of a move may be chained on it.
	 */
	default CompletableFuture<Void> writing(Lock lock) {
		return Futures.of(() -> write(lock));
	}

	/** Releases a lock without waiting for it; completes like {@link #writing(Lock)}. */
	default CompletableFuture<Void> releasing(Lock lock) {
		return Futures.of(() -> release(lock));
	}

}
