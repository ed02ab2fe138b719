package io.github.kafkaresilience.internal.lock;

import org.jspecify.annotations.Nullable;

/**
 * What a {@link LockTable} remembers of a lock id: the lock record it applied last, at
 * {@code offset} of lock partition {@code partition}. A plain version is a release (a
 * tombstone) remembered until the tailer has read past it; a live lock is a
 * {@link CompactLock}. The id is held as {@link LockId} describes, in fields of its own
 * rather than an object, to keep a million of them small.
 */
class LockVersion {

	final long idHigh;

	final long idLow;

	/** The id when it is not a canonical UUID, else {@code null}. */
	final @Nullable String idText;

	final int partition;

	final long offset;

	LockVersion(LockId id, int partition, long offset) {
		this.idHigh = id.high();
		this.idLow = id.low();
		this.idText = id.text();
		this.partition = partition;
		this.offset = offset;
	}

	final LockId lockId() {
		return new LockId(this.idHigh, this.idLow, this.idText);
	}

	final boolean hasId(LockId id) {
		return (this.idText != null) ? this.idText.equals(id.text())
				: (id.text() == null && this.idHigh == id.high() && this.idLow == id.low());
	}

	final int idHash() {
		return LockId.hash(this.idHigh, this.idLow, this.idText);
	}

	final String id() {
		return LockId.toString(this.idHigh, this.idLow, this.idText);
	}

}
