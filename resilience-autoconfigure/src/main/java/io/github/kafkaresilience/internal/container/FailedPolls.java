package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.function.BooleanSupplier;

import io.github.kafkaresilience.internal.support.Backoff;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * How the poll loop rides out failed polls. A lasting failure (a missing ACL, rejected
 * credentials) fails every poll at once: the loop pauses after each failure, longer after
 * each further one in a row, or it would spin and flood the log. Poll thread only.
 */
final class FailedPolls {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(FailedPolls.class);

	/** The first pause of the poll loop after a failed poll. */
	static final Duration FIRST_POLL_BACKOFF = Duration.ofMillis(100);

	/** The longest pause of the poll loop after polls that failed in a row. */
	static final Duration MAX_POLL_BACKOFF = Duration.ofSeconds(5);

	private final String id;

	private final Backpressure backpressure;

	/** Polls that failed in a row. */
	private int inARow;

	FailedPolls(String id, Backpressure backpressure) {
		this.id = id;
		this.backpressure = backpressure;
	}

	/** A poll succeeded: the next failure pauses the loop briefly again. */
	void reset() {
		this.inARow = 0;
	}

	/**
	 * A poll failed: logs it and pauses the loop, until the pause is over or the
	 * container stops ({@link Backpressure#wakeAll()}).
	 * @param ex what the poll threw
	 * @param running whether the container is running still
	 * @return the pause, in milliseconds
	 */
	long pauseAfter(RuntimeException ex, BooleanSupplier running) {
		long pause = Backoff.after(++this.inARow, FIRST_POLL_BACKOFF, MAX_POLL_BACKOFF).toMillis();
		logger.error("Listener '" + this.id + "' failed to poll; polling again in " + pause + " ms", ex);
		this.backpressure.pauseAfterFailure(pause, running);
		return pause;
	}

}
