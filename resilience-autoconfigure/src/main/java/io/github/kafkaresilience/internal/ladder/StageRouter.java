package io.github.kafkaresilience.internal.ladder;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.ladder.AttemptObservation.Attempt;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockStore;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.internal.support.Futures;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.LadderObserver;
import io.github.kafkaresilience.ladder.RecordHandler;
import org.jspecify.annotations.Nullable;

/**
 * Decides, for one record of a main or stage topic, what happens to it: run the handler,
 * become a follower of a locked key, wait for its due time or its predecessor, move on to
 * the next stage, be forwarded behind its predecessor, go to the dead-letter topic, or be
 * skipped as a stale copy.
 * <p>
 * Every step is safe to repeat after a crash at any point: a move writes the lock first,
 * then publishes, then confirms the lock's new position, and a record that finds its own
 * move unfinished completes it. When this method throws, nothing was committed and the
 * record must be delivered again.
 * <p>
 * A record that a retry topic (or the producer) refuses as too large cannot be retried:
 * it is dead-lettered as {@code permanent}, with a {@code RecordTooLargeException} that
 * names the refusing topic and the setting to raise, and its lock is released, as after
 * any permanent failure. When the dead-letter topic refuses it too, an
 * {@link UnpublishableRecordException} is thrown: the record can go nowhere until a
 * setting is raised.
 * <p>
 * The router runs the handler and ties three parts together: {@code RoutingRules} decides
 * what the protocol says happens to the record, {@code Moves} makes the writes that carry
 * it out, and {@code Refusal} says what a refusal as too large means.
 *
 * @since 0.1.0
 */
public class StageRouter {

	private final LadderPlan plan;

	private final Consumer<Delivery> followers;

	private final RecordHandler handler;

	private final Ownership ownership;

	private final RoutingRules rules;

	private final Moves moves;

	private final LadderObserver observer;

	private final AttemptObservation attempts;

	private final boolean batchRuns;

	private StageRouter(Builder builder) {
		this.plan = builder.plan;
		this.handler = builder.handler;
		this.ownership = builder.ownership;
		this.followers = builder.followers;
		this.observer = builder.observer;
		this.attempts = builder.attempts;
		this.batchRuns = builder.batchRuns;
		this.rules = new RoutingRules(builder.plan, builder.locks, builder.classifier, builder.clock, builder.lockIds,
				builder.dueTimeJitter);
		this.moves = new Moves(builder.plan, builder.locks, builder.publisher, builder.clock, builder.dualWrite,
				builder.faults, builder.ownership, builder.observer, this);
	}

	/**
	 * Starts a router of a ladder; what is not set on the builder has its default.
	 * @param plan the ladder
	 * @param locks the ladder's locks
	 * @param publisher publishes to the ladder's topics
	 * @param handler runs the listener on a record
	 * @return the builder
	 */
	public static Builder builder(LadderPlan plan, LockStore locks, RecordPublisher publisher, RecordHandler handler) {
		return new Builder(plan, locks, publisher, handler);
	}

	public LadderPlan plan() {
		return this.plan;
	}

	/**
	 * Takes the next step for a record. The writes of a step are started here and not
	 * waited for: a step that writes returns {@link Step.Kind#SETTLING} with their
	 * future, and the record is finished only when that future completes. Its failure
	 * means what an exception thrown here means: nothing of the step can be relied on,
	 * and the record must be routed again. Writes that were already complete when this
	 * method returns (a store that writes before it returns) make it return
	 * {@link Step#done()} or throw, as if awaited.
	 * @param record the record
	 * @param tailerSynced whether the lock tailer has caught up with the lock partition
	 * since this record was read (a lock the record names that is still unknown was
	 * released)
	 * @return what to do with the record next
	 */
	public Step route(Delivery record, boolean tailerSynced) {
		return route(record, tailerSynced, false);
	}

