package io.github.kafkaresilience.internal.ladder;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockStore;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import io.github.kafkaresilience.internal.lock.Position;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.DlqReason;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.ladder.HandlerResult;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * The protocol's rules for a record (docs/PROTOCOL.md, rules 1 and 2): from the record,
 * its headers, this instance's lock table and the clock, what happens to it next. It
 * reads the lock table, and only what a rule asks, in the rule's order; it writes
 * nothing, runs no handler and waits for nothing. The {@link StageRouter} carries out
 * what it decides.
 */
final class RoutingRules {

	private final LadderPlan plan;

	private final LockStore locks;

	private final FailureClassifier classifier;

	private final Clock clock;

	private final Supplier<String> lockIds;

	/** The share of a stage's delay by which due times are spread: 0 for none. */
	private final double jitter;

	/** Rules without jitter. */
	RoutingRules(LadderPlan plan, LockStore locks, FailureClassifier classifier, Clock clock,
			Supplier<String> lockIds) {
		this(plan, locks, classifier, clock, lockIds, 0);
	}

	/**
	 * @param locks the lock table, only read here
	 * @param lockIds the ids of new locks
	 * @param jitter the share of a stage's delay by which due times are spread, between 0
	 * (none) and 1
	 */
	RoutingRules(LadderPlan plan, LockStore locks, FailureClassifier classifier, Clock clock, Supplier<String> lockIds,
			double jitter) {
		this.plan = plan;
		this.locks = locks;
		this.classifier = classifier;
		this.clock = clock;
		this.lockIds = lockIds;
		this.jitter = jitter;
	}

	/** A record of the main topic (docs/PROTOCOL.md, rule 1). */
	Decision fromMain(Delivery record) {
		Bytes key = record.businessKey();
		if (key != null) {
			Lock earlier = this.locks.byOrigin(key, record.offset());
			if (earlier != null) {
				// an earlier delivery of this record got this far; its first move is this
				// record's to finish, any later one belongs to a record in a retry stage
				if (earlier.isMoving() && new Position(0, record.offset()).equals(earlier.from())) {
					return new Decision.CompleteMove(earlier, true);
				}
				return Decision.DONE;
			}
			if (!this.locks.locksOf(key).isEmpty()) {
				return new Decision.Follow(Lock.moving(this.lockIds.get(), key, record.partition(), record.offset(), 1,
						new Position(0, record.offset()), 0, null, now()));
			}
		}
		return new Decision.Run(0, 0, null);
	}

	/**
	 * A record of {@code stage}, which the caller found to be owned by this group
	 * (docs/PROTOCOL.md, rule 2).
	 */
	Decision fromStage(Delivery record, int stage, boolean tailerSynced) {
		Integer retryCount = ProtocolHeaders.retryCount(record.headers());
		String lockId = ProtocolHeaders.text(record.headers(), ProtocolHeaders.LOCK_ID);
		Bytes key = record.businessKey();
		// a dead letter sent back by a replay: it gets a lock named after where it
		// entered
		boolean entry = stage == 1 && key != null && ProtocolHeaders.isReplayEntry(record.headers());
		if (entry) {
			lockId = replayLockId(record);
		}
		if (retryCount == null || (key != null && lockId == null) || (key == null && lockId != null)) {
			return malformed((retryCount != null) ? retryCount : 0,
					"missing or unreadable protocol headers (retry.count="
							+ ProtocolHeaders.text(record.headers(), ProtocolHeaders.RETRY_COUNT) + ", lock.id="
							+ lockId + ")");
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
			return malformed(retryCount, "a lock.id that names lock " + lockId + " of another key");
		}
		if (lock.isPending()) {
			return Decision.WAIT_FOR_KEY; // until the owner of its main-topic partition
											// admits it
		}
		Position here = new Position(stage, record.offset());
		if (lock.isMoving()) {
			if (here.equals(lock.from())) {
				return new Decision.CompleteMove(lock, false);
			}
			// only a copy the unfinished move may have published can become the carrier:
			// one
			// in the target stage and, when the move re-appends to its own stage, after
			// the source
			Position from = Objects.requireNonNull(lock.from()); // moving
			boolean mayCarry = stage == lock.stage() && (from.stage() != stage || here.isAfter(from));
			return mayCarry ? Decision.WAIT_FOR_KEY : skipStale(tailerSynced);
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
			return new Decision.Move(lock, lock.moveTo(ahead.stage(), here, retryCount, null, now()));
		}
		return Decision.WAIT_FOR_KEY;
	}

