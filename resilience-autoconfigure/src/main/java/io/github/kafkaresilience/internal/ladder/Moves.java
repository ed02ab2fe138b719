package io.github.kafkaresilience.internal.ladder;

import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.ladder.AttemptObservation.Attempt;
import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockStore;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.internal.support.Futures;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.DlqReason;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.ladder.LadderObserver;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.common.KafkaException;
import org.jspecify.annotations.Nullable;

/**
 * The writes that carry out a record's step, each started from the completion of the one
 * before and returned as a future: a move (write the lock as moving, publish the record,
 * confirm the lock at the offset the broker gave it), a dead letter, a release. When a
 * write fails, {@code compensate} mode undoes the lock write before failing; in
 * {@code transaction} mode the caller aborts the transaction instead. A record a retry
 * topic refuses as too large is dead-lettered instead of moved ({@link Refusal}).
 * <p>
 * The publishes of a step that follows a run of the handler go through its
 * {@link Attempt}, which observes them as part of it; the other steps pass
 * {@link Attempt#NONE}.
 */
final class Moves {

	// operators know these messages by the router's category (docs/OPERATIONS.md)
	private static final Log logger = LogFactory.getLog(Moves.class);

	/**
	 * At most this many refusals are remembered: a record whose partition was revoked
	 * never comes back.
	 */
	private static final int MAX_REFUSALS = 1000;

	private final LadderPlan plan;

	private final LockStore locks;

	private final RecordPublisher publisher;

	private final Clock clock;

	private final DualWrite dualWrite;

	private final FaultInjection faults;

	private final Ownership ownership;

	private final Object monitor;

	private final LadderObserver observer;

	/**
	 * In {@link DualWrite#TRANSACTION} mode, the records whose move a topic refused as
	 * too large, by {@link Delivery#toString() position}: the failed send dooms the
	 * transaction, so the record is dead-lettered in the next one, when it is routed
	 * again.
	 */
	private final Map<String, Refusal> refusals = new ConcurrentHashMap<>();

	/**
	 * @param observer hears of each dead letter, for metrics
	 * @param monitor what a confirmation holds while it checks the lock and starts its
	 * write: the router, so that the confirmations of one router take turns
	 */
	Moves(LadderPlan plan, LockStore locks, RecordPublisher publisher, Clock clock, DualWrite dualWrite,
			FaultInjection faults, Ownership ownership, LadderObserver observer, Object monitor) {
		this.plan = plan;
		this.locks = locks;
		this.publisher = publisher;
		this.clock = clock;
		this.dualWrite = dualWrite;
		this.faults = faults;
		this.ownership = ownership;
		this.observer = observer;
		this.monitor = monitor;
	}

	/**
	 * Moves a lock created for a main-topic record to its stage. If the publish fails,
	 * the new lock is released again (nothing else refers to it yet) and the record is
	 * redelivered. When the lock write itself reports a failure it may still have landed:
	 * it is released too, or the redelivery would create a second lock and leave this one
	 * moving forever.
	 * @param attempt the attempt that failed, or {@link Attempt#NONE} for a follower
	 */
	CompletableFuture<Void> moveNewLock(Lock moving, Delivery record, Attempt attempt) {
		return undoOnFailure(Futures.call(() -> this.locks.writing(moving)), () -> this.locks.releasing(moving), moving,
				record)
			.thenCompose(
					(ignored) -> publishThenConfirm(moving, record, true, () -> this.locks.releasing(moving), attempt));
	}

	/**
	 * Moves a lock already in the ladder. If the publish fails the lock goes back to its
	 * confirmed position (releasing it would let its key's later records overtake it) and
	 * the record is redelivered.
	 * @param lock the lock as it is
	 * @param moving the lock on its way, moving {@code record}
	 * @param attempt the attempt that failed, or {@link Attempt#NONE} for a forward
	 */
	CompletableFuture<Void> move(Lock lock, Lock moving, Delivery record, Attempt attempt) {
		return Futures.call(() -> this.locks.writing(moving))
			.thenCompose(
					(ignored) -> publishThenConfirm(moving, record, false, () -> this.locks.writing(lock), attempt));
	}

