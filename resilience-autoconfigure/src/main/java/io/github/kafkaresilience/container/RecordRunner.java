package io.github.kafkaresilience.container;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import io.github.kafkaresilience.ladder.BatchHandler;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.ReadyRun;
import io.github.kafkaresilience.ladder.StageRouter;
import io.github.kafkaresilience.ladder.Step;
import io.github.kafkaresilience.lock.Lock;
import io.github.kafkaresilience.lock.LockRegistry;
import io.github.kafkaresilience.support.Backoff;
import io.github.kafkaresilience.support.Futures;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Runs the records (and replay admissions) of a container's partitions, each in its key's
 * turn: routes a record through its ladder and does what the route says. A record that is
 * done lets the next of its key run; one whose writes are under way frees its worker and holds
 * its key until they complete; one due later is parked or scheduled; one whose key is moving
 * on waits for the key; one that needs a fresher lock view waits for the tailer. A record
 * whose handler failed hands the rest of its step (what the failure means, and its writes) to
 * the workers' failure handling, which waits behind the records whose turn it is; a record
 * that is done returns the next of its key for its worker to run in the same turn. A record
 * whose step fails is routed again after a backoff.
 */
final class RecordRunner {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(OrderedRetryContainer.class);

	private static final Duration FIRST_BACKOFF = Duration.ofMillis(500);

	private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

	private final String id;

	private final ContainerSettings settings;

	private final Clock clock;

	private final OffsetCommitter committer;

	private final ContainerOffsets offsets;

	private final Partitions partitions;

	/** Tells a partition's consumer that one of its records is done: it may have room again. */
	private final java.util.function.Consumer<PartitionWork> recordDone;

	private final Workers workers;

	private final KeyWaiters keyWaiters;

	private final DueWaiters dueWaiters;

	private final Settling settling = new Settling();

	private volatile @Nullable Rereader rereader;

	private volatile @Nullable OutageHold outage;

	private volatile @Nullable BatchRuns batches;

	/** Tasks being run by a worker now, counted for a listener that runs its records in batches. */
	private final java.util.concurrent.atomic.AtomicInteger routing = new java.util.concurrent.atomic.AtomicInteger();

	RecordRunner(String id, ContainerSettings settings, Clock clock, OffsetCommitter committer,
			ContainerOffsets offsets, Partitions partitions, java.util.function.Consumer<PartitionWork> recordDone) {
		this.id = id;
		this.settings = settings;
		this.clock = clock;
		this.committer = committer;
		this.offsets = offsets;
		this.partitions = partitions;
		this.recordDone = recordDone;
		this.workers = new Workers(id, settings.concurrency(), WorkerThreads.of(settings.virtualThreads()), this::run);
		this.keyWaiters = new KeyWaiters(this.workers);
		this.dueWaiters = new DueWaiters(this.workers);
	}

	Workers workers() {
		return this.workers;
	}

	KeyWaiters keyWaiters() {
		return this.keyWaiters;
	}

	DueWaiters dueWaiters() {
		return this.dueWaiters;
	}

	Settling settling() {
		return this.settling;
	}

	/** Holds the listener's records while its outage breaker is open. */
	void holdOnOutage(OutageHold outage) {
		this.outage = outage;
	}

	/** Runs the records that may run now in batches, as the listener's settings say. */
	void runInBatches(BatchSettings settings, java.util.Map<StageRouter, BatchHandler> handlers) {
		this.batches = new BatchRuns(this.id, settings, handlers, this.workers,
				() -> this.workers.hasReadyTasks() || this.routing.get() > 0, new BatchRuns.Outcomes() {

			@Override
			public void ran(Task task, ReadyRun run, HandlerResult result, long nanos,
					io.github.kafkaresilience.ladder.AttemptObservation.Batch batch) {
				ranInBatch(task, run, result, nanos, batch);
			}

			@Override
			public void notRun(Task task) {
				RecordRunner.this.workers.submit(task);
			}

		});
	}

	/** Runs records in batches, or {@code null} for a listener that runs them one at a time. */
	@Nullable BatchRuns batchRuns() {
		return this.batches;
	}

	/** Parks far-off retries with this re-reader, or holds them in memory when {@code null}. */
	void parkWith(@Nullable Rereader rereader) {
		this.rereader = rereader;
	}