	/**
	 * What follows the handler's run on a record (docs/PROTOCOL.md, rules 1.3 and 2.5):
	 * success releases its lock; failure moves it to the next stage (the last stage
	 * repeats) or, when it is permanent, the record poison or the attempts exhausted, to
	 * the dead-letter topic. A main-topic record of a key that fails gets its first lock
	 * here.
	 */
	Decision afterRun(Delivery record, Decision.Run run, HandlerResult result) {
		Lock lock = run.lock();
		if (result.outcome() == HandlerResult.Outcome.SUCCESS) {
			return (lock != null) ? new Decision.Release(lock) : Decision.DONE;
		}
		boolean fromMain = run.stage() == 0;
		String lockId = (lock != null) ? lock.id() : null;
		// a result that is not a success has its throwable
		Throwable ex = Objects.requireNonNull(result.failure());
		if (result.outcome() == HandlerResult.Outcome.POISON) {
			FailureInfo poison = ProtocolHeaders.failure(ex, true, now());
			return new Decision.DeadLetter(new Hop(fromMain, run.retryCount(), lockId, poison), DlqReason.POISON, lock);
		}
		// a count read from a retry topic can be as large as an int goes; it must not
		// wrap around
		int attempts = (run.retryCount() < Integer.MAX_VALUE) ? run.retryCount() + 1 : run.retryCount();
		boolean permanent = this.classifier.isPermanent(ex);
		FailureInfo failure = ProtocolHeaders.failure(ex, permanent, now());
		if (permanent || attempts >= this.plan.maxAttempts()) {
			return new Decision.DeadLetter(new Hop(fromMain, attempts, lockId, failure),
					permanent ? DlqReason.PERMANENT : DlqReason.EXHAUSTED, lock);
		}
		int next = nextStage(run.stage());
		Position here = new Position(run.stage(), record.offset());
		if (lock != null) {
			return new Decision.Move(lock, lock.moveTo(next, here, attempts, failure, now()));
		}
		Bytes key = record.businessKey();
		if (key != null) {
			// only a main-topic record has a key and no lock
			return new Decision.MoveNew(Lock.moving(this.lockIds.get(), key, record.partition(), record.offset(), next,
					here, attempts, failure, now()));
		}
		return new Decision.Publish(new Hop(fromMain, attempts, null, failure), next);
	}

	/**
	 * The earliest time a record may run, from the record alone: its due time when it is
	 * a retry read from a stage, 0 for any other (a record of the main topic, a follower,
	 * or one whose protocol headers are unreadable and go to the dead-letter topic at
	 * once).
	 */
	long earliestRun(Delivery record) {
		int stage = this.plan.stageOf(record.topic());
		Integer retryCount = (stage > 0) ? ProtocolHeaders.retryCount(record.headers()) : null;
		if (retryCount == null || retryCount == 0) {
			return 0;
		}
		return dueAt(record, stage);
	}

