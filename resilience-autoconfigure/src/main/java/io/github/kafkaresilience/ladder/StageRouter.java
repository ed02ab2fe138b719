package io.github.kafkaresilience.ladder;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.kafkaresilience.lock.FailureInfo;
import io.github.kafkaresilience.lock.Lock;
import io.github.kafkaresilience.lock.LockStore;
import io.github.kafkaresilience.lock.Ownership;
import io.github.kafkaresilience.lock.Position;
import io.github.kafkaresilience.support.Futures;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * Decides, for one record of a main or stage topic, what happens to it: run the handler,
 * become a follower of a locked key, wait for its due time or its predecessor, move on to the
 * next stage, be forwarded behind its predecessor, go to the dead-letter topic, or be skipped
 * as a stale copy.
 * <p>
 * Every step is safe to repeat after a crash at any point: a move writes the lock first, then
 * publishes, then confirms the lock's new position, and a record that finds its own move
 * unfinished completes it. When this method throws, nothing was committed and the record must
 * be delivered again.
 * <p>
 * A record that a retry topic (or the producer) refuses as too large cannot be retried: it is
 * dead-lettered as {@code permanent}, with a {@code RecordTooLargeException} that names the
 * refusing topic and the setting to raise, and its lock is released, as after any permanent
 * failure. When the dead-letter topic refuses it too, an {@link UnpublishableRecordException}
 * is thrown: the record can go nowhere until a setting is raised.
 *
 * @since 0.1.0
 */
public class StageRouter {

	private static final Log logger = LogFactory.getLog(StageRouter.class);

	/** At most this many refusals are remembered: a record whose partition was revoked never comes back. */
	private static final int MAX_REFUSALS = 1000;

	private final LadderPlan plan;

	private final LockStore locks;

	private final RecordPublisher publisher;

	private final RecordHandler handler;

	private final FailureClassifier classifier;

	private final Clock clock;

	private final Supplier<String> lockIds;

	private final DualWrite dualWrite;

	private final FaultInjection faults;

	private final Ownership ownership;

	private volatile LadderObserver observer = LadderObserver.NONE;

	/**
	 * In {@link DualWrite#TRANSACTION} mode, the records whose move a topic refused as too
	 * large, by {@link Delivery#toString() position}: the failed send dooms the transaction,
	 * so the record is dead-lettered in the next one, when it is routed again.
	 */
	private final Map<String, Refusal> refusals = new ConcurrentHashMap<>();

	public StageRouter(LadderPlan plan, LockStore locks, RecordPublisher publisher, RecordHandler handler,
			FailureClassifier classifier, Clock clock, Supplier<String> lockIds) {
		this(plan, locks, publisher, handler, classifier, clock, lockIds, DualWrite.COMPENSATE, FaultInjection.NONE,
				plan.ownership());
	}

	/**
	 * @param dualWrite how the caller keeps a move's writes consistent: with
	 * {@link DualWrite#TRANSACTION} every write of one call is in a transaction that the caller
	 * aborts when this router throws, so a failed publish is not compensated here
	 * @param faults the test hook called between the steps of a move
	 * @param ownership the group that owns the ladder: stage records of any other are skipped
	 */
	public StageRouter(LadderPlan plan, LockStore locks, RecordPublisher publisher, RecordHandler handler,
			FailureClassifier classifier, Clock clock, Supplier<String> lockIds, DualWrite dualWrite,
			FaultInjection faults, Ownership ownership) {
		this.ownership = ownership;
		this.dualWrite = dualWrite;
		this.faults = faults;
		this.plan = plan;
		this.locks = locks;
		this.publisher = publisher;
		this.handler = handler;
		this.classifier = classifier;
		this.clock = clock;
		this.lockIds = lockIds;
	}

	/** Sets who hears what this router does with each record, for metrics. */
	public void observeWith(LadderObserver observer) {
		this.observer = observer;
	}

	public LadderPlan plan() {
		return this.plan;
	}

