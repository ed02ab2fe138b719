package io.github.kafkaresilience.ladder;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import io.github.kafkaresilience.lock.FailureInfo;
import io.github.kafkaresilience.lock.Lock;
import io.github.kafkaresilience.lock.LockStore;
import io.github.kafkaresilience.lock.Ownership;
import io.github.kafkaresilience.lock.Position;
import io.github.kafkaresilience.support.Futures;
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

	private final LadderPlan plan;

	private final LockStore locks;

	private final RecordHandler handler;

	private final FailureClassifier classifier;

	private final Clock clock;

	private final Supplier<String> lockIds;

	private final Ownership ownership;

	private final Moves moves;

	private volatile LadderObserver observer = LadderObserver.NONE;

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
		this.plan = plan;
		this.locks = locks;
		this.handler = handler;
		this.classifier = classifier;
		this.clock = clock;
		this.lockIds = lockIds;
		this.moves = new Moves(plan, locks, publisher, clock, dualWrite, faults, ownership, this);
	}

	/** Sets who hears what this router does with each record, for metrics. */
	public void observeWith(LadderObserver observer) {
		this.observer = observer;
		this.moves.observeWith(observer);
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
		CompletableFuture<Void> refused = this.moves.deadLetterIfRefused(record);
		if (refused != null) {
			return settle(refused);
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
					return Step.settling(this.moves.completeMove(earlier, record, true));
				}
				return Step.done();
			}
			if (!this.locks.locksOf(key).isEmpty()) {
				Lock follower = Lock.moving(this.lockIds.get(), key, record.partition(), record.offset(), 1,
						new Position(0, record.offset()), 0, null, now());
				return Step.settling(this.moves.moveNewLock(follower, record).thenRun(this.observer::followerForwarded));
			}
		}
		HandlerResult result = handle(record, 0);
		if (result.outcome() == HandlerResult.Outcome.SUCCESS) {
			return Step.done();
		}
		Throwable ex = result.failure();
		if (result.outcome() == HandlerResult.Outcome.POISON) {
			return Step.settling(this.moves.deadLetter(record, new Hop(true, 0, null, RetryHeaders.failure(ex, true, now())),
					DlqReason.POISON));
		}
		boolean permanent = this.classifier.isPermanent(ex);
		FailureInfo failure = RetryHeaders.failure(ex, permanent, now());
		if (permanent || this.plan.maxAttempts() <= 1) {
			return Step.settling(this.moves.deadLetter(record, new Hop(true, 1, null, failure),
					permanent ? DlqReason.PERMANENT : DlqReason.EXHAUSTED));
		}
		if (key == null) {
			return Step.settling(this.moves.publishWithoutLock(record, new Hop(true, 1, null, failure), 1));
		}
		Lock lock = Lock.moving(this.lockIds.get(), key, record.partition(), record.offset(), 1,
				new Position(0, record.offset()), 1, failure, now());
		return Step.settling(this.moves.moveNewLock(lock, record));
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
				return Step.settling(this.moves.completeMove(lock, record, false));
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
			return Step.settling(this.moves.move(lock, lock.moveTo(ahead.stage(), here, retryCount, null, now()), record));
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
		this.moves.writePending(Lock.pendingReplay(lockId, record.businessKey(), record.partition(), record.offset(), now()));
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
			return Step.settling(this.moves.release(lock));
		}
		Throwable ex = result.failure();
		if (result.outcome() == HandlerResult.Outcome.POISON) {
			return Step.settling(this.moves
				.deadLetter(record, new Hop(false, retryCount, lockId, RetryHeaders.failure(ex, true, now())), DlqReason.POISON)
				.thenCompose((ignored) -> this.moves.release(lock)));
		}
		// a count read from a retry topic can be as large as an int goes; it must not wrap around
		int attempts = (retryCount < Integer.MAX_VALUE) ? retryCount + 1 : retryCount;
		boolean permanent = this.classifier.isPermanent(ex);
		FailureInfo failure = RetryHeaders.failure(ex, permanent, now());
		if (permanent || attempts >= this.plan.maxAttempts()) {
			return Step.settling(this.moves
				.deadLetter(record, new Hop(false, attempts, lockId, failure),
						permanent ? DlqReason.PERMANENT : DlqReason.EXHAUSTED)
				.thenCompose((ignored) -> this.moves.release(lock)));
		}
		if (lock != null) {
			return Step.settling(this.moves.move(lock,
					lock.moveTo(nextStage(stage), new Position(stage, record.offset()), attempts, failure, now()), record));
		}
		return Step.settling(this.moves.publishWithoutLock(record, new Hop(false, attempts, null, failure), nextStage(stage)));
	}

	private HandlerResult handle(Delivery record, int stage) {
		long start = System.nanoTime();
		HandlerResult result = this.handler.handle(record);
		this.observer.handled(stage, result.outcome(), System.nanoTime() - start);
		return result;
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

	/** Dead-letters a retry-topic record whose protocol headers make no sense, as poison. */
	private Step deadLetterMalformed(Delivery record, int retryCount, String problem) {
		return Step.settling(this.moves.deadLetterMalformed(record,
				new Hop(false, retryCount, null, RetryHeaders.failure(new IllegalStateException(problem), true, now())),
				problem));
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
