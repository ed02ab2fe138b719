package io.github.kafkaresilience.ladder;

/**
 * What the consumer does with a record after the {@link StageRouter} looked at it.
 *
 * @param kind what to do
 * @param dueAt for {@link Kind#WAIT_UNTIL}, the epoch millis at which to look again
 * @since 0.1.0
 */
public record Step(Kind kind, long dueAt) {

	public enum Kind {

		/** The record is finished: its offset may be committed. */
		DONE,

		/** The record is a retry not yet due: look again at {@code dueAt}. */
		WAIT_UNTIL,

		/** The record waits for another lock of its key to change: look again when it does. */
		WAIT_FOR_KEY,

		/** The record's lock is unknown: look again once the tailer has caught up. */
		WAIT_FOR_TAILER

	}

	private static final Step DONE = new Step(Kind.DONE, 0);

	private static final Step WAIT_FOR_KEY = new Step(Kind.WAIT_FOR_KEY, 0);

	private static final Step WAIT_FOR_TAILER = new Step(Kind.WAIT_FOR_TAILER, 0);

	public static Step done() {
		return DONE;
	}

	public static Step waitUntil(long dueAt) {
		return new Step(Kind.WAIT_UNTIL, dueAt);
	}

	public static Step waitForKey() {
		return WAIT_FOR_KEY;
	}

	public static Step waitForTailer() {
		return WAIT_FOR_TAILER;
	}

}