	/**
	 * Takes the next step for a record. The writes of a step are started here and not waited
	 * for: a step that writes returns {@link Step.Kind#SETTLING} with their future, and the
	 * record is finished only when that future completes. Its failure means what an exception
	 * thrown here means: nothing of the step can be relied on, and the record must be routed
	 * again. Writes that were already complete when this method returns (a store that writes
	 * before it returns) make it return {@link Step#done()} or throw, as if awaited.
	 * @param record the record
	 * @param tailerSynced whether the lock tailer has caught up with the lock partition since
	 * this record was read (a lock the record names that is still unknown was released)
	 * @return what to do with the record next
	 */
	public Step route(Delivery record, boolean tailerSynced) {
		int stage = this.plan.stageOf(record.topic());
		if (stage < 0) {
			throw new IllegalArgumentException("Topic '" + record.topic() + "' is not part of the ladder of '"
					+ this.plan.mainTopic() + "'");
		}
		if (stage > 0 && !this.ownership.owns(record.topic(), record.partition(), record.offset(), record.headers())) {
			return Step.done(); // another group's record (PROTOCOL §2): not run, not dead-lettered
		}
		Refusal refusal = this.refusals.isEmpty() ? null : this.refusals.remove(record.toString());
		if (refusal != null) {
			CompletableFuture<Void> dead = deadLetterRefused(record, refusal).whenComplete((ignored, ex) -> {
				if (ex != null && !(Futures.cause(ex) instanceof UnpublishableRecordException)) {
					this.refusals.put(record.toString(), refusal);
				}
			});
			return settle(dead);
		}
		return settle((stage == 0) ? fromMain(record) : fromStage(record, stage, tailerSynced));
	}

	/** A step whose writes are already complete is done, or throws what they failed with. */
	private static Step settle(Step step) {
		CompletableFuture<?> writes = step.writes();
		if (writes == null || !writes.isDone()) {
			return step;
		}
		Futures.rethrowIfFailed(writes);
		return Step.done();
	}

	private static Step settle(CompletableFuture<?> writes) {
		return settle(Step.settling(writes));
	}

	// PROTOCOL §5
	private Step fromMain(Delivery record) {
		Bytes key = record.businessKey();
		if (key != null) {
			Lock earlier = this.locks.byOrigin(key, record.offset());
			if (earlier != null) {
				// an earlier delivery of this record got this far; its first move is this
				// record's to finish, any later one belongs to a record in a retry stage
				if (earlier.isMoving() && new Position(0, record.offset()).equals(earlier.from())) {
					return Step.settling(completeMove(earlier, record, true));
				}
				return Step.done();
			}
			if (!this.locks.locksOf(key).isEmpty()) {
				Lock follower = Lock.moving(this.lockIds.get(), key, record.partition(), record.offset(), 1,
						new Position(0, record.offset()), 0, null, now());
				return Step.settling(moveNewLock(follower, record).thenRun(this.observer::followerForwarded));
			}
		}
		HandlerResult result = handle(record, 0);
		if (result.outcome() == HandlerResult.Outcome.SUCCESS) {
			return Step.done();
		}
		Throwable ex = result.failure();
		if (result.outcome() == HandlerResult.Outcome.POISON) {
			return Step.settling(
					deadLetter(record, new Hop(true, 0, null, RetryHeaders.failure(ex, true, now())), DlqReason.POISON));
		}
		boolean permanent = this.classifier.isPermanent(ex);
		FailureInfo failure = RetryHeaders.failure(ex, permanent, now());
		if (permanent || this.plan.maxAttempts() <= 1) {
			return Step.settling(
					deadLetter(record, new Hop(true, 1, null, failure),
							permanent ? DlqReason.PERMANENT : DlqReason.EXHAUSTED));
		}
		if (key == null) {
			return Step.settling(publishWithoutLock(record, new Hop(true, 1, null, failure), 1));
		}
		Lock lock = Lock.moving(this.lockIds.get(), key, record.partition(), record.offset(), 1,
				new Position(0, record.offset()), 1, failure, now());
		return Step.settling(moveNewLock(lock, record));
	}

	/**
	 * The earliest time a record may run, from the record alone: its due time when it is a
	 * retry read from a stage, 0 for any other (a record of the main topic, a follower, or one
	 * whose protocol headers are unreadable and go to the dead-letter topic at once).
	 */
	public long earliestRun(Delivery record) {
		int stage = this.plan.stageOf(record.topic());
		Integer retryCount = (stage > 0) ? RetryHeaders.retryCount(record.headers()) : null;
		if (retryCount == null || retryCount == 0) {
			return 0;
		}
		return record.timestamp() + this.plan.stage(stage).delay().toMillis();
	}

