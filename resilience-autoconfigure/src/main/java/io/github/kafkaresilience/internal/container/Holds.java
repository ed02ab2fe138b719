package io.github.kafkaresilience.internal.container;

import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * Who holds a container's workers, and the tasks held meanwhile: while anyone holds them,
 * a task that becomes ready waits here instead of running, in the order it was held.
 */
final class Holds {

	/** Holds the workers at the application's request ({@code pause()}). */
	static final int APPLICATION = 1;

	/** Holds the workers while the listener's outage breaker is open. */
	static final int OUTAGE = 2;

	/** While held, ready tasks wait in {@link #tasks} instead of running. */
	private volatile boolean held;

	/** Who holds the workers: {@link #APPLICATION}, {@link #OUTAGE}, both or none. */
	private int holders;

	private final Queue<KeyedTask> tasks = new ConcurrentLinkedQueue<>();

	boolean isHeld() {
		return this.held;
	}

	/** Holds the tasks that become ready from now on. */
	void hold(int holder) {
		synchronized (this.tasks) {
			this.holders |= holder;
			this.held = true;
		}
	}

	/** Withdraws a holder's hold. */
	void release(int holder) {
		synchronized (this.tasks) {
			this.holders &= ~holder;
			this.held = (this.holders != 0);
		}
	}

	/**
	 * Lets the tasks that become ready run again on a restart, whoever held them before:
	 * a holder that still holds says so again.
	 */
	void restart() {
		this.held = false;
	}

	/** Holds a task: a record becomes {@link RecordState#HELD}. */
	void add(KeyedTask task) {
		if (task instanceof RecordTask record) {
			record.work.advance(record, RecordState.HELD);
		}
		this.tasks.add(task);
	}

	/** The task held longest, once no one holds the workers; {@code null} otherwise. */
	@Nullable KeyedTask releasedNext() {
		return this.held ? null : this.tasks.poll();
	}

	/**
	 * Takes the task held longest that {@code fits}; {@code null} when none does. Tasks
	 * of revoked partitions are dropped on the way.
	 */
	@Nullable KeyedTask take(Predicate<KeyedTask> fits) {
		for (Iterator<KeyedTask> held = this.tasks.iterator(); held.hasNext();) {
			KeyedTask task = held.next();
			if (task.work.isRevoked()) {
				held.remove();
			}
			else if (fits.test(task)) {
				held.remove();
				return task;
			}
		}
		return null;
	}

	int count() {
		return this.tasks.size();
	}

	void clear() {
		this.tasks.clear();
	}

}
