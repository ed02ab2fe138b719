package io.github.kafkaresilience.internal.ladder;

import java.time.Instant;

import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockStore;

/**
 * Admits a replayed dead letter into its key's order (docs/PROTOCOL.md, rule 2.0). Only
 * the instance that owns the main-topic partition of the key may do it, in that key's
 * turn: every record of the key it took from the main topic before has then run or is in
 * the ladder with a lock, and every record it takes after sees the replay's lock and
 * follows it. The replay's lock gets the origin of the last record taken from the
 * partition (or of the key's last lock, if that is later), so it sorts behind every
 * earlier lock of its key and before the records taken after it; and it moves the entry
 * to the end of stage 1, behind the records of those earlier locks that entered stage 1
 * after it (see {@link Lock#admittedAfter}).
 *
 * @since 0.1.0
 */
final class ReplayAdmission {

	private ReplayAdmission() {
	}

	/**
	 * Admits a replay's lock if it is still pending. Call it on a lock view that has
	 * caught up with the lock partition, so that a lock admitted or moved on meanwhile is
	 * not written back.
	 * @param locks the ladder's locks
	 * @param lockId the pending lock
	 * @param lastTaken the offset of the last record of the partition taken from the main
	 * topic before the admission's turn came, or -1
	 * @param now the time of the change
	 * @return whether the lock was admitted now; {@code false} when it is gone or already
	 * admitted
	 */
	static boolean admit(LockStore locks, String lockId, long lastTaken, Instant now) {
		Lock lock = locks.find(lockId);
		if (lock == null || !lock.isPending()) {
			return false;
		}
		long origin = lastTaken;
		for (Lock other : locks.locksOf(lock.key())) {
			if (!other.isPending()) {
				origin = Math.max(origin, other.originOffset());
			}
		}
		locks.write(lock.admittedAfter(origin, now));
		return true;
	}

}
