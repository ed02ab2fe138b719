package io.github.kafkaresilience.internal.lock;

/**
 * The versions a {@link LockTable} remembers, by lock id: each live lock and each
 * remembered release. A live lock found here holds its key, which leads to the
 * {@link KeyIndex}.
 */
final class IdIndex extends ProbingIndex<LockId> {

	@Override
	boolean matches(Object entry, LockId id) {
		return ((LockVersion) entry).hasId(id);
	}

	/** The slot of the version of {@code id}, or -1. */
	int slotOf(LockId id) {
		return slotOf(id, id.hash());
	}

	LockVersion versionAt(int slot) {
		return (LockVersion) at(slot);
	}

	void add(LockVersion version) {
		add(version, version.idHash());
	}

	/**
	 * Puts {@code version} in {@code slot}, the slot of its id, or adds it when that is
	 * -1.
	 */
	void put(int slot, LockVersion version) {
		if (slot >= 0) {
			replace(slot, version);
		}
		else {
			add(version);
		}
	}

}