	// PROTOCOL §6
	private Step fromStage(Delivery record, int stage, boolean tailerSynced) {
		Integer retryCount = RetryHeaders.retryCount(record.headers());
		String lockId = RetryHeaders.text(record.headers(), RetryHeaders.LOCK_ID);
		Bytes key = record.businessKey();
		// a dead letter sent back by a replay: it gets a lock named after where it entered
		boolean entry = stage == 1 && key != null && RetryHeaders.isReplayEntry(record.headers());
		if (entry) {
			lockId = replayLockId(record);
		}
		if (retryCount == null || (key != null && lockId == null) || (key == null && lockId != null)) {
			return deadLetterMalformed(record, (retryCount != null) ? retryCount : 0,
					"missing or unreadable protocol headers (retry.count="
							+ RetryHeaders.text(record.headers(), RetryHeaders.RETRY_COUNT) + ", lock.id=" + lockId + ")");
		}
		if (lockId == null) {
			return runWhenDue(record, stage, retryCount, null);
		}
		Lock lock = this.locks.find(lockId);
		if (lock == null) {
			if (entry) {
				return enter(record, lockId, tailerSynced);
			}
			// the lock was written before this record: once the tailer has caught up, an
			// unknown lock is a released one and this record is a copy of finished work
			return skipStale(tailerSynced);
		}
		if (!lock.key().equals(key)) {
			return deadLetterMalformed(record, retryCount, "a lock.id that names lock " + lockId + " of another key");
		}
		if (lock.isPending()) {
			return Step.waitForKey(); // until the owner of its main-topic partition admits it
		}
		Position here = new Position(stage, record.offset());
		if (lock.isMoving()) {
			if (here.equals(lock.from())) {
				return Step.settling(completeMove(lock, record, false));
			}
			// only a copy the unfinished move may have published can become the carrier: one
			// in the target stage and, when the move re-appends to its own stage, after the source
			boolean mayCarry = stage == lock.stage() && (lock.from().stage() != stage || here.isAfter(lock.from()));
			return mayCarry ? Step.waitForKey() : skipStale(tailerSynced);
		}
		if (!here.equals(lock.position())) {
			return skipStale(tailerSynced); // another record carries the lock
		}
		Lock predecessor = this.locks.predecessor(lock);
		if (predecessor == null) {
			return runWhenDue(record, stage, retryCount, lock);
		}
		Position ahead = predecessor.position();
		if (ahead != null && ahead.isAfter(here)) {
			// forward: not an attempt, the record keeps its count and its last failure
			return Step.settling(move(lock, record, stage, ahead.stage(), retryCount, null));
		}
		return Step.waitForKey();
	}

	/**
	 * Takes a replayed dead letter into its key's order (docs/PROTOCOL.md, rule 2.0): it gets
	 * a lock, pending until the instance that owns its main-topic partition admits it behind
	 * every record of its key taken from there so far; until then it waits. Its lock id comes from
	 * where it entered, so a redelivery finds the lock an earlier delivery wrote. Once the lock
	 * is released it is forgotten: a redelivery after that enters again, which runs the record
	 * again, as any redelivery may.
	 */
	private Step enter(Delivery record, String lockId, boolean tailerSynced) {
		if (!tailerSynced) {
			return Step.waitForTailer(); // an earlier delivery may have written the lock already
		}
		this.locks.write(Lock.pendingReplay(lockId, record.businessKey(), record.partition(), record.offset(), now()));
		return Step.waitForKey();
	}

	/** The lock id of a replay entry: the same for every delivery of the record. */
	static String replayLockId(Delivery record) {
		return UUID.nameUUIDFromBytes((record.topic() + "/" + record.partition() + "/" + record.offset())
			.getBytes(StandardCharsets.UTF_8)).toString();
	}