	/**
	 * Finishes a move that an earlier delivery of this record started (docs/PROTOCOL.md,
	 * rules 1.1 and 2.3).
	 */
	CompletableFuture<Void> completeMove(Lock moving, Delivery record, boolean fromMain) {
		Hop hop = Hop.of(moving, fromMain);
		CompletableFuture<Long> published = Futures.call(() -> publish(record, hop, moving.stage(), Attempt.NONE));
		return published.handle((offset, ex) -> {
			if (ex == null) {
				this.faults.at(FaultInjection.Point.PUBLISHED, record);
				return confirm(moving, offset);
			}
			return publishFailed(ex, record, hop, moving.stage(), Attempt.NONE, CompletableFuture::failedFuture);
		}).thenCompose(Function.identity());
	}

	/**
	 * Publishes a record without a key, which moves without a lock, to {@code toStage}.
	 * @param attempt the attempt that failed
	 */
	CompletableFuture<Void> publishWithoutLock(Delivery record, Hop hop, int toStage, Attempt attempt) {
		CompletableFuture<Long> published = Futures.call(() -> publish(record, hop, toStage, attempt));
		return published
			.handle((offset, ex) -> (ex == null) ? Futures.done()
					: publishFailed(ex, record, hop, toStage, attempt, CompletableFuture::failedFuture))
			.thenCompose(Function.identity());
	}

	/**
	 * Publishes a dead letter. When the dead-letter topic refuses it as too large, the
	 * future fails with an {@link UnpublishableRecordException}: the record can go
	 * nowhere.
	 * @param attempt the attempt that failed, or {@link Attempt#NONE} for a record
	 * dead-lettered without running
	 */
	CompletableFuture<Void> deadLetter(Delivery record, Hop hop, DlqReason reason, Attempt attempt) {
		// only an operator's dead letter may have no failure to tell: a follower that
		// never ran
		FailureInfo failure = hop.failure();
		if (failure == null && reason != DlqReason.OPERATOR) {
			throw new NullPointerException("a dead letter tells its failure");
		}
		String errorClass = (failure != null) ? failure.errorClass() : "none";
		CompletableFuture<Long> published = Futures.call(() -> attempt.sending(this.publisher, this.plan.dlqTopic(),
				record.partition(), record.key(), record.value(), hop.headers(record, reason, this.ownership)));
		return published.handle((offset, ex) -> {
			if (ex == null) {
				this.observer.deadLettered(reason, errorClass);
				return Futures.done();
			}
			Throwable cause = Futures.cause(ex);
			Throwable tooLarge = Refusal.tooLarge(cause);
			if (tooLarge == null) {
				return CompletableFuture.<Void>failedFuture(cause);
			}
			return CompletableFuture
				.<Void>failedFuture(new Refusal(this.plan.dlqTopic(), tooLarge, hop).unpublishable(record, cause));
		}).thenCompose(Function.identity());
	}

	/**
	 * Dead-letters a retry-topic record whose protocol headers make no sense, as poison.
	 */
	CompletableFuture<Void> deadLetterMalformed(Delivery record, Hop hop, String problem) {
		logger.warn("Record " + record + " has " + problem + "; sending it to '" + this.plan.dlqTopic() + "'");
		return deadLetter(record, hop, DlqReason.POISON, Attempt.NONE);
	}

	CompletableFuture<Void> release(@Nullable Lock lock) {
		return (lock != null) ? Futures.call(() -> this.locks.releasing(lock)) : Futures.done();
	}