	/**
	 * Takes the next step for a record, as {@link #route(Delivery, boolean)} does, or
	 * stops short after a failed run of the handler.
	 * @param record the record
	 * @param tailerSynced whether the lock tailer has caught up with the lock partition
	 * since this record was read
	 * @param deferFailures whether a failed run of the handler returns
	 * {@link Step.Kind#FAILED} at once, leaving what the failure means and its writes to
	 * the step's {@link Step#rest()}, for the caller to run when it chooses
	 * @return what to do with the record next
	 */
	public Step route(Delivery record, boolean tailerSynced, boolean deferFailures) {
		int stage = this.plan.stageOf(record.topic());
		if (stage < 0) {
			throw new IllegalArgumentException(
					"Topic '" + record.topic() + "' is not part of the ladder of '" + this.plan.mainTopic() + "'");
		}
		if (stage > 0 && !this.ownership.owns(record.topic(), record.partition(), record.offset(), record.headers())) {
			return Step.done(); // another group's record (docs/PROTOCOL.md, rule 2.0):
								// not run, not dead-lettered
		}
		CompletableFuture<Void> refused = this.moves.deadLetterIfRefused(record);
		if (refused != null) {
			return settle(Step.settling(refused));
		}
		Decision decision = (stage == 0) ? this.rules.fromMain(record)
				: this.rules.fromStage(record, stage, tailerSynced);
		return settle(carryOut(decision, record, Attempt.NONE, deferFailures));
	}

	/**
	 * The earliest time a record may run, from the record alone: its due time when it is
	 * a retry read from a stage, 0 for any other (a record of the main topic, a follower,
	 * or one whose protocol headers are unreadable and go to the dead-letter topic at
	 * once).
	 */
	public long earliestRun(Delivery record) {
		return this.rules.earliestRun(record);
	}

	/**
	 * Whether a failure of {@link #route} means that the record can go nowhere: the
	 * dead-letter topic, or the producer, refuses it as too large. Nothing was committed,
	 * and routing it again cannot succeed until a setting is raised.
	 */
	public static boolean isUnpublishable(Throwable failure) {
		return failure instanceof UnpublishableRecordException;
	}

	/**
	 * Admits a replayed dead letter's pending lock into its key's order
	 * (docs/PROTOCOL.md, rule 2.0): done by the instance that owns the key's main-topic
	 * partition, in the key's turn. Call it on a lock view that has caught up with the
	 * lock partition, so that a lock admitted or moved on meanwhile is not written back.
	 * @param locks the ladder's locks
	 * @param lockId the pending lock
	 * @param lastTaken the offset of the last record of the partition taken from the main
	 * topic before the admission's turn came, or -1
	 * @param now the time of the change
	 * @return whether the lock was admitted now; {@code false} when it is gone or already
	 * admitted
	 */
	public static boolean admitReplay(LockStore locks, String lockId, long lastTaken, Instant now) {
		return ReplayAdmission.admit(locks, lockId, lastTaken, now);
	}

	/** The lock id of a replay entry: the same for every delivery of the record. */
	static String replayLockId(Delivery record) {
		return RoutingRules.replayLockId(record);
	}

	/**
	 * Runs the handler when the rules say so, and starts the writes they decided on.
	 * @param attempt the attempt whose outcome {@code decision} is, {@link Attempt#NONE}
	 * for a decision taken without running the handler
	 */
	private Step carryOut(Decision decision, Delivery record, Attempt attempt, boolean deferFailures) {
		if (decision instanceof Decision.Settled settled) {
			return settled.step();
		}
		if (decision instanceof Decision.Run run) {
			if (this.batchRuns) {
				return Step.ready(new ReadyRun(this, record, run, deferFailures));
			}
			Attempt started = this.attempts.start(record, run.stage());
			HandlerResult result = handle(record, run.stage(), started);
			// after a run, the rules decide a write or the end: nothing runs the handler
			// again
			Supplier<Step> rest = () -> afterRun(record, run, result, started);
			boolean failed = result.outcome() != HandlerResult.Outcome.SUCCESS;
			return (deferFailures && failed) ? Step.failed(result, () -> settle(rest.get())) : rest.get();
		}
		if (decision instanceof Decision.Enter enter) {
			this.moves.writePending(enter.pending());
			return Step.waitForKey(); // until the owner of its main-topic partition
										// admits it
		}
		return Step.settling(writes(decision, record, attempt));
	}

	private CompletableFuture<Void> writes(Decision decision, Delivery record, Attempt attempt) {
		if (decision instanceof Decision.Follow follow) {
			this.followers.accept(record);
			return this.moves.moveNewLock(follow.moving(), record, attempt).thenRun(this.observer::followerForwarded);
		}
		if (decision instanceof Decision.MoveNew moveNew) {
			return this.moves.moveNewLock(moveNew.moving(), record, attempt);
		}
		if (decision instanceof Decision.Move move) {
			return this.moves.move(move.lock(), move.moving(), record, attempt);
		}
		if (decision instanceof Decision.CompleteMove complete) {
			return this.moves.completeMove(complete.moving(), record, complete.fromMain());
		}
		if (decision instanceof Decision.Publish publish) {
			return this.moves.publishWithoutLock(record, publish.hop(), publish.toStage(), attempt);
		}
		if (decision instanceof Decision.DeadLetter dead) {
			CompletableFuture<Void> published = this.moves.deadLetter(record, dead.hop(), dead.reason(), attempt);
			Lock lock = dead.release();
			CompletableFuture<Void> released = (lock != null)
					? published.thenCompose((ignored) -> this.moves.release(lock)) : published;
			OperatorCommand command = dead.command();
			return (command != null) ? released.thenCompose((ignored) -> this.moves.finish(command)) : released;
		}
		if (decision instanceof Decision.Malformed malformed) {
			return this.moves.deadLetterMalformed(record, malformed.hop(), malformed.problem());
		}
		if (decision instanceof Decision.Release release) {
			return this.moves.release(release.lock());
		}
		throw new IllegalStateException("Nothing to write for " + decision);
	}

