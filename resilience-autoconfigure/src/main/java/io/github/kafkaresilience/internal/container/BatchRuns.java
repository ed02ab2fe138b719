package io.github.kafkaresilience.internal.container;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;

import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.ladder.AsyncBatchHandler;
import io.github.kafkaresilience.internal.ladder.AttemptObservation;
import io.github.kafkaresilience.ladder.BatchResult;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.ladder.ReadyRun;
import io.github.kafkaresilience.internal.ladder.StageRouter;
import io.github.kafkaresilience.internal.support.Futures;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Gathers the records of a batch listener that may run now into batches, one main topic
 * at a time, and runs each batch on a worker: the records the routes of its main topic
 * and stages let run (docs/PROTOCOL.md, rule 10). A record in a batch is the head of its
 * key, or rides right behind the record of its key before it: records of the main topic
 * queued behind a head whose key has no lock, which run only if every record of their key
 * before them in the batch succeeded. So a batch never holds two records of one key that
 * could be reordered; it may hold records of every partition of the main topic and of its
 * stages.
 * <p>
 * A batch is run once it is full ({@code size} records), or when the gathering is due:
 * with no wait, once the records being routed and those whose turn it is have been routed
 * (it gives way to them up to {@value #MAX_GIVE_WAY} times), so it takes what is ready;
 * with a wait, that long after its first record arrived. Each record's outcome then takes
 * the rest of its step on its own, as after the run of a single record; a record the
 * batch did not get to is routed again, without an attempt.
 * <p>
 * A batch whose method returns a result that completes later lets its worker go once
 * called; its records stay taken, and their partitions count it as a handler run under
 * way ({@link PendingResults}), until its result completed and a worker took their
 * outcomes.
 */
final class BatchRuns {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(BatchRuns.class);

	/** What becomes of a record once its batch ran, or did not get to it. */
	interface Outcomes {

		/**
		 * The handler ran on the record in {@code batch}: its step goes on with
		 * {@code result}.
		 */
		void ran(RecordTask task, ReadyRun run, HandlerResult result, long nanos, AttemptObservation.Batch batch);

		/**
		 * The batch did not get to the record: it is routed again, without an attempt.
		 */
		void notRun(RecordTask task);

	}

	private final String id;

	private final BatchSettings settings;

	private final Workers workers;

	private final BooleanSupplier busy;

	private final Outcomes outcomes;

	private final Map<StageRouter, Gathering> gatherings = new ConcurrentHashMap<>();

	private final Map<StageRouter, AsyncBatchHandler> handlers;

	/**
	 * The batches whose result is pending, until their records' steps were taken or given
	 * up.
	 */
	private final PendingResults pending;

	/**
	 * @param busy whether records are being routed, or wait for their turn: a gathering
	 * that takes what is ready gives way to them
	 */
	BatchRuns(String id, BatchSettings settings, Map<StageRouter, AsyncBatchHandler> handlers, Workers workers,
			PendingResults pending, BooleanSupplier busy, Outcomes outcomes) {
		this.id = id;
		this.pending = pending;
		this.busy = busy;
		this.settings = settings;
		this.handlers = Map.copyOf(handlers);
		this.workers = workers;
		this.outcomes = outcomes;
	}

	BatchSettings settings() {
		return this.settings;
	}

	/**
	 * Adds a record its route let run now to the batch of its main topic; runs the batch
	 * on this worker if that made it full.
	 */
	void add(RecordTask task, ReadyRun run) {
		StageRouter router = task.work.route.router();
		Gathering gathering = this.gatherings.computeIfAbsent(router, Gathering::new);
		List<Ready> full = null;
		boolean schedule = false;
		synchronized (gathering) {
			gathering.ready.add(new Ready(task, run, false));
			ride(task, run, gathering);
			if (gathering.ready.size() >= this.settings.size()) {
				full = gathering.take(this.settings.size());
			}
			else if (!gathering.due) {
				gathering.due = true;
				schedule = true;
			}
		}
		if (full != null) {
			run(router, full);
		}
		else if (schedule) {
			scheduleFlush(gathering);
		}
	}

	/**
	 * Lets the records of the key queued behind a ready record ride in its batch, right
	 * after it, as many as the batch has room for and the router lets run on the same
	 * view: they run if it succeeds (docs/PROTOCOL.md, rule 10). The batch is never taken
	 * apart between them.
	 */
	private void ride(RecordTask head, ReadyRun run, Gathering gathering) {
		int room = this.settings.size() - gathering.ready.size();
		if (room <= 0 || head.key == null) {
			return;
		}
		StageRouter router = head.work.route.router();
		List<ReadyRun> runs = new ArrayList<>();
		List<RecordTask> riders = head.work.riders(head, room, (next) -> {
			ReadyRun behind = router.readyBehind(run, next.delivery);
			if (behind != null) {
				runs.add(behind);
			}
			return behind != null;
		});
		for (int i = 0; i < riders.size(); i++) {
			gathering.ready.add(new Ready(riders.get(i), runs.get(i), true));
		}
		this.workers.charge(head.tenant(), riders.size()); // they reach the handler too
	}

	/**
	 * The most times a due gathering gives way to records whose turn it is, so that the
	 * records a poll handed out together are routed into one batch although a worker
	 * routed the first of them before the poll thread had handed out the rest.
	 */
	static final int MAX_GIVE_WAY = 16;

	private void scheduleFlush(Gathering gathering) {
		gathering.gaveWay = 0;
		Task flush = Task.action(() -> flush(gathering));
		long wait = this.settings.maxWait().toMillis();
		if (wait == 0) {
			this.workers.submit(flush);
		}
		else {
			this.workers.later(() -> this.workers.submit(flush), wait);
		}
	}

	/**
	 * The gathering is due: runs what it holds, up to a batch, and keeps gathering the
	 * rest.
	 */
	private void flush(Gathering gathering) {
		if (this.settings.maxWait().isZero() && this.busy.getAsBoolean() && gathering.gaveWay < MAX_GIVE_WAY) {
			gathering.gaveWay++; // records whose turn it is may join: this flush goes
									// behind them
			this.workers.submit(Task.action(() -> flush(gathering)));
			return;
		}
		List<Ready> batch;
		boolean more;
		synchronized (gathering) {
			batch = gathering.take(this.settings.size());
			more = !gathering.ready.isEmpty();
			gathering.due = more;
		}
		if (more) {
			scheduleFlush(gathering);
		}
		if (!batch.isEmpty()) {
			run(gathering.router, batch);
		}
	}

	private void run(StageRouter router, List<Ready> gathered) {
		List<Ready> batch = new ArrayList<>(gathered.size());
		for (Ready ready : gathered) {
			if (!ready.task.work.isRevoked() && ready.task.work.runs.begin()) {
				batch.add(ready); // a revoked partition's records are delivered to its
									// new owner
			}
		}
		boolean later = false;
		try {
			later = runCounted(router, batch);
		}
		finally {
			if (!later) {
				endRuns(batch);
			}
		}
	}

	private static void endRuns(List<Ready> batch) {
		batch.forEach((ready) -> ready.task.work.runs.end());
	}

	/**
	 * Runs a batch whose records' partitions count it among their runs under way; returns
	 * whether its result completes later, its runs then ending once its outcomes were
	 * taken.
	 */
	private boolean runCounted(StageRouter router, List<Ready> batch) {
		if (batch.isEmpty() || this.workers.stopping()) {
			return false;
		}
		List<Delivery> records = new ArrayList<>(batch.size());
		batch.forEach((ready) -> records.add(ready.run.record()));
		long start = System.nanoTime();
		AttemptObservation.Batch observed = router.startBatch(records.size());
		CompletableFuture<BatchResult> result;
		try {
			result = Objects.requireNonNull(this.handlers.get(router)).start(records, this::onWorker);
		}
		catch (RuntimeException | Error ex) {
			notRun(batch, observed, ex);
			return false;
		}
		if (result.isDone()) {
			ran(router, batch, observed, start, result);
			return false;
		}
		// the worker is let go; the records stay taken, their partitions count the batch
		// as a run under way
		PendingResults.Pending pending = this.pending.add(batch.size(), () -> endRuns(batch));
		result.whenComplete((ignored, ex) -> this.pending.completed(pending, this.workers,
				() -> ran(router, batch, observed, start, result)));
		return true;
	}

	/**
	 * Runs what follows a batch's completed result on a worker, also while the workers
	 * hold or stop.
	 */
	private void onWorker(Runnable task) {
		if (!this.workers.submitCompletion(task)) {
			throw new RejectedExecutionException("Listener '" + this.id + "' stopped");
		}
	}

	/**
	 * The batch could not run at all (not the method's failure, which is a result): every
	 * record runs again later.
	 */
	private void notRun(List<Ready> batch, AttemptObservation.Batch observed, Throwable ex) {
		observed.ended(ex);
		logger.error(
				"Listener '" + this.id + "' could not run a batch of " + batch.size() + " records; " + "they run again",
				ex);
		for (Ready ready : batch) {
			if (!ready.rider) {
				this.workers.submitLater(ready.task, 1000);
			}
			else if (ready.task.work.unride(ready.task) != null) {
				this.workers.submitLater(ready.task, 1000); // its head is done meanwhile
			}
		}
	}

	/**
	 * A batch's result completed: each record takes the rest of its step, on this worker.
	 */
	private void ran(StageRouter router, List<Ready> batch, AttemptObservation.Batch observed, long start,
			CompletableFuture<BatchResult> completed) {
		BatchResult ran;
		try {
			ran = completed.join();
		}
		catch (CompletionException | CancellationException ex) {
			notRun(batch, observed, Futures.cause(ex));
			return;
		}
		observed.ended(null);
		long nanos = System.nanoTime() - start;
		router.batchRan(batch.size(), ran.bisections(), nanos);
		List<@Nullable HandlerResult> results = inKeyOrder(batch, ran.results());
		// a rider that did not run waits behind its head again before any outcome lets
		// its head go
		List<RecordTask> handOut = new ArrayList<>();
		for (int i = 0; i < batch.size(); i++) {
			Ready ready = batch.get(i);
			if (results.get(i) == null && ready.rider) {
				RecordTask now = ready.task.work.unride(ready.task);
				if (now != null) {
					handOut.add(now);
				}
			}
		}
		long share = nanos / batch.size();
		for (int i = 0; i < batch.size(); i++) {
			Ready ready = batch.get(i);
			HandlerResult result = results.get(i);
			if (ready.task.work.isRevoked()) {
				continue; // its partition's next owner runs it
			}
			if (result != null) {
				this.outcomes.ran(ready.task, ready.run, result, share, observed);
			}
			else if (!ready.rider) {
				this.outcomes.notRun(ready.task);
			}
		}
		handOut.forEach(this.outcomes::notRun);
	}

	/**
	 * The outcomes of a batch's records as the protocol takes them: a record after one of
	 * its key that did not succeed did not run, whatever the handler said, since it may
	 * not run before that one is done (docs/PROTOCOL.md, rule 10).
	 */
	static List<@Nullable HandlerResult> inKeyOrder(List<Ready> batch, List<@Nullable HandlerResult> results) {
		List<@Nullable HandlerResult> ordered = new ArrayList<>(batch.size());
		for (int i = 0; i < batch.size(); i++) {
			Ready ready = batch.get(i);
			HandlerResult result = (i < results.size()) ? results.get(i) : null;
			if (ready.rider) {
				HandlerResult before = ordered.get(i - 1);
				if (before == null || before.outcome() != HandlerResult.Outcome.SUCCESS) {
					result = null; // riders follow their head, or the rider before them,
									// directly
				}
			}
			ordered.add(result);
		}
		return ordered;
	}

	/**
	 * A record of a batch.
	 *
	 * @param rider whether it rides behind the record before it in the batch, an earlier
	 * record of its key
	 */
	record Ready(RecordTask task, ReadyRun run, boolean rider) {
	}

	/** The ready records of one main topic waiting for their batch. */
	private static final class Gathering {

		final StageRouter router;

		final List<Ready> ready = new ArrayList<>();

		/** Whether a flush is scheduled. */
		boolean due;

		/** How many times the scheduled flush gave way to records whose turn it is. */
		volatile int gaveWay;

		Gathering(StageRouter router) {
			this.router = router;
		}

		List<Ready> take(int most) {
			int n = Math.min(most, this.ready.size());
			List<Ready> taken = new ArrayList<>(this.ready.subList(0, n));
			this.ready.subList(0, n).clear();
			return taken;
		}

		@Override
		public String toString() {
			return "batch of " + this.router.plan().mainTopic();
		}

	}

	@Override
	public String toString() {
		return "batches of '" + this.id + "'";
	}

}
