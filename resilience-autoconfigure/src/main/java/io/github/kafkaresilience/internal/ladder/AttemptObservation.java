package io.github.kafkaresilience.internal.ladder;

import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;

/**
 * Observes the attempts of one main topic's records (each run of the handler) and the
 * sends that carry a record from an attempt to its next stage or to the dead-letter
 * topic, so that a tracer puts every attempt of a record in one trace. The router calls
 * it on the worker threads; {@link #NONE} observes nothing.
 * <p>
 * A step that sends without running the handler (a follower sent to stage 1, a record
 * forwarded behind its predecessor, a move finished after a crash) has no attempt: it
 * sends through {@link Attempt#NONE}, unobserved, and the record keeps the headers it
 * arrived with.
 *
 * @since 0.1.0
 */
public interface AttemptObservation {

	/** Observes nothing: every attempt is {@link Attempt#NONE}. */
	AttemptObservation NONE = (record, stage) -> Attempt.NONE;

	/**
	 * Starts observing an attempt: the handler is about to run on {@code record} on the
	 * calling thread, and the attempt is that thread's current observation until it ends.
	 * @param record the record, as it was read
	 * @param stage the stage it was read from, 0 for the main topic
	 * @return the attempt, to end once the handler returned or threw
	 */
	Attempt start(Delivery record, int stage);

	/**
	 * Starts observing an attempt of a record that ran in a batch: as {@link #start}, and
	 * tagged with the batch it ran in, so that the attempt, in the record's own trace,
	 * and the batch's observation name each other.
	 * @param record the record, as it was read
	 * @param stage the stage it was read from, 0 for the main topic
	 * @param batch the batch the record ran in
	 * @return the attempt, to end at once with the record's outcome
	 */
	default Attempt start(Delivery record, int stage, Batch batch) {
		return start(record, stage);
	}

	/**
	 * Starts observing one call of a batch listener's method (its bisections included),
	 * the calling thread's current observation until it ends.
	 * @param records how many records the batch holds
	 * @return the batch, to end once the method returned
	 */
	default Batch startBatch(int records) {
		return Batch.NONE;
	}

	/**
	 * One call of a batch listener's method, started by {@link #startBatch}.
	 */
	interface Batch {

		/** No batch, or one that is not observed. */
		Batch NONE = new Batch() {

			@Override
			public @Nullable String id() {
				return null;
			}

			@Override
			public void ended(@Nullable Throwable failure) {
			}

		};

		/**
		 * What identifies the batch in its observation and in its records' attempts, or
		 * {@code null}.
		 */
		@Nullable String id();

		/**
		 * The call ended.
		 * @param failure what running the batch threw (not a record's failure), or
		 * {@code null}
		 */
		void ended(@Nullable Throwable failure);

	}

	/**
	 * One attempt of a record, started by {@link #start}.
	 */
	interface Attempt {

		/** No attempt, or one that is not observed: its sends are not observed either. */
		Attempt NONE = new Attempt() {

			@Override
			public void ended(HandlerResult result) {
			}

			@Override
			public void failed(Throwable ex) {
			}

		};

		/**
		 * The handler returned: the attempt ends with its outcome, and its failure if
		 * any.
		 * @param result what the handler gave
		 */
		void ended(HandlerResult result);

		/**
		 * The handler was called and returned a result that completes later: the attempt
		 * is no longer the calling thread's current observation, and is observed until
		 * {@link #ended} ends it, possibly on another thread. Called on the thread that
		 * started the attempt.
		 */
		default void called() {
		}

		/**
		 * Running the handler threw instead of giving a result: nothing of the step was
		 * done, and the record is routed again.
		 * @param ex what it threw
		 */
		void failed(Throwable ex);

		/**
		 * Sends the record this attempt ran on to its next stage or to the dead-letter
		 * topic, through {@code publisher}, as part of this attempt: an observed attempt
		 * observes the send as its child, which writes the trace context into
		 * {@code headers} (replacing the propagation headers the record arrived with)
		 * before the record is sent. Called once the attempt has ended, possibly on
		 * another thread.
		 * @return what {@link RecordPublisher#sending} returns
		 */
		default CompletableFuture<Long> sending(RecordPublisher publisher, String topic, int partition,
				byte @Nullable [] key, byte @Nullable [] value, Headers headers) {
			return publisher.sending(topic, partition, key, value, headers);
		}

	}

}
