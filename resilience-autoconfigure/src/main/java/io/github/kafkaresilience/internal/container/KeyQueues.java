package io.github.kafkaresilience.internal.container;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * A partition's tasks in flight in one queue per key: the head of a key's queue runs, the
 * others wait for their turn in offset order, but for the records that ride in the head's
 * batch. A task without a key queues behind nothing. Not thread-safe: its partition's
 * monitor guards it.
 */
final class KeyQueues {

	private final Map<Bytes, ArrayDeque<KeyedTask>> queues = new HashMap<>();

	/** Queues a task behind the earlier tasks of its key; returns whether it runs now. */
	boolean enqueue(KeyedTask task) {
		if (task.key == null) {
			return true;
		}
		// most keys queue one or two
		ArrayDeque<KeyedTask> queue = this.queues.computeIfAbsent(task.key, (k) -> new ArrayDeque<>(4));
		queue.add(task);
		return queue.size() == 1;
	}

	/**
	 * A task is done: takes it off its key's queue, and returns the next task of its key
	 * when that one runs now. A rider done before the record ahead of it leaves the
	 * queue, and that record hands out the next one.
	 */
	@Nullable KeyedTask done(KeyedTask task) {
		ArrayDeque<KeyedTask> queue = queueOf(task);
		if (queue == null) {
			return null;
		}
		if (queue.peek() != task) {
			queue.remove(task);
			return null;
		}
		queue.poll();
		KeyedTask next = queue.peek();
		if (next == null) {
			this.queues.remove(task.key);
		}
		return waitsForTurn(next) ? next : null; // a rider's batch tells its outcome
	}

	/** Takes a key's whole queue away, or returns {@code null} when the key has none. */
	@Nullable ArrayDeque<KeyedTask> remove(@Nullable Bytes key) {
		return (key != null) ? this.queues.remove(key) : null;
	}

	/** Whether a task is the head of its key's queue. */
	boolean isHead(KeyedTask task) {
		ArrayDeque<KeyedTask> queue = queueOf(task);
		return queue != null && queue.peek() == task;
	}

	/** Whether a task waits in its key's queue behind an earlier one. */
	boolean isBehind(KeyedTask task) {
		ArrayDeque<KeyedTask> queue = queueOf(task);
		return queue != null && queue.peek() != task && queue.contains(task);
	}

	/**
	 * The queued records right behind a head, none of them an admission, at most
	 * {@code most}, as long as {@code fits} lets each in: those that may ride in its
	 * batch.
	 */
	List<RecordTask> riders(RecordTask head, int most, Predicate<RecordTask> fits) {
		ArrayDeque<KeyedTask> queue = queueOf(head);
		if (queue == null || most <= 0 || queue.peek() != head) {
			return List.of();
		}
		List<RecordTask> riders = new ArrayList<>();
		Iterator<KeyedTask> behind = queue.iterator();
		behind.next();
		while (behind.hasNext() && riders.size() < most) {
			// a record whose failed run waits for its key's turn to take the rest of its
			// step rides no more
			if (!(behind.next() instanceof RecordTask next) || next.state() != RecordState.QUEUED || !fits.test(next)) {
				break;
			}
			riders.add(next);
		}
		return riders;
	}

	/** How many tasks a key has queued. */
	int depth(Bytes key) {
		ArrayDeque<KeyedTask> queue = this.queues.get(key);
		return (queue != null) ? queue.size() : 0;
	}

	/** The most tasks one key has queued. */
	int deepest() {
		int deepest = 0;
		for (ArrayDeque<KeyedTask> queue : this.queues.values()) {
			deepest = Math.max(deepest, queue.size());
		}
		return deepest;
	}

	private @Nullable ArrayDeque<KeyedTask> queueOf(KeyedTask task) {
		return (task.key != null) ? this.queues.get(task.key) : null;
	}

	/**
	 * Whether a task behind the head of its key is handed out once the head is done: an
	 * admission, a queued record, or one whose failed run waits for its key's turn; not a
	 * record that rode in the head's batch and is not done yet.
	 */
	private static boolean waitsForTurn(@Nullable KeyedTask next) {
		if (!(next instanceof RecordTask record)) {
			return next != null;
		}
		RecordState state = record.state();
		return state == RecordState.QUEUED || state == RecordState.FAILURE_PENDING;
	}

}
