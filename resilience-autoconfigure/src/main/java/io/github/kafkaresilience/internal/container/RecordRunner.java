package io.github.kafkaresilience.internal.container;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.internal.container.offsets.WritesUnderWay;
import io.github.kafkaresilience.ladder.AsyncBatchHandler;
import io.github.kafkaresilience.ladder.AsyncRecordHandler;
import io.github.kafkaresilience.ladder.AsyncRecordHandler.Completion;
import io.github.kafkaresilience.internal.ladder.AttemptObservation;
import io.github.kafkaresilience.internal.ladder.AttemptObservation.Attempt;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.ladder.ReadyRun;
import io.github.kafkaresilience.internal.ladder.StageRouter;
import io.github.kafkaresilience.internal.ladder.Step;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.support.Futures;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Runs the records (and replay admissions) of a container's partitions, each in its key's
 * turn: routes a record through its ladder and does what the route says. A record that is
 * done lets the next of its key run; one whose writes are under way frees its worker and
 * holds its key until they complete; one due later is parked or scheduled; one whose key
 * is moving on waits for the key; one that needs a fresher lock view waits for the
 * tailer. A record whose handler failed hands the rest of its step (what the failure
 * means, and its writes) to the workers' failure handling, which waits behind the records
 * whose turn it is; a record that is done returns the next of its key for its worker to
 * run in the same turn. A record whose step fails is routed again after a backoff.
 */
final class RecordRunner {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(RecordRunner.class);

	private final String id;

	private final ContainerSettings settings;

	private final Clock clock;

	private final OffsetCommitter committer;

	private final ContainerOffsets offsets;

	/**
	 * Tells a partition's consumer that one of its records is done: it may have room
	 * again.
	 */
	private final Consumer<PartitionWork> recordDone;

	private final Workers workers;

	private final RecordWaits waits;

	private final WritesUnderWay settling = new WritesUnderWay();

	/** What may hold a record back: the outage hold, or nothing. */
	private volatile RecordHold hold = RecordHold.NONE;

	private volatile @Nullable BatchRuns batches;

	private volatile @Nullable AsyncRuns asyncRuns;

	/**
	 * Where the steps after the attempts of a {@code @SendTo} listener in
	 * {@code transaction} mode wait for the records before them, or {@code null} for
	 * another listener.
	 */
	private volatile @Nullable OffsetLine offsetLine;

	/**
	 * The handler results that complete later and are pending: of records, or of batches.
	 */
	private final PendingResults pending = new PendingResults();

	/** Whether the handlers' results complete later. */
	private volatile boolean resultsLater;

	/**
	 * Tasks being run by a worker now, counted for a listener that runs its records in
	 * batches.
	 */
	private final AtomicInteger routing = new AtomicInteger();

	RecordRunner(String id, ContainerSettings settings, Clock clock, OffsetCommitter committer,
			ContainerOffsets offsets, Consumer<PartitionWork> recordDone) {
		this.id = id;
		this.settings = settings;
		this.clock = clock;
		this.committer = committer;
		this.offsets = offsets;
		this.recordDone = recordDone;
		this.workers = new Workers(id, settings.concurrency(), WorkerThreads.of(settings.virtualThreads()), this::run);
		this.waits = new RecordWaits(id, settings, clock, this.workers);
	}

	Workers workers() {
		return this.workers;
	}

	/** Where records wait for their due time, their key or the tailer. */
	RecordWaits waits() {
		return this.waits;
	}

	WritesUnderWay settling() {
		return this.settling;
	}

	/** Holds the listener's records while its outage breaker is open. */
	void holdOnOutage(OutageHold outage) {
		this.hold = outage;
	}

	/**
	 * Runs the records that may run now in batches, as the listener's settings say.
	 * @param later whether the handlers' results complete later
	 */
	void runInBatches(BatchSettings settings, Map<StageRouter, AsyncBatchHandler> handlers, boolean later) {
		this.resultsLater = later;
		this.batches = new BatchRuns(this.id, settings, handlers, this.workers, this.pending,
				() -> this.workers.hasReadyTasks() || this.routing.get() > 0, new BatchRuns.Outcomes() {

					@Override
					public void ran(RecordTask task, ReadyRun run, HandlerResult result, long nanos,
							AttemptObservation.Batch batch) {
						ranInBatch(task, run, result, nanos, batch);
					}

					@Override
					public void notRun(RecordTask task) {
						RecordRunner.this.workers.submit(task);
					}

				});
	}

