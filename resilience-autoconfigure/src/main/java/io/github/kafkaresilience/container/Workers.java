package io.github.kafkaresilience.container;

import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The threads that run a container's tasks, and its timer. Tasks wait in two queues that at
 * most {@code concurrency} workers drain: records whose turn it is ({@link #submit}), and the
 * failure handling of records whose handler just failed ({@link #submitFailure}). A worker
 * takes a record whose turn it is before any failure handling, so a key whose next record is
 * ready never waits behind the failure handling of other keys (docs/PROTOCOL.md, "Guarantees"); failure handling
 * gets one turn in {@value #FAILURE_TURN} while records wait, so it is never starved, and at
 * most {@code concurrency - 1} workers handle failures at once, so one is always free for a
 * ready record. A worker is started only when fewer are draining. While records arrive faster
 * than the workers finish them, no worker sleeps and no record costs a thread hand-off.
 * Restartable: {@link #start()} after {@link #stop(Duration)} makes new threads.
 */
final class Workers {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(OrderedRetryContainer.class);

	private final String id;

	private final int concurrency;

	private final WorkerThreads threads;

	/** Runs a task; returns the next task of its key when that may run at once, or {@code null}. */
	private final Function<Task, @Nullable Task> runner;

	/**
	 * While both queues hold tasks, one turn in this many goes to failure handling: a record
	 * whose turn it is waits behind at most one failure handled per worker in this many turns.
	 */
	static final int FAILURE_TURN = 8;

	/**
	 * The most records of one key a worker runs in one turn: a key whose next record is ready
	 * when its record is done runs it at once, instead of going to the back of the queue behind
	 * every record queued meanwhile, up to this many.
	 */
	static final int KEY_TURN = 32;

	/** Records whose turn it is. */
	private final Queue<Task> ready = new ConcurrentLinkedQueue<>();

	/** Records whose handler failed, waiting for the rest of their step. */
	private final Queue<Task> failing = new ConcurrentLinkedQueue<>();

	/** The most workers that handle failures at once: all but one, when there are two or more. */
	private final int failureWorkers;

	/** How many workers are handling a failure now: at most {@link #failureWorkers}. */
	private final AtomicInteger handlingFailures = new AtomicInteger();

	/** Turns taken from {@link #ready} since failure handling last had one. */
	private final AtomicInteger readyTurns = new AtomicInteger();

	/** How many workers are draining {@link #ready}: at most {@link #limit}. */
	private final AtomicInteger draining = new AtomicInteger();

	/** The most workers that drain at once: {@code concurrency}, less while an outage's ramp lasts. */
	private volatile int limit;

	/** Holds the workers at the application's request ({@code pause()}). */
	static final int APPLICATION = 1;

	/** Holds the workers while the listener's outage breaker is open. */
	static final int OUTAGE = 2;

	private volatile boolean stopping = true;

	/** While held, ready tasks wait in {@link #heldTasks} instead of running. */
	private volatile boolean held;

	/** Who holds the workers: {@link #APPLICATION}, {@link #OUTAGE}, both or none. */
	private int holders;

	private final Queue<Task> heldTasks = new ConcurrentLinkedQueue<>();

	private @Nullable ExecutorService pool;

	private @Nullable ScheduledExecutorService timer;

	/** Workers on platform threads: for tests. */
	Workers(String id, int concurrency, java.util.function.Consumer<Task> runner) {
		this(id, concurrency, WorkerThreads.PLATFORM, (task) -> {
			runner.accept(task);
			return null;
		});
	}

	/**
	 * @param id the listener id, for thread names and logs
	 * @param concurrency the most tasks that run at once
	 * @param threads the kind of thread the workers are
	 * @param runner runs one task and returns the next task of its key when that may run at once
	 * (its record is done), or {@code null}; what it throws is logged and leaves the record
	 * pending
	 */
	Workers(String id, int concurrency, WorkerThreads threads, Function<Task, @Nullable Task> runner) {
		this.id = id;
		this.concurrency = concurrency;
		this.limit = concurrency;
		this.failureWorkers = Math.max(1, concurrency - 1);
		this.threads = threads;
		this.runner = runner;
	}

	synchronized void start() {
		this.pool = this.threads.workers(this.id, this.concurrency);
		this.timer = Executors
			.newSingleThreadScheduledExecutor(WorkerThreads.platform("kafka-resilience-" + this.id + "-timer-"));
		this.held = false;
		this.limit = this.concurrency;
		this.stopping = false;
	}

	/** The most tasks that run at once. */
	int concurrency() {
		return this.concurrency;
	}

	/**
	 * Lets at most {@code workers} (at least one, at most {@code concurrency}) run tasks from
	 * now on: those running beyond it finish their task first. Raising it starts workers for
	 * the tasks that wait.
	 */
	void limit(int workers) {
		int bounded = Math.max(1, Math.min(workers, this.concurrency));
		this.limit = bounded;
		for (int i = 0; i < bounded && hasWork() && !this.stopping; i++) {
			startDrainer();
		}
	}

	/** The most workers that run tasks at once now. */
	int limit() {
		return this.limit;
	}

	/** Whether the container is stopping: tasks are no longer run or scheduled. */
	boolean stopping() {
		return this.stopping;
	}

	/** Takes no more tasks; the running ones go on. */
	void stopTaking() {
		this.stopping = true;
	}

	/**
	 * Stops the timer and waits for the running tasks up to {@code timeout}; returns false if
	 * some were still running (they are interrupted).
	 */
	boolean stop(Duration timeout) {
		this.stopping = true;
		if (this.pool == null) {
			return true; // never started
		}
		this.timer.shutdownNow();
		this.pool.shutdown();
		try {
			if (!this.pool.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
				this.pool.shutdownNow();
				return false;
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.ready.clear();
		this.failing.clear();
		this.heldTasks.clear();
		return true;
	}

	/**
	 * Holds the tasks that become ready from now on, until every holder has released them: the
	 * running ones finish.
	 * @param holder {@link #APPLICATION} or {@link #OUTAGE}
	 */
	void hold(int holder) {
		synchronized (this.heldTasks) {
			this.holders |= holder;
			this.held = true;
		}
	}

	/**
	 * Withdraws a holder's hold: once no one holds them, runs the held tasks, in the order they
	 * were held, and the tasks that become ready from now on.
	 */
	void release(int holder) {
		synchronized (this.heldTasks) {
			this.holders &= ~holder;
			this.held = (this.holders != 0);
		}
		submitHeld();
	}

	/** How many tasks wait for the workers to be released. */
	int heldCount() {
		return this.heldTasks.size();
	}

	/**
	 * Takes the task held longest that {@code fits}, to run it as a probe; {@code null} when
	 * none does. Tasks of revoked partitions are dropped on the way.
	 */
	@Nullable Task takeHeld(java.util.function.Predicate<Task> fits) {
		for (java.util.Iterator<Task> tasks = this.heldTasks.iterator(); tasks.hasNext();) {
			Task task = tasks.next();
			if (task.work.isRevoked()) {
				tasks.remove();
			}
			else if (fits.test(task)) {
				tasks.remove();
				return task;
			}
		}
		return null;
	}

	/** Runs a task as a probe: although the workers hold, it runs (its key's next tasks do not). */
	void submitProbe(Task task) {
		task.probe = true;
		if (this.stopping || task.work.isRevoked()) {
			return;
		}
		this.ready.add(task);
		startDrainer();
	}

	/** Holds a task until the workers are released; runs it now if they were released meanwhile. */
	void holdBack(Task task) {
		task.probe = false;
		this.heldTasks.add(task);
		if (!this.held) {
			submitHeld(); // released meanwhile
		}
	}

	private void submitHeld() {
		for (Task task; !this.held && (task = this.heldTasks.poll()) != null;) {
			submit(task);
		}
	}

	/**
	 * Makes a task ready to run, unless stopping or its partition was revoked. An action is
	 * never held: it runs in its turn although the workers hold.
	 */
	void submit(Task task) {
		if (this.stopping || task.revoked()) {
			return;
		}
		if (this.held && task.action == null) {
			holdBack(task);
			return;
		}
		this.ready.add(task);
		startDrainer();
	}

	/**
	 * Makes tasks ready to run, as {@link #submit} does, all of them queued before any runs: a
	 * poll's records are routed in their order, and a batch gathered from them takes them all.
	 */
	void submitAll(java.util.List<Task> tasks) {
		if (this.stopping) {
			return;
		}
		if (this.held) {
			tasks.forEach(this::submit);
			return;
		}
		int queued = 0;
		for (Task task : tasks) {
			if (!task.revoked()) {
				this.ready.add(task);
				queued++;
			}
		}
		for (int i = 0; i < Math.min(queued, this.concurrency); i++) {
			startDrainer();
		}
	}

	/**
	 * Queues the failure handling of a record whose handler failed: the rest of its step runs
	 * once no record waits for its turn, or in failure handling's share of turns. A record held
	 * or paused still has its failure handled: its run had begun.
	 */
	void submitFailure(Task task) {
		if (this.stopping || task.work.isRevoked()) {
			return;
		}
		this.failing.add(task);
		startDrainer();
	}

	private void startDrainer() {
		if (claimDrainer()) {
			try {
				this.pool.execute(this::drain);
			}
			catch (RejectedExecutionException ex) {
				// stopping: the records are delivered again after the restart
				this.draining.decrementAndGet();
			}
		}
	}

	/** Whether records wait for their turn now. */
	boolean hasReadyTasks() {
		return !this.ready.isEmpty();
	}

	/** Submits a task after a delay. */
	void submitLater(Task task, long delayMillis) {
		later(() -> submit(task), delayMillis);
	}

	/** Runs an action on the timer thread after a delay, unless stopping. */
	void later(Runnable action, long delayMillis) {
		if (this.stopping) {
			return;
		}
		try {
			this.timer.schedule(action, Math.max(0, delayMillis), TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			// stopping
		}
	}

	private boolean claimDrainer() {
		return claim(this.draining, this.limit);
	}

	private void drain() {
		do {
			try {
				// a lowered limit lets the workers beyond it go after their task
				for (Task task; this.draining.get() <= this.limit && (task = nextTask()) != null;) {
					// only failure handling carries the rest of a step (RecordRunner clears it as it runs)
					boolean failure = task.rest != null;
					try {
						Task next = run(task);
						if (failure) {
							submitNext(next); // a failure handler takes no records
						}
						else {
							runKeyTurn(next);
						}
					}
					finally {
						if (failure) {
							this.handlingFailures.decrementAndGet();
						}
					}
				}
			}
			finally {
				this.draining.decrementAndGet();
			}
			// a task added after the queues looked empty, while every drainer was still counted
		}
		while (hasWork() && claimDrainer());
	}

	private boolean hasWork() {
		return !this.ready.isEmpty() || (!this.failing.isEmpty() && this.handlingFailures.get() < this.failureWorkers);
	}

	/**
	 * The next task for a worker: a record whose turn it is, before any failure handling but
	 * for failure handling's share of turns; {@code null} when there is none this worker may
	 * take. A failure handling taken counts in {@link #handlingFailures} until it has run.
	 */
	private @Nullable Task nextTask() {
		boolean failuresWait = !this.failing.isEmpty();
		if (!failuresWait || this.readyTurns.get() < FAILURE_TURN - 1) {
			Task task = this.ready.poll();
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
		if (claimFailureWorker()) {
			Task task = this.failing.poll();
			if (task != null) {
				this.readyTurns.set(0);
				return task;
			}
			this.handlingFailures.decrementAndGet();
		}
		// failure handling's turn, but it has as many workers as it may have
		return this.ready.poll();
	}

	private boolean claimFailureWorker() {
		return claim(this.handlingFailures, this.failureWorkers);
	}

	/** Counts one more in {@code count} unless it is at {@code limit}; returns whether it did. */
	private static boolean claim(AtomicInteger count, int limit) {
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

	/**
	 * Runs the records of a key that become ready one after the other on this worker, up to
	 * {@value #KEY_TURN} in one turn: the next of them then waits at the back of the queue.
	 */
	private void runKeyTurn(@Nullable Task next) {
		for (int ran = 1; next != null; ran++) {
			if (ran >= KEY_TURN) {
				submit(next);
				return;
			}
			next = run(next);
		}
	}

	private void submitNext(@Nullable Task next) {
		if (next != null) {
			submit(next);
		}
	}

	/** Runs a task unless it may not run now; returns the next of its key that may run at once. */
	private @Nullable Task run(Task task) {
		if (this.stopping || task.revoked()) {
			return null;
		}
		if (task.action != null) {
			try {
				task.action.run();
			}
			catch (RuntimeException ex) {
				logger.error("Listener '" + this.id + "' failed to run " + task, ex);
			}
			return null;
		}
		if (this.held && task.rest == null && !task.probe) {
			holdBack(task);
			return null;
		}
		if (!task.work.runs.begin()) {
			return null; // its partition is being revoked: the next owner runs it
		}
		try {
			return this.runner.apply(task);
		}
		catch (RuntimeException ex) {
			// a bug: the record stays pending, so it is delivered again after a restart
			logger.error("Listener '" + this.id + "' failed to run " + task, ex);
			return null;
		}
		finally {
			task.work.runs.end();
		}
	}

}
