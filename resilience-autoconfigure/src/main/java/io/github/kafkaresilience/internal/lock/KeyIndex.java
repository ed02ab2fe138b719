package io.github.kafkaresilience.internal.lock;

import java.util.Arrays;
import java.util.List;

import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * The live locks of a {@link LockTable} by business key, each key's locks ordered by
 * origin ({@link Lock#BY_ORIGIN}). A key with one lock (almost every key) takes one slot
 * holding that lock; a key with more takes one slot holding a {@link Several}, an array
 * sorted by origin.
 */
final class KeyIndex extends ProbingIndex<byte[]> {

	@Override
	boolean matches(Object entry, byte[] key) {
		return Arrays.equals(keyOf(entry), key);
	}

	/** Whether {@code key} has a live lock; allocates nothing. */
	boolean contains(Bytes key) {
		return slotOf(key.get(), key.hashCode()) >= 0;
	}

	/**
	 * The key bytes to store for a new lock of {@code key}: the array the key's live
	 * locks share if it has any, so that a key is held once.
	 */
	byte[] sharedKey(Bytes key) {
		int slot = slotOf(key.get(), key.hashCode());
		return (slot >= 0) ? keyOf(at(slot)) : key.get();
	}

	void add(CompactLock lock) {
		int hash = lock.keyHash();
		int slot = slotOf(lock.key, hash);
		if (slot < 0) {
			add(lock, hash);
		}
		else if (at(slot) instanceof CompactLock only) {
			replace(slot, new Several(only, lock));
		}
		else {
			((Several) at(slot)).add(lock);
		}
	}

	/** Removes {@code lock}, the very object that was added. */
	void remove(CompactLock lock) {
		int slot = slotOf(lock.key, lock.keyHash());
		if (slot < 0) {
			return;
		}
		Object entry = at(slot);
		if (entry == lock) {
			removeAt(slot);
		}
		else if (entry instanceof Several several && several.remove(lock)) {
			if (several.size == 1) {
				replace(slot, several.locks[0]);
			}
		}
	}

	/**
	 * The live locks of {@code key}, oldest origin first; allocates nothing when it has
	 * none.
	 */
	List<Lock> locksOf(Bytes key) {
		int slot = slotOf(key.get(), key.hashCode());
		if (slot < 0) {
			return List.of();
		}
		Object entry = at(slot);
		if (entry instanceof CompactLock only) {
			return List.of(only.toLock());
		}
		Several several = (Several) entry;
		return new DecodedLocks(Arrays.copyOf(several.locks, several.size));
	}

	/**
	 * The live lock of the record born at {@code originOffset} of the main topic, if any.
	 */
	@Nullable CompactLock bornAt(Bytes key, long originOffset) {
		int slot = slotOf(key.get(), key.hashCode());
		if (slot < 0) {
			return null;
		}
		Object entry = at(slot);
		if (entry instanceof CompactLock only) {
			return only.isBornAt(originOffset) ? only : null;
		}
		Several several = (Several) entry;
		// a main-topic record's lock sorts first among the locks of its origin offset
		int first = several.firstFrom(originOffset, -1);
		return (first < several.size && several.locks[first].isBornAt(originOffset)) ? several.locks[first] : null;
	}

	/**
	 * The live lock of {@code key} with the greatest origin below ({@code originOffset},
	 * {@code sequence}), if any.
	 */
	@Nullable CompactLock lastBefore(Bytes key, long originOffset, long sequence) {
		int slot = slotOf(key.get(), key.hashCode());
		if (slot < 0) {
			return null;
		}
		Object entry = at(slot);
		if (entry instanceof CompactLock only) {
			return (only.compareByOrigin(originOffset, sequence) < 0) ? only : null;
		}
		Several several = (Several) entry;
		int last = several.firstFrom(originOffset, sequence) - 1;
		return (last >= 0) ? several.locks[last] : null;
	}

	private static byte[] keyOf(Object entry) {
		return (entry instanceof CompactLock lock) ? lock.key : ((Several) entry).locks[0].key;
	}

	/** The live locks of a key that has more than one, sorted by origin. */
	private static final class Several {

		private CompactLock[] locks;

		private int size;

		Several(CompactLock first, CompactLock second) {
			this.locks = new CompactLock[4];
			this.locks[0] = first;
			this.size = 1;
			add(second);
		}

		void add(CompactLock lock) {
			// a new lock is mostly of the key's latest record: its place is the end
			int at = (this.locks[this.size - 1].compareByOrigin(lock) < 0) ? this.size : insertionPoint(lock);
			if (this.size == this.locks.length) {
				this.locks = Arrays.copyOf(this.locks, this.size << 1);
			}
			System.arraycopy(this.locks, at, this.locks, at + 1, this.size - at);
			this.locks[at] = lock;
			this.size++;
		}

		// the slots from size on are null and only those below size are read: NullAway
		// cannot see the bound, so the array is declared of locks
		@SuppressWarnings("NullAway")
		boolean remove(CompactLock lock) {
			int at = insertionPoint(lock);
			if (at >= this.size || this.locks[at] != lock) {
				return false;
			}
			System.arraycopy(this.locks, at + 1, this.locks, at, this.size - at - 1);
			this.locks[--this.size] = null;
			if (this.locks.length > 8 && this.size < (this.locks.length >>> 2)) {
				this.locks = Arrays.copyOf(this.locks, this.locks.length >>> 1);
			}
			return true;
		}

		/**
		 * The index of {@code lock}, or where it would go: the first lock not before it.
		 */
		private int insertionPoint(CompactLock lock) {
			int low = 0;
			int high = this.size;
			while (low < high) {
				int middle = (low + high) >>> 1;
				if (this.locks[middle].compareByOrigin(lock) < 0) {
					low = middle + 1;
				}
				else {
					high = middle;
				}
			}
			return low;
		}

		/**
		 * The index of the first lock whose origin is not below ({@code originOffset},
		 * {@code sequence}).
		 */
		int firstFrom(long originOffset, long sequence) {
			int low = 0;
			int high = this.size;
			while (low < high) {
				int middle = (low + high) >>> 1;
				if (this.locks[middle].compareByOrigin(originOffset, sequence) < 0) {
					low = middle + 1;
				}
				else {
					high = middle;
				}
			}
			return low;
		}

	}

}