	/**
	 * Takes a poll's records of a partition, in order, as many as its bound lets in, and runs
	 * those first of their key; returns how many were taken. A record parked behind its key at
	 * once, which an operator's command already names, is read again for it now: the command
	 * arrived before the record did.
	 */
	int takeAll(PartitionWork work, List<Delivery> records) {
		List<Task> run = new ArrayList<>();
		List<Task> parked = new ArrayList<>();
		int taken = work.takeAll(records, run, parked);
		this.workers.submitAll(run);
		Rereader rereader = this.rereader;
		for (Task task : parked) {
			if (rereader != null && task.key != null && commandPending(task)) {
				rereader.commanded(work, task.key);
			}
		}
		return taken;
	}

	/**
	 * Hands a parked record read again back to its partition, behind the records of its key
	 * that were read again before it. Returns false when the partition has no room in its bound
	 * (or is gone): the record stays parked.
	 */
	boolean unpark(PartitionWork work, Delivery record) {
		Task task = new Task(work, record);
		return handOut(task, work.unpark(task));
	}

	/** Submits a task its partition took as first of its key; returns whether it was taken. */
	private boolean handOut(Task task, PartitionWork.Taken taken) {
		if (taken == PartitionWork.Taken.RUN) {
			this.workers.submit(task);
		}
		return taken != PartitionWork.Taken.REFUSED;
	}

	/**
	 * A replayed dead letter's lock is pending (docs/PROTOCOL.md, rule 2.0): if its main-topic partition
	 * is assigned here and open, its admission takes its turn in its key's queue, behind the
	 * records of its key taken from the partition so far.
	 */
	void admissionNeeded(OrderedRetryContainer.Route route, Lock lock) {
		PartitionWork work = this.partitions
			.get(new TopicPartition(route.router().plan().mainTopic(), lock.originPartition()));
		if (work == null || !work.barrierOpen) {
			return; // the partition's owner admits it, or this instance once its barrier opens
		}
		Task task = work.queueAdmission(lock);
		if (task != null) {
			this.workers.submit(task);
		}
	}

	/**
	 * An operator's command (docs/PROTOCOL.md, rule 11) was written or read: if the record at
	 * its position is this container's and waits for its due time, in memory or parked, it is
	 * routed now, and the route acts on the command while it still applies.
	 */
	void commandArrived(OrderedRetryContainer.Route route, io.github.kafkaresilience.lock.OperatorCommand command) {
		if (command.position().stage() > route.router().plan().lastStage()) {
			return; // names no stage of this ladder: no record of it is ever acted on
		}
		PartitionWork work = this.partitions.get(new TopicPartition(
				route.router().plan().topicOf(command.position().stage()), command.partition()));
		if (work == null || work.isRevoked()) {
			return; // whoever holds the record acts on it, after its barrier if it is assigned later
		}
		Rereader rereader = this.rereader;
		if (rereader != null && work.isParked(command.position().offset())) {
			rereader.commanded(work, command.key());
		}
		else {
			this.dueWaiters.commanded(command);
		}
	}

	/**
	 * Runs a task on a worker; returns the next task of its key when the task is done and that
	 * one may run at once, for the worker to run in the same turn.
	 */
	private @Nullable Task run(Task task) {
		if (this.batches == null) {
			return runCounted(task); // only a batch's gathering asks how many records are being routed
		}
		this.routing.incrementAndGet();
		try {
			return runCounted(task);
		}
		finally {
			this.routing.decrementAndGet();
		}
	}

	private @Nullable Task runCounted(Task task) {
		if (task.admission != null) {
			return admit(task);
		}
		OrderedRetryContainer.Route route = task.work.route;
		Supplier<Step> rest = task.rest;
		if (rest != null) {
			task.rest = null; // a volatile write only for failure handling, not for every record
			OutageHold outage = this.outage;
			if (outage != null && task.failed != null && outage.holdsFailureHandling(task, task.failed)) {
				return null;
			}
		}
		List<Lock> before = (task.key != null && rest == null) ? route.registry().locksOf(task.key) : List.of();
		Step step;
		try {
			step = this.committer.route(task.delivery,
					(rest != null) ? rest : () -> route.router().route(task.delivery, task.tailerSynced, true),
					this.offsets);
			if (step.kind() != Step.Kind.SETTLING && step.kind() != Step.Kind.FAILED) {
				task.failures = 0; // writes under way count as a success only once they complete
			}
		}
		catch (RuntimeException ex) {
			routeFailed(task, ex);
			return null;
		}
		return proceed(task, step, route, before, rest == null);
	}

