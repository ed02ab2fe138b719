package io.github.kafkaresilience.ladder;

/**
 * Hears what one main topic's ladder does with each record, for metrics. Called on the
 * worker threads, once per record, so implementations must be cheap and thread-safe;
 * every method does nothing by default.
 * <p>
 * In {@code transaction} mode a call may describe work whose transaction is then aborted
 * and done again, so the counts are at least what happened.
 *
 * @since 0.1.0
 */
public interface LadderObserver {

	/**
	 * The handler ran on a record read from {@code stage} (0 is the main topic).
	 * @param stage the stage the record was read from
	 * @param outcome what the handler gave
	 * @param nanos how long the handler took
	 */
	default void handled(int stage, HandlerResult.Outcome outcome, long nanos) {
	}

	/**
	 * A batch listener's method was called with a batch of records that may run now.
	 * @param records how many records the batch held
	 * @param bisections how many times it was split in halves to find the failing records
	 * @param nanos how long the batch took, its splits included
	 */
	default void batchRan(int records, int bisections, long nanos) {
	}

	/** A record of a locked key was sent, without running, to stage 1 behind its key. */
	default void followerForwarded() {
	}

	/**
	 * A record was sent to the dead-letter topic.
	 * @param reason the {@code dlq.reason} it carries
	 * @param errorClass the class of the last failure (its {@code error.class} header)
	 */
	default void deadLettered(DlqReason reason, String errorClass) {
	}

	/** An observer that ignores everything. */
	LadderObserver NONE = new LadderObserver() {
	};

}
