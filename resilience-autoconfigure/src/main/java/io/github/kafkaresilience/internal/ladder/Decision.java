package io.github.kafkaresilience.internal.ladder;

import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import io.github.kafkaresilience.ladder.DlqReason;
import org.jspecify.annotations.Nullable;

/**
 * What the {@link RoutingRules} decided for a record: a step with nothing to write, the
 * handler to run, or the writes to make. The {@link StageRouter} carries it out.
 */
sealed interface Decision {

	/** The record is finished: its offset may be committed. */
	Decision DONE = new Settled(Step.done());

	/** The record waits for another lock of its key to change. */
	Decision WAIT_FOR_KEY = new Settled(Step.waitForKey());

	/** The record waits for the lock tailer to catch up. */
	Decision WAIT_FOR_TAILER = new Settled(Step.waitForTailer());

	/** Nothing to write: the record is done, or waits. */
	record Settled(Step step) implements Decision {
	}

	/**
	 * Run the handler on the record, then ask {@link RoutingRules#afterRun}.
	 *
	 * @param stage the stage the record was read from, 0 for the main topic
	 * @param retryCount the attempts that failed so far
	 * @param lock the lock the record carries, {@code null} on the main topic and for a
	 * record without a key
	 * @param command the operator's {@code retry-now} that lets it run before its due
	 * time, to end once the run's step is done; {@code null} for any other run
	 */
	record Run(int stage, int retryCount, @Nullable Lock lock, @Nullable OperatorCommand command) implements Decision {

		/** A run that no operator command asked for. */
		Run(int stage, int retryCount, @Nullable Lock lock) {
			this(stage, retryCount, lock, null);
		}

	}

	/**
	 * Follow a locked key: create {@code moving}, a lock with no attempt, and move it to
	 * stage 1 (docs/PROTOCOL.md, rule 1.2).
	 */
	record Follow(Lock moving) implements Decision {
	}

	/**
	 * Create {@code moving}, the lock of a main-topic record that failed, and move it to
	 * stage 1 (docs/PROTOCOL.md, rule 1.3).
	 */
	record MoveNew(Lock moving) implements Decision {
	}

	/**
	 * Move a lock already in the ladder: forward behind its predecessor, or on after a
	 * failure.
	 *
	 * @param lock the lock as it is, what a failed publish puts back
	 * @param moving the lock on its way to its new stage
	 */
	record Move(Lock lock, Lock moving) implements Decision {
	}

	/**
	 * Finish the move that an earlier delivery of this record started (docs/PROTOCOL.md,
	 * rules 1.1 and 2.3).
	 */
	record CompleteMove(Lock moving, boolean fromMain) implements Decision {
	}

	/** Move a record without a key, which has no lock, to {@code toStage}. */
	record Publish(Hop hop, int toStage) implements Decision {
	}

	/**
	 * Dead-letter the record, then release {@code release}, the lock it carries, if any,
	 * then end {@code command}, the operator's {@code dead-letter-now} that asked for it,
	 * if any.
	 */
	record DeadLetter(Hop hop, DlqReason reason, @Nullable Lock release,
			@Nullable OperatorCommand command) implements Decision {

		/** A dead letter that no operator command asked for. */
		DeadLetter(Hop hop, DlqReason reason, @Nullable Lock release) {
			this(hop, reason, release, null);
		}

	}

	/**
	 * Dead-letter, as poison, a stage record whose protocol headers make no sense:
	 * {@code problem}.
	 */
	record Malformed(Hop hop, String problem) implements Decision {
	}

	/** Release the lock of a head that succeeded. */
	record Release(Lock lock) implements Decision {
	}

	/**
	 * Write {@code pending}, the lock of a replayed dead letter, then wait for its
	 * admission (docs/PROTOCOL.md, rule 2.0).
	 */
	record Enter(Lock pending) implements Decision {
	}

}
