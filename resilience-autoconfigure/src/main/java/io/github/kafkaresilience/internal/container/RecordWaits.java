package io.github.kafkaresilience.internal.container;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.BiPredicate;
import java.util.function.Supplier;

import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.ladder.Delivery;

import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.support.Backoff;
import org.apache.kafka.clients.consumer.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Where a container's records wait without a worker: for their due time (in memory, or
 * parked to be read again from the log when it is far), for a change of their key's
 * locks, or for the lock tailer to catch up. Each is handed back to the workers when its
 * wait ends.
 */
final class RecordWaits {

	private static final Duration FIRST_BACKOFF = Duration.ofMillis(500);

	private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

	private final ContainerSettings settings;

	private final Clock clock;

	private final Workers workers;

	private final KeyWaiters keyWaiters;

	private final DueWaiters dueWaiters;

	private final String id;

	/**
	 * Creates the re-reader's consumer at each start, or {@code null} when nothing is
	 * parked.
	 */
	private volatile @Nullable Supplier<Consumer<byte[], byte[]>> rereaders;

	private volatile @Nullable Rereader rereader;

	RecordWaits(String id, ContainerSettings settings, Clock clock, Workers workers) {
		this.id = id;
		this.settings = settings;
		this.clock = clock;
		this.workers = workers;
		this.keyWaiters = new KeyWaiters(workers);
		this.dueWaiters = new DueWaiters(workers);
	}

	KeyWaiters keyWaiters() {
		return this.keyWaiters;
	}

	DueWaiters dueWaiters() {
		return this.dueWaiters;
	}

	/**
	 * Parks far-off retries, read again at each run by a consumer that {@code rereaders}
	 * creates.
	 */
	void parkWith(Supplier<Consumer<byte[], byte[]>> rereaders) {
		this.rereaders = rereaders;
	}

	/**
	 * Starts the re-reader of a run, if retries are parked; it hands each record read
	 * again to {@code unpark}.
	 */
	void startParking(Partitions partitions, BiPredicate<PartitionWork, Delivery> unpark) {
		Supplier<Consumer<byte[], byte[]>> rereaders = this.rereaders;
		if (rereaders != null) {
			Rereader rereader = new Rereader(this.id, rereaders.get(), partitions, this.settings, this.clock,
					(work, record) -> work.route.router().earliestRun(record), unpark);
			this.rereader = rereader;
			rereader.start();
		}
	}

	/** Creates the consumer parked records are read again with, or {@code null}. */
	@Nullable Supplier<Consumer<byte[], byte[]>> parking() {
		return this.rereaders;
	}

	/** Stops the re-reader of the run, if there is one. */
	void stopParking() {
		Rereader rereader = this.rereader;
		if (rereader != null) {
			rereader.stop();
		}
	}

	/** Forgets the records waiting in memory, once the container stopped. */
	void clear() {
		this.keyWaiters.clear();
		this.dueWaiters.clear();
	}

	/** The re-reader far-off retries are parked with, or {@code null}. */
	@Nullable Rereader rereader() {
		return this.rereader;
	}

	/**
	 * Makes a record wait for its due time: parked when it is far and parking has room,
	 * in memory otherwise. A command that names it meanwhile wakes it.
	 */
	void until(RecordTask task, long dueAt) {
		if (park(task, dueAt)) {
			return;
		}
		task.work.advance(task, RecordState.WAITING);
		this.dueWaiters.waitFor(task, dueAt - this.clock.millis());
		if (task.commandPending()) {
			this.dueWaiters.wake(task); // a command arrived while we were looking
		}
	}

	/**
	 * Runs a task (a record, or an admission) once the tailer has caught up with its lock
	 * partition, which has the number of the task's partition.
	 */
	void forTailer(KeyedTask task) {
		task.work.route.registry().catchUp(task.work.partition.partition()).whenComplete((ignored, ex) -> {
			if (ex != null) {
				this.workers.submitLater(task, backoff(task.countFailure()).toMillis());
			}
			else {
				task.caughtUp();
				this.workers.submit(task);
			}
		});
	}

	/**
	 * Makes a record wait for a change of its key's locks, or for the recheck interval.
	 */
	void forKey(RecordTask task, RetryContainer.Route route, List<Lock> before) {
		this.keyWaiters.add(task);
		if (!route.registry().locksOf(Objects.requireNonNull(task.key)).equals(before)) {
			this.keyWaiters.wake(task); // changed while we were looking
			return;
		}
		this.workers.later(() -> this.keyWaiters.wake(task), this.settings.recheckInterval().toMillis());
	}

	/**
	 * Parks the head of a key that waits for a due time far ahead, with every record of
	 * its key queued behind it. Returns false when parking is off, the due time is near
	 * or the partition's parking bound is reached; the task then waits in memory.
	 */
	private boolean park(RecordTask task, long dueAt) {
		Rereader rereader = this.rereader;
		if (rereader == null || dueAt - this.clock.millis() <= this.settings.parkAfter().toMillis()) {
			return false;
		}
		if (!task.work.park(task, dueAt - this.settings.rereadLeadMillis())) {
			return false;
		}
		rereader.wake();
		if (task.key != null && task.commandPending()) {
			rereader.commanded(task.work, task.key); // a command arrived while we were
														// looking
		}
		return true;
	}

	/** How long a task waits after {@code failures} failures in a row. */
	static Duration backoff(int failures) {
		return Backoff.after(failures, FIRST_BACKOFF, MAX_BACKOFF);
	}

}