	/**
	 * Runs the records whose route lets them run with a handler whose result completes
	 * later: no worker is held while a result is pending.
	 */
	void runAsync(Map<StageRouter, AsyncRecordHandler> handlers, boolean repliesInTransactions) {
		this.resultsLater = true;
		this.asyncRuns = new AsyncRuns(handlers, this.workers, this.pending, this::completed);
		this.offsetLine = repliesInTransactions ? new OffsetLine() : null;
	}

	/**
	 * The handler results pending, or {@code null} for a listener whose handler returns
	 * when done.
	 */
	@Nullable PendingResults pendingResults() {
		return this.resultsLater ? this.pending : null;
	}

	/**
	 * Runs records in batches, or {@code null} for a listener that runs them one at a
	 * time.
	 */
	@Nullable BatchRuns batchRuns() {
		return this.batches;
	}

	/**
	 * Runs a task on a worker; returns the next task of its key when the task is done and
	 * that one may run at once, for the worker to run in the same turn.
	 */
	private @Nullable KeyedTask run(KeyedTask task) {
		if (this.batches == null) {
			return runCounted(task); // only a batch's gathering asks how many records are
										// being routed
		}
		this.routing.incrementAndGet();
		try {
			return runCounted(task);
		}
		finally {
			this.routing.decrementAndGet();
		}
	}

	private @Nullable KeyedTask runCounted(KeyedTask next) {
		if (next instanceof AdmissionTask admission) {
			return admit(admission);
		}
		RecordTask task = (RecordTask) next;
		RetryContainer.Route route = task.work.route;
		RecordTask.PendingFailure failure = task.work.start(task);
		Supplier<Step> rest = (failure != null) ? failure.rest() : null;
		if (failure != null && this.hold.holdsFailureHandling(task, failure.result())) {
			return null;
		}
		List<Lock> before = (task.key != null && rest == null) ? route.registry().locksOf(task.key) : List.of();
		if (!before.isEmpty() && awaitsItsTurn(task, route)) {
			return null;
		}
		Step step;
		try {
			step = this.committer.runStep(task.delivery,
					(rest != null) ? rest : () -> route.router().route(task.delivery, task.tailerSynced(), true),
					this.offsets);
			if (step.kind() != Step.Kind.SETTLING && step.kind() != Step.Kind.FAILED) {
				task.stepTaken(); // writes under way count as a success only once they
									// complete
			}
		}
		catch (RuntimeException ex) {
			routeFailed(task, ex);
			return null;
		}
		return proceed(task, step, route, before, rest == null);
	}

	/**
	 * Whether a main-topic record that follows its key into the ladder waits in its
	 * partition's offset line, as a completed result does: its move then commits with an
	 * offset past it. Committed below it, the move would leave the record to be read
	 * again after a crash, once its key has left the ladder and no lock tells that it was
	 * moved, and run as a new record: its reply would be committed twice. A probe of an
	 * outage does not wait, for the hold waits for it.
	 */
	private boolean awaitsItsTurn(RecordTask task, RetryContainer.Route route) {
		OffsetLine line = this.offsetLine;
		if (line == null || task.state() != RecordState.RUNNING
				|| route.router().plan().stageOf(task.delivery.topic()) != 0
				|| task.work.firstPending() == task.delivery.offset()) {
			return false;
		}
		task.work.advance(task, RecordState.WAITING);
		line.await(task.work, task.delivery.offset(), () -> this.workers.submit(task));
		return true;
	}

	/**
	 * Does what a record's step says; returns the next task of its key when the record is
	 * done and that one may run at once.
	 * @param first whether the step is the record's first since it was routed (not the
	 * rest of a failed run's step)
	 */
	private @Nullable KeyedTask proceed(RecordTask task, Step step, RetryContainer.Route route, List<Lock> before,
			boolean first) {
		RecordHold hold = this.hold;
		// a ready record's probe ends when its batch has run it
		if (first && step.kind() != Step.Kind.READY && hold.heldAfter(task, step)) {
			return null;
		}
		switch (step.kind()) {
			case DONE -> {
				return complete(task);
			}
			case SETTLING -> settle(task, Objects.requireNonNull(step.writes()));
			case WAIT_UNTIL -> this.waits.until(task, step.dueAt());
			case WAIT_FOR_TAILER -> {
				task.work.advance(task, RecordState.WAITING);
				this.waits.forTailer(task);
			}
			case WAIT_FOR_KEY -> {
				task.work.advance(task, RecordState.WAITING);
				this.waits.forKey(task, route, before);
			}
			case FAILED -> {
				// the rest of the step waits until no record of another key waits for its
				// turn
				if (task.work.failed(task, new RecordTask.PendingFailure(Objects.requireNonNull(step.failure()),
						Objects.requireNonNull(step.rest())))) {
					return null; // a rider: its failure is handled in its key's turn,
									// once the records ahead are done
				}
				if (!hold.defers(task, step)) {
					this.workers.submitFailure(task);
				}
			}
			case READY -> {
				AsyncRuns async = this.asyncRuns;
				ReadyRun ready = Objects.requireNonNull(step.ready());
				if (async != null) {
					async.start(task, ready);
				}
				else {
					batches().add(task, ready);
				}
			}
		}
		return null;
	}