	/**
	 * The run of a record of the main topic queued behind a ready one of its key, in the
	 * same batch (docs/PROTOCOL.md, rule 10): {@code next} may run right after
	 * {@code head} if {@code head} succeeds, when {@code head} is a record of the main
	 * topic whose key has no lock, so that its success writes nothing, and the rules let
	 * {@code next} run now on the same view. Decides without writing anything;
	 * {@code null} when {@code next} must wait for its own route once {@code head} is
	 * done.
	 * @param head a ready record, the head of its key
	 * @param next the record of its key taken right after it (or after an earlier such
	 * record) from the same partition
	 */
	public @Nullable ReadyRun readyBehind(ReadyRun head, Delivery next) {
		Decision.Run run = head.run();
		if (run.stage() != 0 || run.lock() != null || next.businessKey() == null
				|| !next.topic().equals(head.record().topic()) || next.partition() != head.record().partition()
				|| !next.businessKey().equals(head.record().businessKey()) || this.moves.wasRefused(next)) {
			return null;
		}
		return (this.rules.fromMain(next) instanceof Decision.Run behind)
				? new ReadyRun(this, next, behind, head.defersFailures()) : null;
	}

	/**
	 * A batch ran a ready record: observes its attempt, which has ended, and counts its
	 * run.
	 * @return the attempt, for the sends that carry the record on
	 */
	Attempt attempted(Delivery record, int stage, HandlerResult result, long nanos, AttemptObservation.Batch batch) {
		Attempt attempt = this.attempts.start(record, stage, batch);
		attempt.ended(result);
		this.observer.handled(stage, result.outcome(), nanos);
		return attempt;
	}

	/** Starts the attempt of a ready record whose handler's result completes later. */
	Attempt startAttempt(Delivery record, int stage) {
		return this.attempts.start(record, stage);
	}

	/** Ends the attempt of a ready record whose result completed, and counts its run. */
	void ended(Attempt attempt, int stage, HandlerResult result, long nanos) {
		attempt.ended(result);
		this.observer.handled(stage, result.outcome(), nanos);
	}

	/**
	 * Starts observing a call of the batch listener's method on ready records of this
	 * ladder.
	 * @see AttemptObservation#startBatch(int)
	 */
	public AttemptObservation.Batch startBatch(int records) {
		return this.attempts.startBatch(records);
	}

	/**
	 * A batch of ready records ran, for metrics.
	 * @see LadderObserver#batchRan(int, int, long)
	 */
	public void batchRan(int records, int bisections, long nanos) {
		this.observer.batchRan(records, bisections, nanos);
	}

	/**
	 * The rest of a record's step once the handler ran it (alone or in a batch); after a
	 * run that an operator's {@code retry-now} asked for, the command ends once the step
	 * is done.
	 */
	Step afterRun(Delivery record, Decision.Run run, HandlerResult result, Attempt attempt) {
		Step step = settle(carryOut(this.rules.afterRun(record, run, result), record, attempt, false));
		OperatorCommand command = run.command();
		if (command == null) {
			return step;
		}
		CompletableFuture<?> writes = (step.writes() != null) ? step.writes() : CompletableFuture.completedFuture(null);
		return settle(Step.settling(writes.thenCompose((ignored) -> this.moves.finish(command))));
	}

	private HandlerResult handle(Delivery record, int stage, Attempt attempt) {
		long start = System.nanoTime();
		HandlerResult result;
		try {
			result = this.handler.handle(record);
		}
		catch (RuntimeException | Error ex) {
			attempt.failed(ex);
			throw ex;
		}
		long nanos = System.nanoTime() - start;
		attempt.ended(result);
		this.observer.handled(stage, result.outcome(), nanos);
		return result;
	}

