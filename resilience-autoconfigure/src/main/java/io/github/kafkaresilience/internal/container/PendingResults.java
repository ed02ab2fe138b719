package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The handler results of a listener that are pending: a record's, or a batch's. Each
 * counts as a handler run under way on its records' partitions ({@link HandlerRuns})
 * until it is settled once, by its completion or when given up, so that a revocation and
 * a stop wait for it as for a running handler.
 */
final class PendingResults {

	private final Set<Pending> pending = ConcurrentHashMap.newKeySet();

	private final AtomicInteger records = new AtomicInteger();

	/**
	 * A result is pending.
	 * @param records how many records wait for it
	 * @param ended ends the handler runs it counts as, once it is settled
	 */
	Pending add(int records, Runnable ended) {
		Pending pending = new Pending(records, ended);
		this.records.addAndGet(records);
		this.pending.add(pending);
		return pending;
	}

	/** How many records wait for their result now. */
	int records() {
		return this.records.get();
	}

	/**
	 * Runs what follows a completed result, unless it was settled already (given up), and
	 * ends its handler runs.
	 */
	private void complete(Pending pending, Runnable then) {
		if (pending.settle()) {
			try {
				then.run();
			}
			finally {
				ended(pending);
			}
		}
	}

	/**
	 * A pending result completed: a worker runs what follows it ({@link #complete}), also
	 * while the workers hold or stop; once they stopped, it is given up.
	 */
	void completed(Pending pending, Workers workers, Runnable then) {
		if (!workers.submitCompletion(() -> complete(pending, then))) {
			giveUp(pending);
		}
	}

	/** Gives up a result that will not be taken on: its records are delivered again. */
	void giveUp(Pending pending) {
		if (pending.settle()) {
			ended(pending);
		}
	}

	/**
	 * Gives up the results still pending, once the workers stopped: their records are
	 * delivered again after the restart; their partitions' revocations no longer wait for
	 * them.
	 */
	void giveUpAll() {
		this.pending.forEach(this::giveUp);
	}

	/**
	 * Waits up to {@code timeout} for the pending results to complete and what follows
	 * them to run, while the container stops; returns false when some were still pending.
	 */
	boolean await(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		synchronized (this) {
			while (!this.pending.isEmpty()) {
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					return false;
				}
				try {
					TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return false;
				}
			}
		}
		return true;
	}

	private void ended(Pending pending) {
		this.pending.remove(pending);
		this.records.addAndGet(-pending.records);
		pending.ended.run();
		synchronized (this) {
			notifyAll();
		}
	}

	/** A pending result; settled once. */
	static final class Pending {

		private final int records;

		private final Runnable ended;

		private final AtomicBoolean settled = new AtomicBoolean();

		private Pending(int records, Runnable ended) {
			this.records = records;
			this.ended = ended;
		}

		private boolean settle() {
			return this.settled.compareAndSet(false, true);
		}

	}

}