	/**
	 * Runs the head of a key (or a record without a key) once it is due: success releases its
	 * lock; failure moves it to the next stage or, when it is permanent or attempts are
	 * exhausted, to the dead-letter topic.
	 */
	private Step runWhenDue(Delivery record, int stage, int retryCount, @Nullable Lock lock) {
		if (retryCount > 0) {
			long dueAt = record.timestamp() + this.plan.stage(stage).delay().toMillis();
			if (this.clock.millis() < dueAt) {
				return Step.waitUntil(dueAt);
			}
		}
		HandlerResult result = handle(record, stage);
		String lockId = (lock != null) ? lock.id() : null;
		if (result.outcome() == HandlerResult.Outcome.SUCCESS) {
			return Step.settling(release(lock));
		}
		Throwable ex = result.failure();
		if (result.outcome() == HandlerResult.Outcome.POISON) {
			return Step.settling(deadLetter(record, new Hop(false, retryCount, lockId, RetryHeaders.failure(ex, true, now())),
					DlqReason.POISON).thenCompose((ignored) -> release(lock)));
		}
		// a count read from a retry topic can be as large as an int goes; it must not wrap around
		int attempts = (retryCount < Integer.MAX_VALUE) ? retryCount + 1 : retryCount;
		boolean permanent = this.classifier.isPermanent(ex);
		FailureInfo failure = RetryHeaders.failure(ex, permanent, now());
		if (permanent || attempts >= this.plan.maxAttempts()) {
			return Step.settling(deadLetter(record, new Hop(false, attempts, lockId, failure),
					permanent ? DlqReason.PERMANENT : DlqReason.EXHAUSTED).thenCompose((ignored) -> release(lock)));
		}
		if (lock != null) {
			return Step.settling(move(lock, record, stage, nextStage(stage), attempts, failure));
		}
		return Step.settling(publishWithoutLock(record, new Hop(false, attempts, null, failure), nextStage(stage)));
	}

	private HandlerResult handle(Delivery record, int stage) {
		long start = System.nanoTime();
		HandlerResult result = this.handler.handle(record);
		this.observer.handled(stage, result.outcome(), System.nanoTime() - start);
		return result;
	}

	private CompletableFuture<Void> release(@Nullable Lock lock) {
		return (lock != null) ? Futures.call(() -> this.locks.releasing(lock)) : Futures.done();
	}

	/**
	 * A record judged a stale copy is skipped only on a view of the locks that is current:
	 * another instance may have moved the lock to this very record after this table last
	 * heard of it.
	 */
	private static Step skipStale(boolean tailerSynced) {
		return tailerSynced ? Step.done() : Step.waitForTailer();
	}

	private int nextStage(int stage) {
		return Math.min(stage + 1, this.plan.lastStage());
	}

	/**
	 * Moves a lock created for a main-topic record to stage 1. If the publish fails, the new
	 * lock is released again (nothing else refers to it yet) and the record is redelivered.
	 * When the lock write itself reports a failure it may still have landed: it is released
	 * too, or the redelivery would create a second lock and leave this one moving forever.
	 */
	private CompletableFuture<Void> moveNewLock(Lock moving, Delivery record) {
		return undoOnFailure(Futures.call(() -> this.locks.writing(moving)),
				() -> this.locks.releasing(moving), moving, record)
			.thenCompose((ignored) -> publishThenConfirm(moving, record, true, () -> this.locks.releasing(moving)));
	}

	/**
	 * Moves a lock already in the ladder. If the publish fails the lock goes back to its
	 * confirmed position (releasing it would let its key's later records overtake it) and the
	 * record is redelivered.
	 */
	private CompletableFuture<Void> move(Lock lock, Delivery record, int fromStage, int toStage, int retryCount,
			@Nullable FailureInfo failure) {
		Lock moving = lock.moveTo(toStage, new Position(fromStage, record.offset()), retryCount, failure, now());
		return Futures.call(() -> this.locks.writing(moving))
			.thenCompose((ignored) -> publishThenConfirm(moving, record, false, () -> this.locks.writing(lock)));
	}

	/**
	 * The second half of a move whose lock is written: publishes the record to the lock's
	 * stage, then confirms the lock there. A publish refused as too large dead-letters the
	 * record instead; any other failed publish undoes the lock write and fails the move.
	 */
	private CompletableFuture<Void> publishThenConfirm(Lock moving, Delivery record, boolean fromMain,
			Supplier<CompletableFuture<Void>> undo) {
		Hop hop = Hop.of(moving, fromMain);
		CompletableFuture<Long> published = Futures.call(() -> {
			this.faults.at(FaultInjection.Point.LOCK_WRITTEN, record);
			return publish(record, hop, moving.stage());
		}).thenApply((offset) -> {
			this.faults.at(FaultInjection.Point.PUBLISHED, record);
			return offset;
		});
		return published.handle((offset, ex) -> {
			if (ex == null) {
				return confirm(moving, offset);
			}
			return publishFailed(ex, record, hop, moving.stage(), (cause) -> undoThenFail(undo, moving, record, cause));
		}).thenCompose(Function.identity());
	}

