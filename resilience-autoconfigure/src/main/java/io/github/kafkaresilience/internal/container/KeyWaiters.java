package io.github.kafkaresilience.internal.container;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.utils.Bytes;

/**
 * The tasks that wait for their key: a lock of another record of their key is moving on
 * (docs/PROTOCOL.md, rule 2.5). A change of the key in the lock table wakes them, and so
 * does a recheck after {@code recheck-interval}, in case a change went unnoticed.
 */
final class KeyWaiters {

	private final Map<Bytes, Set<RecordTask>> waiting = new ConcurrentHashMap<>();

	private final Workers workers;

	KeyWaiters(Workers workers) {
		this.workers = workers;
	}

	/** Makes a task with a key wait for a change of it. */
	void add(RecordTask task) {
		this.waiting.computeIfAbsent(task.key, (k) -> ConcurrentHashMap.newKeySet()).add(task);
	}

	/** Wakes every task waiting for a key that changed. */
	void keyChanged(Bytes key) {
		Set<RecordTask> tasks = this.waiting.get(key);
		if (tasks != null) {
			for (RecordTask task : List.copyOf(tasks)) {
				wake(task);
			}
		}
	}

	/** Submits a task again if it still waits. */
	void wake(RecordTask task) {
		if (task.key == null) {
			return;
		}
		Set<RecordTask> tasks = this.waiting.get(task.key);
		if (tasks != null && tasks.remove(task)) {
			this.waiting.computeIfPresent(task.key, (k, set) -> set.isEmpty() ? null : set);
			this.workers.submit(task);
		}
	}

	/** Forgets the tasks of revoked partitions. */
	void forgetRevoked() {
		this.waiting.values().forEach((set) -> set.removeIf((task) -> task.work.isRevoked()));
		this.waiting.values().removeIf(Set::isEmpty);
	}

	void clear() {
		this.waiting.clear();
	}

}
