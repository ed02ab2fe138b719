package io.github.kafkaresilience.internal.container;

/**
 * What a container's workers run: a record or a replay's admission, each in its key's
 * turn on its partition ({@link KeyedTask}), an {@link Action} of the container, which
 * takes its turn among the records whose turn it is and belongs to no partition, or the
 * {@link Completion} of an attempt whose result completed after its worker was let go.
 */
sealed interface Task permits KeyedTask, Task.Action, Task.Completion {

	/** Whether the task's partition was revoked; an action's never is. */
	boolean revoked();

	/**
	 * A task that runs an action of the container in the turn of the records queued
	 * before it.
	 */
	static Action action(Runnable action) {
		return new Action(action);
	}

	/**
	 * The end of an attempt whose handler's result completed ({@link AsyncRuns}): it
	 * takes the rest of its record's step in its turn, although the workers hold, and
	 * while the container stops, as a handler run under way finishes then.
	 *
	 * @param run what ends the attempt
	 */
	record Completion(Runnable run) implements Task {

		@Override
		public boolean revoked() {
			return false;
		}

		@Override
		public String toString() {
			return "completion " + this.run;
		}

	}

	/**
	 * An action of the container: it runs in its turn although the workers hold.
	 *
	 * @param run what the action does
	 */
	record Action(Runnable run) implements Task {

		@Override
		public boolean revoked() {
			return false;
		}

		@Override
		public String toString() {
			return "action " + this.run;
		}

	}

}