	/**
	 * A step whose writes are already complete is done, or throws what they failed with.
	 */
	private static Step settle(Step step) {
		CompletableFuture<?> writes = step.writes();
		if (writes == null || !writes.isDone()) {
			return step;
		}
		Futures.rethrowIfFailed(writes);
		return Step.done();
	}

	/**
	 * Builds a {@link StageRouter}. The defaults: no failure is permanent, the system
	 * clock in UTC, random lock ids, {@link DualWrite#COMPENSATE}, no faults, the plan's
	 * ownership, no follower listener, no observers, a handler run per record and no
	 * jitter.
	 *
	 * @since 0.1.0
	 */
	public static final class Builder {

		private final LadderPlan plan;

		private final LockStore locks;

		private final RecordPublisher publisher;

		private final RecordHandler handler;

		private FailureClassifier classifier = new FailureClassifier(List.of());

		private Clock clock = Clock.systemUTC();

		private Supplier<String> lockIds = () -> UUID.randomUUID().toString();

		private DualWrite dualWrite = DualWrite.COMPENSATE;

		private FaultInjection faults = FaultInjection.NONE;

		private Ownership ownership;

		private Consumer<Delivery> followers = (record) -> {
		};

		private LadderObserver observer = LadderObserver.NONE;

		private AttemptObservation attempts = AttemptObservation.NONE;

		private boolean batchRuns;

		private double dueTimeJitter;

		private Builder(LadderPlan plan, LockStore locks, RecordPublisher publisher, RecordHandler handler) {
			this.plan = plan;
			this.locks = locks;
			this.publisher = publisher;
			this.handler = handler;
			this.ownership = plan.ownership();
		}

		/** Tells permanent failures from transient ones. */
		public Builder classifier(FailureClassifier classifier) {
			this.classifier = classifier;
			return this;
		}

		/** The clock that dates locks and decides due times. */
		public Builder clock(Clock clock) {
			this.clock = clock;
			return this;
		}

		/** The ids of new locks. */
		public Builder lockIds(Supplier<String> lockIds) {
			this.lockIds = lockIds;
			return this;
		}

		/**
		 * How the caller keeps a move's writes consistent: with
		 * {@link DualWrite#TRANSACTION} every write of one call is in a transaction that
		 * the caller aborts when the router throws, so a failed publish is not
		 * compensated by the router.
		 */
		public Builder dualWrite(DualWrite dualWrite) {
			this.dualWrite = dualWrite;
			return this;
		}

		/** The test hook called between the steps of a move. */
		public Builder faults(FaultInjection faults) {
			this.faults = faults;
			return this;
		}

		/** The group that owns the ladder: stage records of any other are skipped. */
		public Builder ownership(Ownership ownership) {
			this.ownership = ownership;
			return this;
		}

		/**
		 * Who hears of each record of the main topic that follows its key into the ladder
		 * without running: the outage breaker counts it with the failures, since its key
		 * is held.
		 */
		public Builder followers(Consumer<Delivery> followers) {
			this.followers = followers;
			return this;
		}

		/** Who hears what the router does with each record, for metrics. */
		public Builder observer(LadderObserver observer) {
			this.observer = observer;
			return this;
		}

		/**
		 * What observes each run of the handler and the sends that carry a record on from
		 * it, for tracing.
		 */
		public Builder attempts(AttemptObservation attempts) {
			this.attempts = attempts;
			return this;
		}

		/**
		 * Whether the router leaves the runs of the handler to its caller, for a listener
		 * that runs its records in batches or whose handler's results complete later: a
		 * record the rules let run now is not run by the router, and
		 * {@link StageRouter#route(Delivery, boolean, boolean)} returns
		 * {@link Step.Kind#READY} with its {@link ReadyRun} instead; the handler is not
		 * called.
		 */
		public Builder batchRuns(boolean batchRuns) {
			this.batchRuns = batchRuns;
			return this;
		}

		/**
		 * Spreads the due times of retries by up to {@code share} of their stage's delay,
		 * drawn from each record's place in its stage topic (the same wherever and
		 * however often it is read), so that keys that failed together do not come due
		 * together.
		 * @param share between 0 (none, the default) and 1
		 */
		public Builder dueTimeJitter(double share) {
			if (!(share >= 0 && share <= 1)) {
				throw new IllegalArgumentException(
						"kafka.resilience.retry.jitter must be between 0 and 1, was " + share);
			}
			this.dueTimeJitter = share;
			return this;
		}

		/** The router, complete. */
		public StageRouter build() {
			return new StageRouter(this);
		}

	}

}