	private BatchRuns batches() {
		BatchRuns batches = this.batches;
		if (batches == null) {
			throw new IllegalStateException(
					"Listener '" + this.id + "' runs records one at a time, but its router " + "left a run to a batch");
		}
		return batches;
	}

	/**
	 * A batch ran a record: the rest of its step runs as after a single record's run, and
	 * a next record of its key that may run now is handed to the workers.
	 */
	private void ranInBatch(RecordTask task, ReadyRun run, HandlerResult result, long nanos,
			AttemptObservation.Batch batch) {
		takeRest(task, () -> run.ran(result, nanos, batch));
	}

	/**
	 * Takes the rest of a record's step after its handler ran outside the router (in a
	 * batch, or with a result that completed later), as after a single record's run, and
	 * hands a next record of its key that may run now to the workers.
	 */
	private void takeRest(RecordTask task, Supplier<Step> rest) {
		Step step;
		try {
			step = this.committer.runStep(task.delivery, rest, this.offsets);
			if (step.kind() != Step.Kind.SETTLING && step.kind() != Step.Kind.FAILED) {
				task.stepTaken();
			}
		}
		catch (RuntimeException ex) {
			routeFailed(task, ex);
			return;
		}
		KeyedTask next = proceed(task, step, task.work.route, List.of(), true);
		if (next != null) {
			this.workers.submit(next);
		}
	}

	/**
	 * A record's result completed: on a worker, the attempt is finished and the rest of
	 * its step runs as after a single record's run; a next record of its key that may run
	 * now is handed to the workers.
	 */
	private void completed(RecordTask task, ReadyRun run, Completion completion, long nanos, Attempt attempt) {
		OffsetLine line = this.offsetLine;
		if (line != null && task.work.firstPending() != task.delivery.offset()) {
			// its replies commit with an offset past it, once the records before it are
			// done
			line.await(task.work, task.delivery.offset(),
					() -> this.workers.submitCompletion(() -> completedInLine(task, run, completion, nanos, attempt)));
			return;
		}
		takeStep(task, run, completion, nanos, attempt);
	}

	/**
	 * The step of a record whose turn in its partition's offset line came. It is a
	 * handler run of its own: once the partition's revocation began it does not run (its
	 * next owner runs the record, whose replies were not sent), since its transaction
	 * would commit after the revocation's last commit, and the next owner would run the
	 * record again.
	 */
	private void completedInLine(RecordTask task, ReadyRun run, Completion completion, long nanos, Attempt attempt) {
		if (!task.work.runs.begin()) {
			return;
		}
		try {
			takeStep(task, run, completion, nanos, attempt);
		}
		finally {
			task.work.runs.end();
		}
	}

	private void takeStep(RecordTask task, ReadyRun run, Completion completion, long nanos, Attempt attempt) {
		takeRest(task, () -> {
			AsyncRecordHandler.Finished finished = finish(completion);
			return withReplies(run.ran(finished.result(), nanos, attempt), finished.replies());
		});
	}

	private static AsyncRecordHandler.Finished finish(Completion completion) {
		try {
			return completion.finish();
		}
		catch (RuntimeException ex) {
			return AsyncRecordHandler.Finished.of(HandlerResult.failed(ex));
		}
	}

	/**
	 * A step after a successful attempt, whose replies are written with it: the record is
	 * done only once they were sent, and a reply that could not be sent fails the step.
	 */
	private static Step withReplies(Step step, CompletableFuture<?> replies) {
		if (replies.isDone() && !replies.isCompletedExceptionally()) {
			return step;
		}
		return switch (step.kind()) {
			case DONE -> Step.settling(replies);
			case SETTLING -> Step.settling(CompletableFuture.allOf(step.writes(), replies));
			default -> throw new IllegalStateException("A successful attempt that sent replies took the step " + step);
		};
	}