	/**
	 * When a retry read from a stage comes due: its stage's delay after it was written,
	 * plus, with jitter, a share of the delay drawn from the record's place in its topic.
	 * The draw is the same on every instance and every delivery of the record, so a
	 * record comes due at one time wherever it is read, parked or read again.
	 */
	long dueAt(Delivery record, int stage) {
		long delay = this.plan.stage(stage).delay().toMillis();
		long due = record.timestamp() + delay;
		if (this.jitter == 0) {
			return due;
		}
		long mixed = (record.topic().hashCode() * 0x9E3779B97F4A7C15L) ^ (record.partition() * 0xC2B2AE3D27D4EB4FL)
				^ (record.offset() * 0x165667B19E3779F9L);
		mixed ^= mixed >>> 33;
		mixed *= 0xFF51AFD7ED558CCDL;
		mixed ^= mixed >>> 33;
		double draw = (mixed >>> 11) * 0x1.0p-53;
		return due + (long) (delay * this.jitter * draw);
	}

	/** The lock id of a replay entry: the same for every delivery of the record. */
	static String replayLockId(Delivery record) {
		return UUID
			.nameUUIDFromBytes((record.topic() + "/" + record.partition() + "/" + record.offset())
				.getBytes(StandardCharsets.UTF_8))
			.toString();
	}

	/**
	 * Runs the head of a key (or a record without a key) once it is due: a retry waits
	 * for its stage's delay after it was written; a follower ({@code retry.count=0}) runs
	 * at once. An operator's command on the head's lock at this record runs it now, or
	 * dead-letters it.
	 */
	private Decision runWhenDue(Delivery record, int stage, int retryCount, @Nullable Lock lock) {
		OperatorCommand command = (lock != null) ? this.locks.commandFor(lock) : null;
		if (lock != null && command != null) {
			// an operator's command on this head (docs/PROTOCOL.md, rule 11): it holds
			// only while
			// the lock is confirmed at this record, which the table just said it is
			if (command.action() == OperatorCommand.Action.DEAD_LETTER_NOW) {
				// no new failure: the record keeps the error headers of its last one, if
				// it ran
				return new Decision.DeadLetter(
						new Hop(false, retryCount, lock.id(), ProtocolHeaders.failure(record.headers())),
						DlqReason.OPERATOR, lock, command);
			}
			return new Decision.Run(stage, retryCount, lock, command);
		}
		if (retryCount > 0) {
			long dueAt = dueAt(record, stage);
			if (this.clock.millis() < dueAt) {
				return new Decision.Settled(Step.waitUntil(dueAt));
			}
		}
		return new Decision.Run(stage, retryCount, lock);
	}

	/**
	 * Takes a replayed dead letter into its key's order (docs/PROTOCOL.md, rule 2.0): it
	 * gets a lock, pending until the instance that owns its main-topic partition admits
	 * it behind every record of its key taken from there so far; until then it waits. Its
	 * lock id comes from where it entered, so a redelivery finds the lock an earlier
	 * delivery wrote. Once the lock is released it is forgotten: a redelivery after that
	 * enters again, which runs the record again, as any redelivery may.
	 */
	private Decision enter(Delivery record, String lockId, boolean tailerSynced) {
		if (!tailerSynced) {
			return Decision.WAIT_FOR_TAILER; // an earlier delivery may have written the
												// lock already
		}
		return new Decision.Enter(
				// a record with a lock id has a key, or it is malformed
				Lock.pendingReplay(lockId, Objects.requireNonNull(record.businessKey()), record.partition(),
						record.offset(), now()));
	}

	/**
	 * A retry-topic record whose protocol headers make no sense goes to the dead-letter
	 * topic as poison.
	 */
	private Decision malformed(int retryCount, String problem) {
		return new Decision.Malformed(new Hop(false, retryCount, null,
				ProtocolHeaders.failure(new IllegalStateException(problem), true, now())), problem);
	}

	/**
	 * A record judged a stale copy is skipped only on a view of the locks that is
	 * current: another instance may have moved the lock to this very record after this
	 * table last heard of it.
	 */
	private static Decision skipStale(boolean tailerSynced) {
		return tailerSynced ? Decision.DONE : Decision.WAIT_FOR_TAILER;
	}

	private int nextStage(int stage) {
		return Math.min(stage + 1, this.plan.lastStage());
	}

	private Instant now() {
		return this.clock.instant();
	}

}
