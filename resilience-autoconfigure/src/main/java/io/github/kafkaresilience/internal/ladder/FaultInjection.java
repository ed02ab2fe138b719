package io.github.kafkaresilience.internal.ladder;

import io.github.kafkaresilience.ladder.Delivery;

/**
 * A test hook called between the steps of a move, so that a test can make a step fail or
 * stop the process exactly there. Throwing a {@link RuntimeException} makes the step fail
 * as if the broker had failed it; halting the JVM is a crash between two steps.
 * <p>
 * Applications never need one: the default does nothing. A test gives the container
 * factory an {@code OrderedRetryComponentFactory} whose {@code faultInjection()} returns
 * one, to reach the failures the protocol must survive (docs/PROTOCOL.md, rule 6); the
 * auto-configuration looks up no bean of this type.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface FaultInjection {

	/** Does nothing: the hook of every application. */
	FaultInjection NONE = (point, record) -> {
	};

	/** Where in a move the hook is called. */
	enum Point {

		/** The lock's new version is written, the record is not published yet. */
		LOCK_WRITTEN,

		/**
		 * The record is published, its lock is not confirmed yet. Throwing here is a
		 * publish that reported a failure although the broker has the record.
		 */
		PUBLISHED,

		/**
		 * A publish failed and the lock is about to be put back ({@code compensate}
		 * mode). Throwing here is a compensation that fails too.
		 */
		COMPENSATING,

		/**
		 * Every write of the record's step is in the open transaction, which is about to
		 * commit ({@code transaction} mode).
		 */
		COMMITTING

	}

	/**
	 * Called at {@code point} while the step for {@code record} runs.
	 * @param point where the move is
	 * @param record the record being moved
	 */
	void at(Point point, Delivery record);

}
