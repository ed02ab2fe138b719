package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the distinct records of a range of sequence numbers that a contender handled,
 * and when: the first one, and the one that completed the range. Throughput is measured
 * between these two moments, so the start-up of a contender (group join, sync barrier) is
 * not part of it. Lock-free: one bit per record.
 * <p>
 * A tally can also split that span into back-to-back windows of equal record counts,
 * marking when the distinct count crossed each boundary, so that one pass of a contender
 * gives several throughput samples: the first window holds the ramp-up and the last the
 * tail of the partitions that finish late, and the median window leaves both out.
 */
final class Tally {

	private static final long UNSET = Long.MIN_VALUE;

	private final long from;

	private final int expected;

	private final AtomicLongArray seen;

	private final AtomicInteger distinct = new AtomicInteger();

	private final LongAdder handled = new LongAdder();

	private final AtomicLong first = new AtomicLong(UNSET);

	private volatile long last = UNSET;

	private final CountDownLatch done = new CountDownLatch(1);

	private final int windows;

	/**
	 * When the distinct count reached each inner window boundary (index 1 to windows -
	 * 1).
	 */
	private final AtomicLongArray boundaries;

	/**
	 * @param from the first sequence number of the range
	 * @param count how many records the range holds
	 */
	Tally(long from, int count) {
		this(from, count, 1);
	}

	/**
	 * @param from the first sequence number of the range
	 * @param count how many records the range holds
	 * @param windows into how many back-to-back windows of equal record counts the span
	 * from the first record to the last is split (see {@link #windowsPerSecond()})
	 */
	Tally(long from, int count, int windows) {
		if (windows < 1) {
			throw new IllegalArgumentException("A tally needs at least one window, not " + windows);
		}
		this.from = from;
		this.expected = count;
		this.seen = new AtomicLongArray(Math.max(1, (count + 63) / 64));
		this.windows = windows;
		this.boundaries = new AtomicLongArray(windows + 1);
		for (int i = 0; i <= windows; i++) {
			this.boundaries.set(i, UNSET);
		}
		if (count == 0) {
			this.done.countDown();
		}
	}

	/**
	 * Notes that the record with sequence number {@code seq} was handled successfully.
	 * Records outside the range are ignored.
	 * @param seq the sequence number
	 * @return whether the record was new
	 */
	boolean record(long seq) {
		long index = seq - this.from;
		if (index < 0 || index >= this.expected) {
			return false;
		}
		long now = System.nanoTime();
		this.handled.increment();
		if (this.first.get() == UNSET) {
			this.first.compareAndSet(UNSET, now);
		}
		int word = (int) (index >>> 6);
		long bit = 1L << index;
		long current;
		do {
			current = this.seen.get(word);
			if ((current & bit) != 0) {
				return false;
			}
		}
		while (!this.seen.compareAndSet(word, current, current | bit));
		int distinct = this.distinct.incrementAndGet();
		if (this.windows > 1) {
			int window = (int) ((long) distinct * this.windows / this.expected);
			if (window >= 1 && window < this.windows && boundary(window) == distinct) {
				this.boundaries.set(window, now);
			}
		}
		if (distinct == this.expected) {
			this.last = now;
			this.done.countDown();
		}
		return true;
	}

	/**
	 * The distinct count that ends window {@code window} (from 1): the first count at or
	 * past {@code window / windows} of the range. Rounding up makes it the one count
	 * {@code n} with {@code n * windows / expected == window} that ends the window, while
	 * there are fewer windows than records.
	 */
	private int boundary(int window) {
		return (int) (((long) window * this.expected + this.windows - 1) / this.windows);
	}

	/**
	 * Waits until every record of the range was handled.
	 * @param timeout how long to wait at most
	 * @return whether the range is complete
	 */
	boolean await(Duration timeout) throws InterruptedException {
		return this.done.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
	}

	boolean isComplete() {
		return this.done.getCount() == 0;
	}

	/** Distinct records handled so far. */
	int distinct() {
		return this.distinct.get();
	}

	/** Records handled so far, repeats included. */
	long handled() {
		return this.handled.sum();
	}

	int expected() {
		return this.expected;
	}

	/**
	 * When the first record was handled ({@link System#nanoTime()}),
	 * {@code Long.MIN_VALUE} before.
	 */
	long firstNanos() {
		return this.first.get();
	}

	/**
	 * When the range was completed ({@link System#nanoTime()}), {@code Long.MIN_VALUE}
	 * before.
	 */
	long lastNanos() {
		return this.last;
	}

	/**
	 * Records per second between the first record and the one that completed the range,
	 * or {@code NaN} when the range is incomplete or too small to tell.
	 */
	double perSecond() {
		long first = this.first.get();
		long last = this.last;
		if (first == UNSET || last == UNSET || last <= first || this.expected < 2) {
			return Double.NaN;
		}
		return (this.expected - 1) * 1e9 / (last - first);
	}

	/**
	 * Records per second in each back-to-back window, in order: the first window runs
	 * from the first record handled, the last one ends with the record that completed the
	 * range. A window gets {@code NaN} when the range is incomplete or it is too short to
	 * time.
	 */
	double[] windowsPerSecond() {
		double[] perSecond = new double[this.windows];
		for (int window = 1; window <= this.windows; window++) {
			long start = (window == 1) ? this.first.get() : this.boundaries.get(window - 1);
			long end = (window == this.windows) ? this.last : this.boundaries.get(window);
			int startCount = (window == 1) ? 1 : boundary(window - 1);
			int endCount = (window == this.windows) ? this.expected : boundary(window);
			perSecond[window - 1] = (start == UNSET || end == UNSET || end <= start || endCount <= startCount)
					? Double.NaN : (endCount - startCount) * 1e9 / (end - start);
		}
		return perSecond;
	}

}
