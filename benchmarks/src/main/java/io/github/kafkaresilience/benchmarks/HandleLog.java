package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.IntPredicate;

/**
 * What the handler did with each record of a run whose length is not known in advance
 * (P9R: it sends until the roll is over): how often it was called on the record, how
 * often it succeeded, and the record's produce-to-handle latency the first time it
 * succeeded. Lock-free: one slot per record, up to a capacity that the sender does not
 * pass.
 */
final class HandleLog {

	private static final long UNSET = Long.MIN_VALUE;

	private final AtomicIntegerArray attempts;

	private final AtomicIntegerArray successes;

	private final AtomicLongArray latencies;

	private final AtomicInteger distinct = new AtomicInteger();

	/**
	 * @param capacity how many records, numbered from 0, the log can hold
	 */
	HandleLog(int capacity) {
		this.attempts = new AtomicIntegerArray(capacity);
		this.successes = new AtomicIntegerArray(capacity);
		this.latencies = new AtomicLongArray(capacity);
		for (int i = 0; i < capacity; i++) {
			this.latencies.set(i, UNSET);
		}
	}

	/**
	 * Notes a call of the handler on a record.
	 * @param seq the sequence number
	 * @return whether it is the first call on that record
	 */
	boolean attempted(long seq) {
		return inRange(seq) && this.attempts.getAndIncrement((int) seq) == 0;
	}

	/**
	 * Notes that a call of the handler succeeded on a record.
	 * @param seq the sequence number
	 * @param latencyNanos from the record's production until the call started
	 */
	void succeeded(long seq, long latencyNanos) {
		if (inRange(seq) && this.successes.getAndIncrement((int) seq) == 0) {
			this.latencies.set((int) seq, latencyNanos);
			this.distinct.incrementAndGet();
		}
	}

	/** Distinct records the handler succeeded on so far. */
	int distinct() {
		return this.distinct.get();
	}

	/**
	 * Waits until the handler has succeeded on every one of the first {@code records}
	 * records.
	 * @param records how many records were sent
	 * @param timeout how long to wait at most
	 * @return whether it did
	 */
	boolean await(int records, Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (this.distinct.get() < records) {
			if (System.nanoTime() - deadline > 0) {
				return false;
			}
			TimeUnit.MILLISECONDS.sleep(20); // the handlers, not a result of this thread
		}
		return true;
	}

	/**
	 * Of the first {@code records} records, how many the handler succeeded on more than
	 * once.
	 */
	int handledMoreThanOnce(int records) {
		int twice = 0;
		for (int i = 0; i < Math.min(records, this.successes.length()); i++) {
			if (this.successes.get(i) > 1) {
				twice++;
			}
		}
		return twice;
	}

	/**
	 * The latencies of the records from {@code from} (inclusive) to {@code to}
	 * (exclusive) that {@code counted} accepts.
	 */
	Latencies.Summary latencies(int from, int to, IntPredicate counted) {
		Latencies latencies = new Latencies(from, Math.max(0, to - from));
		for (int seq = from; seq < to; seq++) {
			long latency = this.latencies.get(seq);
			if (latency != UNSET && counted.test(seq)) {
				latencies.record(seq, latency);
			}
		}
		return latencies.summary();
	}

	/**
	 * The longest pause of a key among the records from {@code from} to {@code to} that
	 * {@code counted} accepts: for each such record and the record of its key sent before
	 * it ({@code keys} records earlier), how much longer the record waited than that one,
	 * that is, by how much the gap between the two being handled exceeded the gap between
	 * their sending. In milliseconds, {@code NaN} when no pair was handled.
	 */
	double longestPauseMillis(int from, int to, int keys, IntPredicate counted) {
		long longest = UNSET;
		for (int seq = Math.max(from, keys); seq < to; seq++) {
			long latency = this.latencies.get(seq);
			long before = this.latencies.get(seq - keys);
			if (latency != UNSET && before != UNSET && counted.test(seq)) {
				longest = Math.max(longest, latency - before);
			}
		}
		return (longest == UNSET) ? Double.NaN : Math.max(0, longest) / 1e6;
	}

	private boolean inRange(long seq) {
		return seq >= 0 && seq < this.attempts.length();
	}

}