	/**
	 * A step failed, or its writes did: the record is routed again after a backoff,
	 * unless it can go nowhere. A write that reported a failure may have landed (its
	 * acknowledgement was lost), and the undo of it may have failed too; this instance's
	 * table has not seen it. So the record is routed again only once the tailer has
	 * caught up with its lock partition, as a redelivery after a crash is behind the sync
	 * barrier: it then finds the lock its failed step wrote and finishes that move
	 * (docs/PROTOCOL.md, rules 1.1 and 2.3), or finds it released, instead of writing a
	 * second lock beside it or bringing a released one back.
	 */
	private void routeFailed(RecordTask task, Throwable ex) {
		if (StageRouter.isUnpublishable(ex)) {
			stop(task, ex);
			return;
		}
		if (task.work.routeFailed(task)) {
			// a rider whose step failed while the record ahead of it is not done: it is
			// routed
			// again in its turn, when that one is done
			logger.warn("Listener '" + this.id + "' could not take the step of " + task + " after its batch; "
					+ "it is routed again in its key's turn", ex);
			return;
		}
		int failures = task.countFailure();
		Duration backoff = RecordWaits.backoff(failures);
		logger.warn("Listener '" + this.id + "' could not route " + task.delivery + " (attempt " + failures
				+ "); trying again in " + backoff.toMillis() + " ms", ex);
		this.workers.later(() -> this.waits.forTailer(task), backoff.toMillis());
	}

	/**
	 * A record whose writes are under way frees its worker at once (docs/PROTOCOL.md,
	 * rule 6): it stays at the head of its key's queue, so the key's later records wait,
	 * and its offset stays pending, so no commit passes it, until the writes complete.
	 */
	private void settle(RecordTask task, CompletableFuture<?> writes) {
		task.work.advance(task, RecordState.SETTLING);
		this.settling.add(writes, task.work.partition);
		writes.whenComplete((ignored, ex) -> {
			if (ex == null) {
				task.stepTaken();
				KeyedTask next = complete(task);
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
	 * dead-letter topic takes it): trying again cannot help until a setting is raised,
	 * and going on would only pile up records that are done but cannot be committed past
	 * it. The record stays pending, so the committed offset stays below it and it is
	 * delivered again after a restart or a rebalance; the partition is paused, and the
	 * records already handed out finish.
	 */
	private void stop(RecordTask task, Throwable ex) {
		PartitionWork work = task.work;
		String reason = ex.getMessage();
		synchronized (work) {
			if (work.isRevoked()) {
				return;
			}
			work.advance(task, RecordState.STOPPED);
			if (work.stopped == null) {
				work.stopped = reason;
			}
		}
		logger.error("Listener '" + this.id + "' stopped consuming " + work.partition + " at offset "
				+ task.delivery.offset() + ", which stays uncommitted: " + reason, ex);
		// the poll loop pauses it at its next settling: a stopped partition may not fetch
	}

	/**
	 * Admits a replay in its key's turn, on a lock view caught up with its lock
	 * partition, so that a lock another owner admitted meanwhile (and that may have moved
	 * on) is not written back.
	 */
	private @Nullable KeyedTask admit(AdmissionTask task) {
		LockRegistry registry = task.work.route.registry();
		if (!task.tailerSynced()) {
			this.waits.forTailer(task);
			return null;
		}
		try {
			StageRouter.admitReplay(registry, task.lockId, task.lastTaken, this.clock.instant());
		}
		catch (RuntimeException ex) {
			int failures = task.countFailure();
			Duration backoff = RecordWaits.backoff(failures);
			logger.warn("Listener '" + this.id + "' could not admit replayed lock " + task.lockId + " of "
					+ task.work.partition + " (attempt " + failures + "); trying again in " + backoff.toMillis()
					+ " ms", ex);
			this.workers.submitLater(task, backoff.toMillis());
			return null;
		}
		return task.work.admitted(task);
	}

	/** A record is done; returns the next task of its key if that one may run now. */
	private @Nullable KeyedTask complete(RecordTask task) {
		PartitionWork work = task.work;
		KeyedTask next = work.done(task);
		this.recordDone.accept(work);
		OffsetLine line = this.offsetLine;
		if (line != null) {
			line.released(work);
		}
		return next;
	}

}