	/** Finishes a move that an earlier delivery of this record started (PROTOCOL §5.0, §6.1). */
	private CompletableFuture<Void> completeMove(Lock moving, Delivery record, boolean fromMain) {
		Hop hop = Hop.of(moving, fromMain);
		CompletableFuture<Long> published = Futures.call(() -> publish(record, hop, moving.stage()));
		return published.handle((offset, ex) -> {
			if (ex == null) {
				this.faults.at(FaultInjection.Point.PUBLISHED, record);
				return confirm(moving, offset);
			}
			return publishFailed(ex, record, hop, moving.stage(), CompletableFuture::failedFuture);
		}).thenCompose(Function.identity());
	}

	/** Publishes a record without a key, which moves without a lock, to {@code toStage}. */
	private CompletableFuture<Void> publishWithoutLock(Delivery record, Hop hop, int toStage) {
		CompletableFuture<Long> published = Futures.call(() -> publish(record, hop, toStage));
		return published.handle((offset, ex) -> (ex == null) ? Futures.done()
				: publishFailed(ex, record, hop, toStage, CompletableFuture::failedFuture))
			.thenCompose(Function.identity());
	}

	/**
	 * After the publish of a record's move to {@code toStage} failed: a record a topic refused
	 * as too large is dead-lettered instead ({@link #refused}); any other failure goes to
	 * {@code otherwise}.
	 */
	private CompletableFuture<Void> publishFailed(Throwable ex, Delivery record, Hop hop, int toStage,
			Function<Throwable, CompletableFuture<Void>> otherwise) {
		Throwable cause = Futures.cause(ex);
		if (cause instanceof RuntimeException failed) {
			Throwable tooLarge = Refusal.tooLarge(failed);
			if (tooLarge != null) {
				return refused(record, new Refusal(this.plan.topicOf(toStage), tooLarge, hop), failed);
			}
		}
		return otherwise.apply(cause);
	}

	/**
	 * A retry topic (or the producer) refused a record as too large: it cannot be retried, so
	 * it is dead-lettered as a permanent failure and its lock, if any, released. The key's
	 * later records keep waiting behind every earlier record still in the ladder, so none
	 * overtakes a record that will still be handled; the refused record itself is finished.
	 * In a transaction the failed send dooms the transaction: the record is dead-lettered in
	 * the next one, when it is routed again.
	 */
	private CompletableFuture<Void> refused(Delivery record, Refusal refusal, RuntimeException ex) {
		if (this.dualWrite == DualWrite.TRANSACTION) {
			if (this.refusals.size() >= MAX_REFUSALS) {
				this.refusals.clear();
			}
			this.refusals.put(record.toString(), refusal);
			return CompletableFuture.failedFuture(new KafkaException("'" + refusal.topic() + "' refused " + record
					+ " as too large; the transaction is aborted and the record is sent to '" + this.plan.dlqTopic()
					+ "' when it is routed again", ex));
		}
		return deadLetterRefused(record, refusal);
	}

	/**
	 * Dead-letters a record a topic refused as too large, with the refusal as its failure, and
	 * releases the lock it carries or was to carry. The lock goes last: after a crash before
	 * it, the redelivered record finds its move unfinished and comes here again.
	 */
	private CompletableFuture<Void> deadLetterRefused(Delivery record, Refusal refusal) {
		String message = refusal.deadLettered(record, this.plan.dlqTopic());
		logger.warn(message);
		String lockId = refusal.hop().lockId();
		return deadLetter(record, refusal.hop().failedWith(refusal.failure(message, now())), DlqReason.PERMANENT)
			.thenCompose((ignored) -> release((lockId != null) ? this.locks.find(lockId) : null));
	}

	/**
	 * Confirms a move, unless the lock changed meanwhile: another delivery of the same source
	 * record may have completed the move, and the lock may even be released already; a late
	 * confirmation must not bring it back.
	 */
	private CompletableFuture<Void> confirm(Lock moving, long offset) {
		synchronized (this) {
			Lock current = this.locks.find(moving.id());
			if (current == null || !current.isMoving() || current.stage() != moving.stage()
					|| !current.from().equals(moving.from())) {
				logger.debug("Not confirming " + moving + " at " + offset + ": the lock is now " + current);
				return Futures.done();
			}
			return Futures.call(() -> this.locks.writing(moving.confirmedAt(offset, now())));
		}
	}