	/**
	 * Ends an operator command that was acted on (docs/PROTOCOL.md, rule 11) once the
	 * step it asked for is done. Its tombstone is housekeeping: the lock has moved on or
	 * is released, so the command is void wherever it is read, and a failed tombstone is
	 * left to the reaper's pass rather than make the record's step fail.
	 */
	CompletableFuture<Void> finish(OperatorCommand command) {
		logger.info("Acted on operator command " + command.id() + " (" + command.action().value() + " by '"
				+ command.by() + "') on lock " + command.lockId() + " at " + command.position() + " of '"
				+ this.plan.mainTopic() + "'");
		return this.locks.finishing(command).exceptionally((ex) -> {
			logger.warn(
					"Could not end operator command " + command.id() + "; it is void, and the reaper's pass ends it",
					ex);
			return null;
		});
	}

	/** Writes the pending lock of a replayed dead letter; durable on return. */
	void writePending(Lock pending) {
		this.locks.write(pending);
	}

	/**
	 * Whether a publish of the record was refused, so that its next route dead-letters
	 * it.
	 */
	boolean wasRefused(Delivery record) {
		return !this.refusals.isEmpty() && this.refusals.containsKey(record.toString());
	}

	/**
	 * In {@code transaction} mode, dead-letters a record whose move a topic refused in an
	 * earlier, aborted, transaction; {@code null} when it has no such refusal.
	 */
	@Nullable CompletableFuture<Void> deadLetterIfRefused(Delivery record) {
		Refusal refusal = this.refusals.isEmpty() ? null : this.refusals.remove(record.toString());
		if (refusal == null) {
			return null;
		}
		return deadLetterRefused(record, refusal, Attempt.NONE).whenComplete((ignored, ex) -> {
			if (ex != null && !(Futures.cause(ex) instanceof UnpublishableRecordException)) {
				this.refusals.put(record.toString(), refusal);
			}
		});
	}

	/**
	 * The second half of a move whose lock is written: publishes the record to the lock's
	 * stage, then confirms the lock there. A publish refused as too large dead-letters
	 * the record instead; any other failed publish undoes the lock write and fails the
	 * move.
	 */
	private CompletableFuture<Void> publishThenConfirm(Lock moving, Delivery record, boolean fromMain,
			Supplier<CompletableFuture<Void>> undo, Attempt attempt) {
		Hop hop = Hop.of(moving, fromMain);
		CompletableFuture<Long> published = Futures.call(() -> {
			this.faults.at(FaultInjection.Point.LOCK_WRITTEN, record);
			return publish(record, hop, moving.stage(), attempt);
		}).thenApply((offset) -> {
			this.faults.at(FaultInjection.Point.PUBLISHED, record);
			return offset;
		});
		return published.handle((offset, ex) -> {
			if (ex == null) {
				return confirm(moving, offset);
			}
			return publishFailed(ex, record, hop, moving.stage(), attempt,
					(cause) -> undoThenFail(undo, moving, record, cause));
		}).thenCompose(Function.identity());
	}

	/**
	 * After the publish of a record's move to {@code toStage} failed: a record a topic
	 * refused as too large is dead-lettered instead ({@link #refused}); any other failure
	 * goes to {@code otherwise}.
	 */
	private CompletableFuture<Void> publishFailed(Throwable ex, Delivery record, Hop hop, int toStage, Attempt attempt,
			Function<Throwable, CompletableFuture<Void>> otherwise) {
		Throwable cause = Futures.cause(ex);
		if (cause instanceof RuntimeException failed) {
			Throwable tooLarge = Refusal.tooLarge(failed);
			if (tooLarge != null) {
				return refused(record, new Refusal(this.plan.topicOf(toStage), tooLarge, hop), failed, attempt);
			}
		}
		return otherwise.apply(cause);
	}

