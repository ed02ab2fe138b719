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

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The threads that run a container's tasks, and its timer. Ready tasks wait in one queue
 * that at most {@code concurrency} workers drain; a worker is started only when fewer are
 * draining. While records arrive faster than the workers finish them, no worker sleeps and no
 * record costs a thread hand-off. Restartable: {@link #start()} after {@link #stop(Duration)}
 * makes new threads.
 */
final class Workers {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(OrderedRetryContainer.class);

	private final String id;

	private final int concurrency;

	private final WorkerThreads threads;

	private final java.util.function.Consumer<Task> runner;

	private final Queue<Task> ready = new ConcurrentLinkedQueue<>();

	/** How many workers are draining {@link #ready}: at most {@code concurrency}. */
	private final AtomicInteger draining = new AtomicInteger();

	private volatile boolean stopping = true;

	/** While held, ready tasks wait in {@link #heldTasks} instead of running. */
	private volatile boolean held;

	private final Queue<Task> heldTasks = new ConcurrentLinkedQueue<>();

	private @Nullable ExecutorService pool;

	private @Nullable ScheduledExecutorService timer;

	/** Workers on platform threads: for tests. */
	Workers(String id, int concurrency, java.util.function.Consumer<Task> runner) {
		this(id, concurrency, WorkerThreads.PLATFORM, runner);
	}

	/**
	 * @param id the listener id, for thread names and logs
	 * @param concurrency the most tasks that run at once
	 * @param threads the kind of thread the workers are
	 * @param runner runs one task; what it throws is logged and leaves the record pending
	 */
	Workers(String id, int concurrency, WorkerThreads threads, java.util.function.Consumer<Task> runner) {
		this.id = id;
		this.concurrency = concurrency;
		this.threads = threads;
		this.runner = runner;
	}

	synchronized void start() {
		this.pool = this.threads.workers(this.id, this.concurrency);
		this.timer = Executors
			.newSingleThreadScheduledExecutor(WorkerThreads.platform("kafka-resilience-" + this.id + "-timer-"));
		this.held = false;
		this.stopping = false;
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
		this.heldTasks.clear();
		return true;
	}

	/**
	 * Holds the tasks that become ready from now on, until {@link #release()}: the running
	 * ones finish.
	 */
	void hold() {
		this.held = true;
	}

	/** Runs the held tasks, and the tasks that become ready from now on. */
	void release() {
		this.held = false;
		submitHeld();
	}

	private void holdBack(Task task) {
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

	/** Makes a task ready to run, unless stopping or its partition was revoked. */
	void submit(Task task) {
		if (this.stopping || task.work.isRevoked()) {
			return;
		}
		if (this.held) {
			holdBack(task);
			return;
		}
		this.ready.add(task);
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
		int now;
		do {
			now = this.draining.get();
			if (now >= this.concurrency) {
				return false;
			}
		}
		while (!this.draining.compareAndSet(now, now + 1));
		return true;
	}

	private void drain() {
		do {
			try {
				Task task;
				while ((task = this.ready.poll()) != null) {
					if (this.stopping || task.work.isRevoked()) {
						continue;
					}
					if (this.held) {
						holdBack(task);
						continue;
					}
					try {
						this.runner.accept(task);
					}
					catch (RuntimeException ex) {
						// a bug: the record stays pending, so it is delivered again after a restart
						logger.error("Listener '" + this.id + "' failed to run " + task, ex);
					}
				}
			}
			finally {
				this.draining.decrementAndGet();
			}
			// a task added after the queue looked empty, while every drainer was still counted
		}
		while (!this.ready.isEmpty() && claimDrainer());
	}

}
