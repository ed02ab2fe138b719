package io.github.kafkaresilience.idempotency;

/**
 * Hears what the idempotency guard of one listener and main topic decides, for metrics.
 *
 * @since 0.1.0
 */
public interface IdempotencyObserver {

	IdempotencyObserver NONE = new IdempotencyObserver() {
	};

	/** A record was skipped: its key was completed before. */
	default void skipped() {
	}

	/** A record's key was held by another attempt; the record was retried later. */
	default void held() {
	}

	/** Gives the observer of a listener's main topic. */
	@FunctionalInterface
	interface Factory {

		IdempotencyObserver observer(String listenerId, String mainTopic);

	}

}