	/**
	 * A retry topic (or the producer) refused a record as too large: it cannot be
	 * retried, so it is dead-lettered as a permanent failure and its lock, if any,
	 * released. The key's later records keep waiting behind every earlier record still in
	 * the ladder, so none overtakes a record that will still be handled; the refused
	 * record itself is finished. In a transaction the failed send dooms the transaction:
	 * the record is dead-lettered in the next one, when it is routed again.
	 */
	private CompletableFuture<Void> refused(Delivery record, Refusal refusal, RuntimeException ex, Attempt attempt) {
		if (this.dualWrite == DualWrite.TRANSACTION) {
			if (this.refusals.size() >= MAX_REFUSALS) {
				this.refusals.clear();
			}
			this.refusals.put(record.toString(), refusal);
			return CompletableFuture.failedFuture(new KafkaException("'" + refusal.topic() + "' refused " + record
					+ " as too large; the transaction is aborted and the record is sent to '" + this.plan.dlqTopic()
					+ "' when it is routed again", ex));
		}
		return deadLetterRefused(record, refusal, attempt);
	}

	/**
	 * Dead-letters a record a topic refused as too large, with the refusal as its
	 * failure, and releases the lock it carries or was to carry. The lock goes last:
	 * after a crash before it, the redelivered record finds its move unfinished and comes
	 * here again.
	 */
	private CompletableFuture<Void> deadLetterRefused(Delivery record, Refusal refusal, Attempt attempt) {
		String message = refusal.deadLettered(record, this.plan.dlqTopic());
		logger.warn(message);
		String lockId = refusal.hop().lockId();
		Hop hop = refusal.hop().failedWith(refusal.failure(message, now()));
		return deadLetter(record, hop, DlqReason.PERMANENT, attempt)
			.thenCompose((ignored) -> release((lockId != null) ? this.locks.find(lockId) : null));
	}

	/**
	 * Confirms a move, unless the lock changed meanwhile: another delivery of the same
	 * source record may have completed the move, and the lock may even be released
	 * already; a late confirmation must not bring it back.
	 */
	private CompletableFuture<Void> confirm(Lock moving, long offset) {
		synchronized (this.monitor) {
			Lock current = this.locks.find(moving.id());
			if (current == null || !current.isMoving() || current.stage() != moving.stage()
					|| !Objects.equals(current.from(), moving.from())) {
				logger.debug("Not confirming " + moving + " at " + offset + ": the lock is now " + current);
				return Futures.done();
			}
			return Futures.call(() -> this.locks.writing(moving.confirmedAt(offset, now())));
		}
	}

	/**
	 * When {@code write} fails, undoes it ({@code compensate} mode) and fails with the
	 * write's failure; in {@code transaction} mode the caller aborts the transaction
	 * instead.
	 */
	private CompletableFuture<Void> undoOnFailure(CompletableFuture<Void> write, Supplier<CompletableFuture<Void>> undo,
			Lock moving, Delivery record) {
		return write.handle(
				(ignored, ex) -> (ex == null) ? Futures.done() : undoThenFail(undo, moving, record, Futures.cause(ex)))
			.thenCompose(Function.identity());
	}

	/**
	 * Undoes a lock write after a failed step and fails with the step's failure. A failed
	 * undo leaves the lock in flight; the record's redelivery completes the move. An
	 * {@link Error} is not undone: it fails at once.
	 */
	private CompletableFuture<Void> undoThenFail(Supplier<CompletableFuture<Void>> undo, Lock moving, Delivery record,
			Throwable cause) {
		if (this.dualWrite == DualWrite.TRANSACTION || !(cause instanceof RuntimeException)) {
			return CompletableFuture.failedFuture(cause); // the caller aborts the
															// transaction, and the lock
															// write with it
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

	private CompletableFuture<Long> publish(Delivery record, Hop hop, int toStage, Attempt attempt) {
		String topic = this.plan.stage(toStage).topic();
		return attempt.sending(this.publisher, topic, record.partition(), record.key(), record.value(),
				hop.headers(record, null, this.ownership));
	}

	private Instant now() {
		return this.clock.instant();
	}

}