	/**
	 * Does what a record's step says; returns the next task of its key when the record is done
	 * and that one may run at once.
	 * @param first whether the step is the record's first since it was routed (not the rest of
	 * a failed run's step)
	 */
	private @Nullable Task proceed(Task task, Step step, OrderedRetryContainer.Route route, List<Lock> before,
			boolean first) {
		OutageHold outage = this.outage;
		// a ready record's probe ends when its batch has run it
		if (outage != null && first && step.kind() != Step.Kind.READY && outage.heldAfter(task, step)) {
			return null;
		}
		switch (step.kind()) {
			case DONE -> {
				return complete(task);
			}
			case SETTLING -> settle(task, step.writes());
			case WAIT_UNTIL -> {
				if (!park(task, step.dueAt())) {
					this.dueWaiters.waitFor(task, step.dueAt() - this.clock.millis());
					if (commandPending(task)) {
						this.dueWaiters.wake(task); // a command arrived while we were looking
					}
				}
			}
			case WAIT_FOR_TAILER -> catchUpThenSubmit(task);
			case WAIT_FOR_KEY -> waitForKey(task, route, before);
			case FAILED -> {
				// the rest of the step waits until no record of another key waits for its turn
				task.failed = step.failure();
				task.rest = step.rest();
				if (step.kind() == Step.Kind.FAILED && task.work.unrideBehind(task)) {
					return null; // a rider: its failure is handled in its key's turn, once the records ahead are done
				}
				if (outage == null || !outage.defers(task, step)) {
					this.workers.submitFailure(task);
				}
			}
			case READY -> batches().add(task, step.ready());
		}
		return null;
	}

	private BatchRuns batches() {
		BatchRuns batches = this.batches;
		if (batches == null) {
			throw new IllegalStateException("Listener '" + this.id + "' runs records one at a time, but its router "
					+ "left a run to a batch");
		}
		return batches;
	}

	/**
	 * A batch ran a record: the rest of its step runs as after a single record's run, and a
	 * next record of its key that may run now is handed to the workers.
	 */
	private void ranInBatch(Task task, ReadyRun run, HandlerResult result, long nanos,
			io.github.kafkaresilience.ladder.AttemptObservation.Batch batch) {
		Step step;
		try {
			step = this.committer.route(task.delivery, () -> run.ran(result, nanos, batch), this.offsets);
			if (step.kind() != Step.Kind.SETTLING && step.kind() != Step.Kind.FAILED) {
				task.failures = 0;
			}
		}
		catch (RuntimeException ex) {
			routeFailed(task, ex);
			return;
		}
		Task next = proceed(task, step, task.work.route, List.of(), true);
		if (next != null) {
			this.workers.submit(next);
		}
	}

	/**
	 * A step failed, or its writes did: the record is routed again after a backoff, unless it
	 * can go nowhere. A write that reported a failure may have landed (its acknowledgement was
	 * lost), and the undo of it may have failed too; this instance's table has not seen it. So the
	 * record is routed again only once the tailer has caught up with its lock partition, as a
	 * redelivery after a crash is behind the sync barrier: it then finds the lock its failed step
	 * wrote and finishes that move (docs/PROTOCOL.md, rules 1.1 and 2.3), or finds it released, instead of writing
	 * a second lock beside it or bringing a released one back.
	 */
	private void routeFailed(Task task, Throwable ex) {
		if (StageRouter.isUnpublishable(ex)) {
			stop(task, ex);
			return;
		}
		if (task.work.unrideBehind(task)) {
			// a rider whose step failed while the record ahead of it is not done: it is routed
			// again in its turn, when that one is done
			logger.warn("Listener '" + this.id + "' could not take the step of " + task + " after its batch; "
					+ "it is routed again in its key's turn", ex);
			return;
		}
		Duration backoff = backoff(++task.failures);
		logger.warn("Listener '" + this.id + "' could not route " + task.delivery + " (attempt " + task.failures
				+ "); trying again in " + backoff.toMillis() + " ms", ex);
		task.tailerSynced = false;
		this.workers.later(() -> catchUpThenSubmit(task), backoff.toMillis());
	}

	/**
	 * Runs a task (a record, or an admission) once the tailer has caught up with its lock
	 * partition, which has the number of the task's partition.
	 */
	private void catchUpThenSubmit(Task task) {
		task.work.route.registry().catchUp(task.work.partition.partition()).whenComplete((ignored, ex) -> {
			task.tailerSynced = (ex == null);
			if (ex != null) {
				this.workers.submitLater(task, backoff(++task.failures).toMillis());
			}
			else {
				this.workers.submit(task);
			}
		});
	}

