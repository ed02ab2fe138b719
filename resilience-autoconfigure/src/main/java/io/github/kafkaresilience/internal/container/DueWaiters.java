package io.github.kafkaresilience.internal.container;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.kafkaresilience.internal.lock.OperatorCommand;

/**
 * The records that wait in memory for their due time. Each is handed back to the workers
 * once: when its due time comes, or earlier when an operator's command names the lock it
 * carries (docs/PROTOCOL.md, rule 11), so that the command is acted on now rather than
 * when the record comes due.
 */
final class DueWaiters {

	private final Set<RecordTask> waiting = ConcurrentHashMap.newKeySet();

	private final Workers workers;

	DueWaiters(Workers workers) {
		this.workers = workers;
	}

	/** Makes a task wait until its due time, {@code delayMillis} from now. */
	void waitFor(RecordTask task, long delayMillis) {
		this.waiting.add(task);
		this.workers.later(() -> wake(task), delayMillis);
	}

	/** Wakes the task that carries the lock a command names, if one waits here. */
	void commanded(OperatorCommand command) {
		for (RecordTask task : this.waiting) {
			if (task.isNamedBy(command)) {
				wake(task);
			}
		}
	}

	/** Hands a waiting task back to the workers now, once. */
	void wake(RecordTask task) {
		if (this.waiting.remove(task)) {
			this.workers.submit(task);
		}
	}

	void clear() {
		this.waiting.clear();
	}

}