	/**
	 * When {@code write} fails, undoes it ({@code compensate} mode) and fails with the write's
	 * failure; in {@code transaction} mode the caller aborts the transaction instead.
	 */
	private CompletableFuture<Void> undoOnFailure(CompletableFuture<Void> write, Supplier<CompletableFuture<Void>> undo,
			Lock moving, Delivery record) {
		return write.handle((ignored, ex) -> (ex == null) ? Futures.done() : undoThenFail(undo, moving, record, Futures.cause(ex)))
			.thenCompose(Function.identity());
	}

	/**
	 * Undoes a lock write after a failed step and fails with the step's failure. A failed undo
	 * leaves the lock in flight; the record's redelivery completes the move. An {@link Error}
	 * is not undone: it fails at once.
	 */
	private CompletableFuture<Void> undoThenFail(Supplier<CompletableFuture<Void>> undo, Lock moving, Delivery record,
			Throwable cause) {
		if (this.dualWrite == DualWrite.TRANSACTION || !(cause instanceof RuntimeException)) {
			return CompletableFuture.failedFuture(cause); // the caller aborts the transaction, and the lock write with it
		}
		return Futures.call(() -> {
			this.faults.at(FaultInjection.Point.COMPENSATING, record);
			return undo.get();
		}).handle((ignored, ex) -> {
			if (ex != null) {
				Throwable undoFailure = Futures.cause(ex);
				if (undoFailure instanceof Error error) {
					throw error;
				}
				cause.addSuppressed(undoFailure);
				logger.warn("Could not undo the move of " + moving + " after a failed publish", undoFailure);
			}
			return CompletableFuture.<Void>failedFuture(cause);
		}).thenCompose(Function.identity());
	}

	private CompletableFuture<Long> publish(Delivery record, Hop hop, int toStage) {
		String topic = this.plan.stage(toStage).topic();
		return this.publisher.sending(topic, record.partition(), record.key(), record.value(),
				hop.headers(record, null, this.ownership));
	}

	/** Dead-letters a retry-topic record whose protocol headers make no sense, as poison. */
	private Step deadLetterMalformed(Delivery record, int retryCount, String problem) {
		logger.warn("Record " + record + " has " + problem + "; sending it to '" + this.plan.dlqTopic() + "'");
		return Step.settling(deadLetter(record,
				new Hop(false, retryCount, null, RetryHeaders.failure(new IllegalStateException(problem), true, now())),
				DlqReason.POISON));
	}

	/**
	 * Publishes a dead letter. When the dead-letter topic refuses it as too large, the future
	 * fails with an {@link UnpublishableRecordException}: the record can go nowhere.
	 */
	private CompletableFuture<Void> deadLetter(Delivery record, Hop hop, DlqReason reason) {
		FailureInfo failure = Objects.requireNonNull(hop.failure(), "a dead letter tells its failure");
		CompletableFuture<Long> published = Futures.call(() -> this.publisher.sending(this.plan.dlqTopic(),
				record.partition(), record.key(), record.value(), hop.headers(record, reason, this.ownership)));
		return published.handle((offset, ex) -> {
			if (ex == null) {
				this.observer.deadLettered(reason, failure.errorClass());
				return Futures.done();
			}
			Throwable cause = Futures.cause(ex);
			Throwable tooLarge = Refusal.tooLarge(cause);
			if (tooLarge == null) {
				return CompletableFuture.<Void>failedFuture(cause);
			}
			return CompletableFuture.<Void>failedFuture(
					new Refusal(this.plan.dlqTopic(), tooLarge, hop).unpublishable(record, cause));
		}).thenCompose(Function.identity());
	}

	private Instant now() {
		return this.clock.instant();
	}

	/**
	 * A record can be neither moved on nor dead-lettered: the dead-letter topic, or the
	 * producer, refuses it as too large. Nothing was committed, and routing it again cannot
	 * succeed until a setting is raised, so its partition must not go on past it.
	 *
	 * @since 0.1.0
	 */
	public static class UnpublishableRecordException extends KafkaException {

		private final String refusingTopic;

		public UnpublishableRecordException(String message, String refusingTopic, Throwable cause) {
			super(message, cause);
			this.refusingTopic = refusingTopic;
		}

		/** The topic that refused the record. */
		public String refusingTopic() {
			return this.refusingTopic;
		}

	}

}
