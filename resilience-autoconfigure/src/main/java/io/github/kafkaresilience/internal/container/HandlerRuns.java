package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The handler runs under way on one partition's records, so that its revocation can let
 * them end before the partition's last commit: a record whose handler was running when
 * the partition was revoked is then committed, not handled again by the next owner. Once
 * a revocation begins, no new run starts; the next owner runs those records.
 */
final class HandlerRuns {

	private final AtomicInteger running = new AtomicInteger();

	private volatile boolean closing;

	/**
	 * Counts a run that is about to start; false, counting nothing, once the partition's
	 * revocation has begun.
	 */
	boolean begin() {
		this.running.incrementAndGet();
		if (this.closing) {
			end();
			return false;
		}
		return true;
	}

	/** A run counted by {@link #begin()} has ended, its outcome recorded. */
	void end() {
		if (this.running.decrementAndGet() == 0 && this.closing) {
			synchronized (this) {
				notifyAll();
			}
		}
	}

	/** Starts no more runs: the partition is being revoked. */
	void close() {
		this.closing = true;
	}

	/**
	 * Closes each of {@code runs} and waits until none of them runs, up to
	 * {@code timeout}; returns false when some were still running.
	 */
	static boolean closeAndAwait(Collection<HandlerRuns> runs, Duration timeout) {
		runs.forEach(HandlerRuns::close);
		long deadline = System.nanoTime() + timeout.toNanos();
		for (HandlerRuns partition : runs) {
			synchronized (partition) {
				while (partition.running.get() > 0) {
					long left = deadline - System.nanoTime();
					if (left <= 0) {
						return false;
					}
					try {
						TimeUnit.NANOSECONDS.timedWait(partition, left);
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
						return false;
					}
				}
			}
		}
		return true;
	}

}