	/**
	 * A record whose writes are under way frees its worker at once (docs/PROTOCOL.md, rule 6): it stays at
	 * the head of its key's queue, so the key's later records wait, and its offset stays
	 * pending, so no commit passes it, until the writes complete.
	 */
	private void settle(Task task, CompletableFuture<?> writes) {
		this.settling.add(writes, task.work.partition);
		writes.whenComplete((ignored, ex) -> {
			if (ex == null) {
				task.failures = 0;
				Task next = complete(task);
				if (next != null) {
					this.workers.submit(next); // a callback's thread runs no records
				}
			}
			else if (!this.workers.stopping() && !task.work.isRevoked()) {
				routeFailed(task, Futures.cause(ex));
			}
		});
	}

	/**
	 * Stops a partition at a record that can go nowhere (neither its next topic nor the
	 * dead-letter topic takes it): trying again cannot help until a setting is raised, and
	 * going on would only pile up records that are done but cannot be committed past it. The
	 * record stays pending, so the committed offset stays below it and it is delivered again
	 * after a restart or a rebalance; the partition is paused, and the records already handed
	 * out finish.
	 */
	private void stop(Task task, Throwable ex) {
		PartitionWork work = task.work;
		String reason = ex.getMessage();
		synchronized (work) {
			if (work.isRevoked()) {
				return;
			}
			if (work.stopped == null) {
				work.stopped = reason;
			}
		}
		logger.error("Listener '" + this.id + "' stopped consuming " + work.partition + " at offset "
				+ task.delivery.offset() + ", which stays uncommitted: " + reason, ex);
		// the poll loop pauses it at its next settling: a stopped partition may not fetch
	}

	private void waitForKey(Task task, OrderedRetryContainer.Route route, List<Lock> before) {
		this.keyWaiters.add(task);
		if (!route.registry().locksOf(task.key).equals(before)) {
			this.keyWaiters.wake(task); // changed while we were looking
			return;
		}
		this.workers.later(() -> this.keyWaiters.wake(task), this.settings.recheckInterval().toMillis());
	}

	/**
	 * Admits a replay in its key's turn, on a lock view caught up with its lock partition, so
	 * that a lock another owner admitted meanwhile (and that may have moved on) is not written
	 * back.
	 */
	private @Nullable Task admit(Task task) {
		LockRegistry registry = task.work.route.registry();
		if (!task.tailerSynced) {
			catchUpThenSubmit(task);
			return null;
		}
		try {
			StageRouter.admitReplay(registry, task.admission, task.lastTaken, this.clock.instant());
		}
		catch (RuntimeException ex) {
			task.tailerSynced = false;
			Duration backoff = backoff(++task.failures);
			logger.warn("Listener '" + this.id + "' could not admit replayed lock " + task.admission + " of "
					+ task.work.partition + " (attempt " + task.failures + "); trying again in " + backoff.toMillis()
					+ " ms", ex);
			this.workers.submitLater(task, backoff.toMillis());
			return null;
		}
		return task.work.admitted(task);
	}

	/** A record is done; returns the next task of its key if that one may run now. */
	private @Nullable Task complete(Task task) {
		PartitionWork work = task.work;
		Task next = work.done(task);
		this.recordDone.accept(work);
		return next;
	}

	/**
	 * Parks the head of a key that waits for a due time far ahead, with every record of its
	 * key queued behind it. Returns false when parking is off, the due time is near or the
	 * partition's parking bound is reached; the task then waits in memory.
	 */
	private boolean park(Task task, long dueAt) {
		Rereader rereader = this.rereader;
		if (rereader == null || dueAt - this.clock.millis() <= this.settings.parkAfter().toMillis()) {
			return false;
		}
		if (!task.work.park(task, dueAt - this.settings.rereadLeadMillis())) {
			return false;
		}
		rereader.wake();
		if (task.key != null && commandPending(task)) {
			rereader.commanded(task.work, task.key); // a command arrived while we were looking
		}
		return true;
	}

	/** Whether an operator's command names the lock a record carries, at that record. */
	private static boolean commandPending(Task task) {
		String lockId = io.github.kafkaresilience.ladder.RetryHeaders.text(task.delivery.headers(),
				io.github.kafkaresilience.ladder.RetryHeaders.LOCK_ID);
		return lockId != null && task.work.route.registry().commandsOf(lockId).stream().anyMatch(task::isNamedBy);
	}

	private static Duration backoff(int failures) {
		return Backoff.after(failures, FIRST_BACKOFF, MAX_BACKOFF);
	}

}
