package io.github.kafkaresilience.internal.container;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

/**
 * Whose turn it is on a container's workers. Tasks wait in two queues: records whose turn
 * it is (and the container's actions), and the failure handling of records whose handler
 * just failed. A record whose turn it is goes before any failure handling, so a key whose
 * next record is ready never waits behind the failure handling of other keys
 * (docs/PROTOCOL.md, "Guarantees"); failure handling gets one turn in
 * {@value #FAILURE_TURN} while records wait, so it is never starved, and at most
 * {@code concurrency - 1} workers handle failures at once, so one is always free for a
 * ready record.
 */
final class Turns {

	/**
	 * While both queues hold tasks, one turn in this many goes to failure handling: a
	 * record whose turn it is waits behind at most one failure handled per worker in this
	 * many turns.
	 */
	static final int FAILURE_TURN = 8;

	/** Records whose turn it is, and actions. */
	private final Queue<Task> ready = new ConcurrentLinkedQueue<>();

	/** Records whose handler failed, waiting for the rest of their step. */
	private final Queue<RecordTask> failing = new ConcurrentLinkedQueue<>();

	/**
	 * The most workers that handle failures at once: all but one, when there are two or
	 * more.
	 */
	private final int failureWorkers;

	/** How many workers are handling a failure now: at most {@link #failureWorkers}. */
	private final AtomicInteger handlingFailures = new AtomicInteger();

	/** Turns taken from {@link #ready} since failure handling last had one. */
	private final AtomicInteger readyTurns = new AtomicInteger();

	/**
	 * The records whose turn it is, shared fairly between tenants or limited in rate;
	 * {@code null} when they wait in {@link #ready} with the actions.
	 */
	private volatile @Nullable FairQueue fair;

	Turns(int concurrency) {
		this.failureWorkers = Math.max(1, concurrency - 1);
	}

	/** Queues the records whose turn it is in {@code fair} from now on. */
	void shareFairly(FairQueue fair) {
		this.fair = fair;
	}

	/** The queue records whose turn it is wait in, if it is not {@link #ready}. */
	@Nullable FairQueue fair() {
		return this.fair;
	}

	void ready(Task task) {
		FairQueue fair = this.fair;
		if (fair != null && task instanceof RecordTask record) {
			fair.add(record);
		}
		else {
			this.ready.add(task);
		}
	}

	/** An action, or a record whose turn it is and that may run now. */
	private @Nullable Task pollReady() {
		Task task = this.ready.poll();
		FairQueue fair = this.fair;
		return (task != null || fair == null) ? task : fair.poll();
	}

	private boolean readyNow() {
		FairQueue fair = this.fair;
		return !this.ready.isEmpty() || (fair != null && fair.hasRunnable());
	}

	void failing(RecordTask task) {
		this.failing.add(task);
	}

	/** Whether records wait for their turn now. */
	boolean hasReady() {
		return readyNow();
	}

	/** Whether a worker would find a task it may take now. */
	boolean hasWork() {
		return readyNow() || (!this.failing.isEmpty() && this.handlingFailures.get() < this.failureWorkers);
	}

	/**
	 * The next task for a worker: a record whose turn it is, before any failure handling
	 * but for failure handling's share of turns; {@code null} when there is none this
	 * worker may take. A failure handling taken counts among those under way until
	 * {@link #failureHandled}.
	 */
	@Nullable Task next() {
		boolean failuresWait = !this.failing.isEmpty();
		if (!failuresWait || this.readyTurns.get() < FAILURE_TURN - 1) {
			Task task = pollReady();
			if (task != null) {
				if (failuresWait) {
					this.readyTurns.incrementAndGet();
				}
				return task;
			}
			if (!failuresWait) {
				return null;
			}
		}
		if (claim(this.handlingFailures, this.failureWorkers)) {
			Task task = this.failing.poll();
			if (task != null) {
				this.readyTurns.set(0);
				return task;
			}
			this.handlingFailures.decrementAndGet();
		}
		// failure handling's turn, but it has as many workers as it may have
		return pollReady();
	}

	/** A worker is done handling a failure. */
	void failureHandled() {
		this.handlingFailures.decrementAndGet();
	}

	void clear() {
		this.ready.clear();
		this.failing.clear();
		FairQueue fair = this.fair;
		if (fair != null) {
			fair.clear();
		}
	}

	/**
	 * Counts one more in {@code count} unless it is at {@code limit}; returns whether it
	 * did.
	 */
	static boolean claim(AtomicInteger count, int limit) {
		int now;
		do {
			now = count.get();
			if (now >= limit) {
				return false;
			}
		}
		while (!count.compareAndSet(now, now + 1));
		return true;
	}

}
