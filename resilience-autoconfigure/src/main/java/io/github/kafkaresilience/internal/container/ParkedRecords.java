package io.github.kafkaresilience.internal.container;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import io.github.kafkaresilience.internal.container.offsets.PartitionOffsets;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * A partition's parked records, as the re-reader sees them: which offsets are parked,
 * which keys have parked records (a later record of such a key parks too), and when to
 * read them again. The offsets are the partition's; every method runs under the
 * partition's monitor.
 */
final class ParkedRecords {

	/** The partition whose monitor guards this. */
	private final PartitionWork work;

	private final PartitionOffsets offsets;

	private final int bound;

	/** Keys with parked records here, and how many. */
	private final Map<Bytes, Integer> keys = new HashMap<>();

	/** When the re-reader should next look at the parked records: epoch millis. */
	private long lookAt = Long.MAX_VALUE;

	ParkedRecords(PartitionWork work, PartitionOffsets offsets, int bound) {
		this.work = work;
		this.offsets = offsets;
		this.bound = bound;
	}

	/**
	 * Counts {@code count} parked records of {@code key}, to be read again by {@code at}.
	 * Under the monitor.
	 */
	void add(@Nullable Bytes key, int count, long at) {
		if (key != null) {
			this.keys.merge(key, count, Integer::sum);
		}
		this.lookAt = Math.min(this.lookAt, at);
	}

	/** A parked record of {@code key} was taken back. Under the monitor. */
	void taken(@Nullable Bytes key) {
		if (key != null) {
			this.keys.computeIfPresent(key, (k, count) -> (count > 1) ? count - 1 : null);
		}
		forgetKeysIfNoneParked();
	}

	/** How many records of {@code key} are parked, or 0. Under the monitor. */
	int count(Bytes key) {
		return this.keys.getOrDefault(key, 0);
	}

	/** The parked keys with their counts. Under the monitor. */
	Map<Bytes, Integer> keys() {
		return this.keys;
	}

	/**
	 * Starts a pass of the re-reader if it is time: returns the first parked offset and
	 * clears the time to look, or empty when there is nothing to read again now.
	 */
	OptionalLong startPass(long now) {
		synchronized (this.work) {
			if (this.work.isRevoked() || this.offsets.parkedCount() == 0 || this.lookAt > now
					|| this.offsets.inFlight() >= this.bound) {
				return OptionalLong.empty();
			}
			this.lookAt = Long.MAX_VALUE;
			return OptionalLong.of(this.offsets.nextParked(0));
		}
	}

	/**
	 * When the re-reader should look next, after a pass was not started at {@code now}.
	 */
	long nextLook(long now, long idleMillis) {
		synchronized (this.work) {
			if (this.work.isRevoked() || this.offsets.parkedCount() == 0 || this.lookAt > now) {
				return this.lookAt;
			}
			return now + idleMillis; // due, but no room yet
		}
	}

	/** Asks the re-reader to look no later than {@code at}; returns when it looks. */
	long lookAgainBy(long at) {
		synchronized (this.work) {
			this.lookAt = Math.min(this.lookAt, at);
			return this.lookAt;
		}
	}

	boolean isParked(long offset) {
		synchronized (this.work) {
			return this.offsets.isParked(offset);
		}
	}

	/** Whether a record of {@code key} is parked here. */
	boolean isParked(Bytes key) {
		synchronized (this.work) {
			return this.keys.containsKey(key);
		}
	}

	/** The first parked offset, or -1. */
	long first() {
		synchronized (this.work) {
			return this.offsets.nextParked(0);
		}
	}

	/** Whether anything at or after {@code offset} is parked. */
	boolean parkedFrom(long offset) {
		synchronized (this.work) {
			return this.offsets.nextParked(offset) >= 0;
		}
	}

	long count() {
		synchronized (this.work) {
			return this.offsets.parkedCount();
		}
	}

	/**
	 * Parked offsets in [from, to) that a read from {@code from} skipped are gone from
	 * the log (deleted by retention): they are done, and returned.
	 */
	List<Long> doneIfGone(long from, long to) {
		synchronized (this.work) {
			List<Long> gone = new ArrayList<>();
			for (long offset = this.offsets.nextParked(from); offset >= 0
					&& offset < to; offset = this.offsets.nextParked(offset + 1)) {
				this.offsets.done(offset);
				gone.add(offset);
			}
			forgetKeysIfNoneParked();
			return gone;
		}
	}

	/**
	 * A parked record the log no longer holds leaves its key counted; once nothing is
	 * parked, no key is.
	 */
	private void forgetKeysIfNoneParked() {
		if (this.offsets.parkedCount() == 0) {
			this.keys.clear();
		}
	}

}
