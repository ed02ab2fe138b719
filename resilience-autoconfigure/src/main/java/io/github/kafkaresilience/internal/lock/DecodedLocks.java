package io.github.kafkaresilience.internal.lock;

import java.util.AbstractList;
import java.util.RandomAccess;

/**
 * Locks of a {@link LockTable} as a list that turns each into a {@link Lock} when it is
 * read: a key with many locks or a snapshot of the whole table costs an array of
 * references, not a {@code Lock} per lock up front. The array is a copy, so the table may
 * change meanwhile.
 */
final class DecodedLocks extends AbstractList<Lock> implements RandomAccess {

	private final CompactLock[] locks;

	DecodedLocks(CompactLock[] locks) {
		this.locks = locks;
	}

	@Override
	public Lock get(int index) {
		return this.locks[index].toLock();
	}

	@Override
	public int size() {
		return this.locks.length;
	}

}
