package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The threads that run a container's tasks, and its timer. At most {@code concurrency}
 * workers take tasks in their {@link Turns}: records whose turn it is ({@link #submit})
 * before the failure handling of records whose handler just failed
 * ({@link #submitFailure}), but for failure handling's share of turns. While the workers
 * are held ({@link Holds}), ready tasks wait. A worker is started only when fewer are
 * draining. While records arrive faster than the workers finish them, no worker sleeps
 * and no record costs a thread hand-off. Restartable: {@link #start()} after
 * {@link #stop(Duration)} makes new threads.
 */
final class Workers {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(Workers.class);

	private final String id;

	private final int concurrency;

	private final WorkerThreads threads;

	/**
	 * Runs a task; returns the next task of its key when that may run at once, or
	 * {@code null}.
	 */
	private final Function<KeyedTask, @Nullable KeyedTask> runner;

	/**
	 * The most records of one key a worker runs in one turn: a key whose next record is
	 * ready when its record is done runs it at once, instead of going to the back of the
	 * queue behind every record queued meanwhile, up to this many.
	 */
	static final int KEY_TURN = 32;

	private final Turns turns;

	private final Holds holds = new Holds();

	/** How many workers are draining the turns: at most {@link #limit}. */
	private final AtomicInteger draining = new AtomicInteger();

	/**
	 * The most workers that drain at once: {@code concurrency}, less while an outage's
	 * ramp lasts.
	 */
	private volatile int limit;

	private volatile boolean stopping = true;

	/** Read by the threads that complete results, too ({@link #submitCompletion}). */
	private volatile @Nullable ExecutorService pool;

	private @Nullable ScheduledExecutorService timer;

	/** Workers on platform threads: for tests. */
	Workers(String id, int concurrency, Consumer<KeyedTask> runner) {
		this(id, concurrency, WorkerThreads.PLATFORM, (task) -> {
			runner.accept(task);
			return null;
		});
	}

	/**
	 * @param id the listener id, for thread names and logs
	 * @param concurrency the most tasks that run at once
	 * @param threads the kind of thread the workers are
	 * @param runner runs one task and returns the next task of its key when that may run
	 * at once (its record is done), or {@code null}; what it throws is logged and leaves
	 * the record pending
	 */
	Workers(String id, int concurrency, WorkerThreads threads, Function<KeyedTask, @Nullable KeyedTask> runner) {
		this.id = id;
		this.concurrency = concurrency;
		this.limit = concurrency;
		this.turns = new Turns(concurrency);
		this.threads = threads;
		this.runner = runner;
	}

	synchronized void start() {
		this.pool = this.threads.workers(this.id, this.concurrency);
		this.timer = Executors
			.newSingleThreadScheduledExecutor(WorkerThreads.platform("kafka-resilience-" + this.id + "-timer-"));
		this.holds.restart();
		this.limit = this.concurrency;
		this.stopping = false;
	}

	/**
	 * Hands out the records whose turn it is through a queue that shares the workers
	 * fairly between tenants or limits their rate: each record then takes its turn there,
	 * none runs right after the record of its key before it on the same worker. Before
	 * {@link #start()}.
	 * @param fair makes that queue; it asks for a wake-up when its records wait for a
	 * rate limit
	 */
	FairQueue shareFairly(Function<LongConsumer, FairQueue> fair) {
		FairQueue queue = fair.apply(this::wakeIn);
		this.turns.shareFairly(queue);
		return queue;
	}

	/**
	 * Starts a worker again once a rate limit lets a record run: in {@code nanos},
	 * rounded up to the timer's millisecond. One worker: a permit comes free at a time,
	 * and a worker that takes one starts another while more may run
	 * ({@link #startAnotherIfLimited}), so a wake-up costs one hand-off, not one per
	 * worker.
	 */
	private void wakeIn(long nanos) {
		later(() -> {
			FairQueue fair = this.turns.fair();
			if (fair != null) {
				fair.woken();
			}
			if (this.turns.hasWork() && !this.stopping) {
				startDrainer();
			}
		}, Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos + 999_999)));
	}

	/**
	 * A worker took a record under a rate limit: starts another if more may run now,
	 * since records that waited for a permit were submitted without starting one.
	 */
	private void startAnotherIfLimited(Task taken) {
		FairQueue fair = this.turns.fair();
		if (fair != null && fair.limited() && taken instanceof RecordTask && this.turns.hasReady()) {
			startDrainer();
		}
	}

	/**
	 * Counts records that run in the batch of a record already handed out against the
	 * rate limits.
	 */
	void charge(String tenant, int records) {
		FairQueue fair = this.turns.fair();
		if (fair != null) {
			fair.charge(tenant, records);
		}
	}

	/** The most tasks that run at once. */
	int concurrency() {
		return this.concurrency;
	}

	/**
	 * Lets at most {@code workers} (at least one, at most {@code concurrency}) run tasks
	 * from now on: those running beyond it finish their task first. Raising it starts
	 * workers for the tasks that wait.
	 */
	void limit(int workers) {
		int bounded = Math.max(1, Math.min(workers, this.concurrency));
		this.limit = bounded;
		for (int i = 0; i < bounded && this.turns.hasWork() && !this.stopping; i++) {
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
	 * Stops the timer and waits for the running tasks up to {@code timeout}; returns
	 * false if some were still running (they are interrupted).
	 */
	boolean stop(Duration timeout) {
		this.stopping = true;
		ExecutorService pool = this.pool;
		ScheduledExecutorService timer = this.timer;
		if (pool == null || timer == null) {
			return true; // never started
		}
		timer.shutdownNow();
		pool.shutdown();
		try {
			if (!pool.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
				pool.shutdownNow();
				return false;
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.turns.clear();
		this.holds.clear();
		return true;
	}

	/**
	 * Holds the tasks that become ready from now on, until every holder has released
	 * them: the running ones finish.
	 * @param holder {@link Holds#APPLICATION} or {@link Holds#OUTAGE}
	 */
	void hold(int holder) {
		this.holds.hold(holder);
	}

	/**
	 * Withdraws a holder's hold: once no one holds them, runs the held tasks, in the
	 * order they were held, and the tasks that become ready from now on.
	 */
	void release(int holder) {
		this.holds.release(holder);
		submitHeld();
	}

	/** Who holds the workers, and the tasks held. */
	Holds holds() {
		return this.holds;
	}

	/**
	 * Runs a task as a probe: although the workers hold, it runs (its key's next tasks do
	 * not).
	 */
	void submitProbe(KeyedTask task) {
		if (this.stopping || task.work.isRevoked()) {
			return;
		}
		if (task instanceof RecordTask record) {
			record.work.advance(record, RecordState.PROBING);
		}
		this.turns.ready(task);
		startDrainer();
	}

	/**
	 * Holds a task until the workers are released; runs it now if they were released
	 * meanwhile.
	 */
	void holdBack(KeyedTask task) {
		this.holds.add(task);
		if (!this.holds.isHeld()) {
			submitHeld(); // released meanwhile
		}
	}

	private void submitHeld() {
		for (KeyedTask task; (task = this.holds.releasedNext()) != null;) {
			submit(task);
		}
	}

	/**
	 * Makes a task ready to run, unless stopping or its partition was revoked. An action
	 * is never held: it runs in its turn although the workers hold. A record whose failed
	 * run waits for the rest of its step goes to the failure handling.
	 */
	void submit(Task task) {
		if (this.stopping || task.revoked()) {
			return;
		}
		if (task instanceof RecordTask record && record.state() == RecordState.FAILURE_PENDING) {
			submitFailure(record); // a rider whose run failed in its batch, in its key's
									// turn now
			return;
		}
		if (task instanceof KeyedTask keyed) {
			if (keyed instanceof RecordTask record) {
				record.work.handBack(record);
			}
			if (this.holds.isHeld()) {
				holdBack(keyed);
				return;
			}
		}
		this.turns.ready(task);
		startDrainer();
	}

	/**
	 * Makes tasks ready to run, as {@link #submit} does, all of them queued before any
	 * runs: a poll's records are routed in their order, and a batch gathered from them
	 * takes them all.
	 */
	void submitAll(List<? extends KeyedTask> tasks) {
		if (this.stopping) {
			return;
		}
		if (this.holds.isHeld()) {
			tasks.forEach(this::submit);
			return;
		}
		int queued = 0;
		for (KeyedTask task : tasks) {
			if (!task.revoked()) {
				this.turns.ready(task);
				queued++;
			}
		}
		for (int i = 0; i < Math.min(queued, this.concurrency); i++) {
			startDrainer();
		}
	}

	/**
	 * Queues the failure handling of a record whose handler failed: the rest of its step
	 * runs once no record waits for its turn, or in failure handling's share of turns. A
	 * record held or paused still has its failure handled: its run had begun.
	 */
	void submitFailure(RecordTask task) {
		if (this.stopping || task.work.isRevoked()) {
			return;
		}
		this.turns.failing(task);
		startDrainer();
	}

	private void startDrainer() {
		if (claimDrainer()) {
			try {
				Objects.requireNonNull(this.pool, "not started").execute(this::drain);
			}
			catch (RejectedExecutionException ex) {
				// stopping: the records are delivered again after the restart
				this.draining.decrementAndGet();
			}
		}
	}

	/**
	 * Queues the end of an attempt whose result completed, called on the completing
	 * thread: it runs in its turn although the workers hold or stop taking records;
	 * returns false when the workers have stopped (it will not run).
	 */
	boolean submitCompletion(Runnable completion) {
		ExecutorService pool = this.pool;
		if (pool == null || pool.isShutdown()) {
			return false;
		}
		this.turns.ready(new Task.Completion(completion));
		startDrainer();
		return true;
	}

	/** Whether records wait for their turn now. */
	boolean hasReadyTasks() {
		return this.turns.hasReady();
	}

	/** Submits a task after a delay. */
	void submitLater(KeyedTask task, long delayMillis) {
		later(() -> submit(task), delayMillis);
	}

	/** Runs an action on the timer thread after a delay, unless stopping. */
	void later(Runnable action, long delayMillis) {
		if (this.stopping) {
			return;
		}
		try {
			Objects.requireNonNull(this.timer, "not started")
				.schedule(action, Math.max(0, delayMillis), TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			// stopping
		}
	}

	private boolean claimDrainer() {
		return Turns.claim(this.draining, this.limit);
	}

	private void drain() {
		do {
			try {
				// a lowered limit lets the workers beyond it go after their task
				for (Task task; this.draining.get() <= this.limit && (task = this.turns.next()) != null;) {
					// only failure handling carries the rest of a step (its run takes it)
					boolean failure = failurePending(task);
					startAnotherIfLimited(task);
					try {
						KeyedTask next = run(task);
						if (failure) {
							submitNext(next); // a failure handler takes no records
						}
						else {
							runKeyTurn(next);
						}
					}
					finally {
						if (failure) {
							this.turns.failureHandled();
						}
					}
				}
			}
			finally {
				this.draining.decrementAndGet();
			}
			// a task added after the queues looked empty, while every drainer was still
			// counted
		}
		while (this.turns.hasWork() && claimDrainer());
	}

	/**
	 * Runs the records of a key that become ready one after the other on this worker, up
	 * to {@value #KEY_TURN} in one turn: the next of them then waits at the back of the
	 * queue.
	 */
	private void runKeyTurn(@Nullable KeyedTask next) {
		for (int ran = 1; next != null; ran++) {
			if (ran >= KEY_TURN || (next instanceof RecordTask && this.turns.fair() != null)) {
				submit(next);
				return;
			}
			next = run(next);
		}
	}

	private void submitNext(@Nullable KeyedTask next) {
		if (next != null) {
			submit(next);
		}
	}

	/**
	 * Runs a task unless it may not run now; returns the next of its key that may run at
	 * once.
	 */
	private @Nullable KeyedTask run(Task next) {
		if (next instanceof Task.Completion completion) {
			runAction(completion.run(), completion);
			return null;
		}
		if (this.stopping || next.revoked()) {
			return null;
		}
		if (next instanceof Task.Action action) {
			runAction(action.run(), action);
			return null;
		}
		KeyedTask task = (KeyedTask) next;
		if (this.holds.isHeld() && !failurePending(task) && !probing(task)) {
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

	private void runAction(Runnable action, Task task) {
		try {
			action.run();
		}
		catch (RuntimeException ex) {
			logger.error("Listener '" + this.id + "' failed to run " + task, ex);
		}
	}

	private static boolean failurePending(Task task) {
		return task instanceof RecordTask record && record.state() == RecordState.FAILURE_PENDING;
	}

	private static boolean probing(KeyedTask task) {
		return task instanceof RecordTask record && record.state() == RecordState.PROBING;
	}

}
