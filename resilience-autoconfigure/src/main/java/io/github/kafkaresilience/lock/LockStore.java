package io.github.kafkaresilience.lock;

import java.util.List;

import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * The locks of one main topic as the retry protocol sees them: reads come from this
 * instance's lock table, writes are durable when they return and are visible to the next read
 * at once (read-your-writes).
 *
 * @since 0.1.0
 */
public interface LockStore {

	@Nullable Lock find(String id);

	/** The live locks of a business key, oldest origin first. */
	List<Lock> locksOf(Bytes key);

	/** The live lock of the record born at {@code originOffset}, if any. */
	@Nullable Lock byOrigin(Bytes key, long originOffset);

	/** The live lock of the same key with the greatest origin below {@code lock}'s, if any. */
	@Nullable Lock predecessor(Lock lock);

	/** Writes a new version of a lock; durable on return. */
	void write(Lock lock);

	/** Releases a lock with a tombstone; durable on return. */
	void release(Lock lock);

}
