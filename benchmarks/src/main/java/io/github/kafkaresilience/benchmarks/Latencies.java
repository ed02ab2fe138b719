package io.github.kafkaresilience.benchmarks;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The latency of each record of a range of sequence numbers, taken the first time the
 * record is handled (a record handled again, after a rebalance, keeps its first latency),
 * and their percentiles once the run is over. Lock-free: one slot per record.
 */
final class Latencies {

	private static final long UNSET = Long.MIN_VALUE;

	private final long from;

	private final AtomicLongArray nanos;

	/**
	 * @param from the first sequence number of the range
	 * @param count how many records the range holds
	 */
	Latencies(long from, int count) {
		this.from = from;
		this.nanos = new AtomicLongArray(count);
		for (int i = 0; i < count; i++) {
			this.nanos.set(i, UNSET);
		}
	}

	/**
	 * Notes the latency of a record, unless it has one already. Records outside the range
	 * are ignored.
	 * @param seq the sequence number
	 * @param latencyNanos how long the record took
	 */
	void record(long seq, long latencyNanos) {
		long index = seq - this.from;
		if (index >= 0 && index < this.nanos.length()) {
			this.nanos.compareAndSet((int) index, UNSET, latencyNanos);
		}
	}

	/** The latencies taken so far, in milliseconds, sorted. */
	Summary summary() {
		long[] taken = new long[this.nanos.length()];
		int count = 0;
		for (int i = 0; i < this.nanos.length(); i++) {
			long value = this.nanos.get(i);
			if (value != UNSET) {
				taken[count++] = value;
			}
		}
		long[] sorted = Arrays.copyOf(taken, count);
		Arrays.sort(sorted);
		return new Summary(sorted);
	}

	/**
	 * Sorted latencies of one run.
	 */
	static final class Summary {

		private final long[] sortedNanos;

		private Summary(long[] sortedNanos) {
			this.sortedNanos = sortedNanos;
		}

		/** How many records have a latency. */
		int count() {
			return this.sortedNanos.length;
		}

		/**
		 * The latency that {@code quantile} of the records did not exceed (nearest rank),
		 * in milliseconds; {@code NaN} without records.
		 */
		double percentileMillis(double quantile) {
			if (this.sortedNanos.length == 0) {
				return Double.NaN;
			}
			int rank = (int) Math.ceil(this.sortedNanos.length * quantile);
			return this.sortedNanos[Math.min(this.sortedNanos.length - 1, Math.max(0, rank - 1))] / 1e6;
		}

		/** The longest latency in milliseconds; {@code NaN} without records. */
		double maxMillis() {
			return (this.sortedNanos.length == 0) ? Double.NaN : this.sortedNanos[this.sortedNanos.length - 1] / 1e6;
		}

	}

}
