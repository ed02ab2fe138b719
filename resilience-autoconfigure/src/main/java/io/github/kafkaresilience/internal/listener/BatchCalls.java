package io.github.kafkaresilience.internal.listener;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.AttemptTimeoutException;
import io.github.kafkaresilience.PermanentFailureException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.kafka.support.KafkaUtils;
import org.springframework.messaging.Message;

/**
 * One call of a batch listener's method on records of a batch, and how it ended: the
 * method returned (or its result completed normally); it named a failed record with a
 * {@link BatchListenerFailedException}, thrown or as its result's failure; it failed as a
 * whole; or the records could not be converted and it did not run.
 * {@link BatchHandlerInvoker} makes the calls and gives the records their outcomes.
 */
final class BatchCalls {

	private static final Log logger = LogFactory.getLog(BatchCalls.class);

	private final BatchMethodAdapter method;

	private final String description;

	private final String groupId;

	/** How long a result that completes later is waited for. */
	private final Duration attemptTimeout;

	BatchCalls(BatchMethodAdapter method, String description, String groupId, Duration attemptTimeout) {
		this.method = method;
		this.description = description;
		this.groupId = groupId;
		this.attemptTimeout = attemptTimeout;
	}

	/**
	 * Whether the method takes the records as {@code ConsumerRecords}, which orders them
	 * by partition.
	 */
	boolean isConsumerRecords() {
		return this.method.isConsumerRecords();
	}

	/**
	 * Calls the method once on records of a batch, on this thread.
	 * @param batch the records, in batch order
	 * @return how the call ended
	 */
	Call now(List<ConsumerRecord<Object, Object>> batch) {
		Invocation invocation = invoke(batch);
		return (invocation.ended != null) ? invocation.ended : Call.SUCCEEDED;
	}

	/**
	 * Calls a method whose result completes later once on records of a batch, on this
	 * thread.
	 * @param batch the records, in batch order
	 * @return completes, never exceptionally, with how the result completed; a result not
	 * complete within the attempt timeout is cancelled and fails every record of the call
	 */
	CompletableFuture<Call> later(List<ConsumerRecord<Object, Object>> batch) {
		Invocation invocation = invoke(batch);
		if (invocation.ended != null) {
			return CompletableFuture.completedFuture(invocation.ended);
		}
		Duration timeout = this.attemptTimeout;
		return AsyncResults
			.outcome(AsyncResults.toFuture(invocation.returned, this.description), timeout,
					(value, failure) -> (failure != null) ? failedCall(failure, invocation.prepared, failure)
							: Call.SUCCEEDED,
					() -> Call
						.unsplittable(new AttemptTimeoutException(
								"The result of listener method " + this.description + " for a batch of " + batch.size()
										+ " records did not complete within the attempt timeout of " + timeout,
								timeout)));
	}

	/**
	 * Invokes the method on records of a batch, with the group on the thread (the
	 * converter and the method read it from there, as on a listener container's thread).
	 */
	private Invocation invoke(List<ConsumerRecord<Object, Object>> batch) {
		KafkaUtils.setConsumerGroupId(this.groupId);
		try {
			Prepared prepared = prepare(batch);
			if (prepared.refused != null) {
				return new Invocation(prepared, prepared.refused, null);
			}
			try {
				return new Invocation(prepared, null, this.method.invoke(prepared.data, prepared.message));
			}
			catch (ListenerExecutionFailedException ex) {
				return new Invocation(prepared, failedCall(ex, prepared, HandlerInvoker.failure(ex, this.description)),
						null);
			}
			catch (Error ex) {
				// an error the method threw fails the call, as an exception does
				return new Invocation(prepared, Call.failed(ex), null);
			}
		}
		finally {
			KafkaUtils.clearConsumerGroupId();
		}
	}

	/**
	 * A call of the method.
	 *
	 * @param prepared the records, as the method got them
	 * @param ended how the call ended, when it did before a result: the records could not
	 * be converted, or the method threw
	 * @param returned what the method returned, otherwise
	 */
	private record Invocation(Prepared prepared, @Nullable Call ended, @Nullable Object returned) {
	}

	/**
	 * The records of a call, as the method gets them, or why the method cannot get them.
	 */
	private Prepared prepare(List<ConsumerRecord<Object, Object>> batch) {
		BatchMethodAdapter.Data data = this.method.data(batch);
		Message<?> message;
		try {
			message = this.method.toMessage(data.order());
		}
		catch (RuntimeException ex) {
			return Prepared.refused(Call.unconvertible(ex));
		}
		Map<Integer, Throwable> unconverted = BatchMethodAdapter.conversionFailures(message);
		if (!unconverted.isEmpty()) {
			// the converter left the payloads of records it could not read empty: they
			// are poison
			Map.Entry<Integer, Throwable> first = unconverted.entrySet().iterator().next();
			return Prepared.refused((batch.size() == 1) ? Call.unconvertible(first.getValue())
					: Call.unconvertible(new PoisonInBatch()));
		}
		return new Prepared(batch, data, message, null);
	}

	/**
	 * A call that failed: at the record the method named, when it named one of its batch,
	 * else as a whole with {@code failure}.
	 */
	private Call failedCall(Throwable thrown, Prepared prepared, Throwable failure) {
		BatchListenerFailedException named = named(thrown);
		if (named != null) {
			int index = indexOf(named, prepared.data.order());
			if (index >= 0) {
				ConsumerRecord<Object, Object> failed = prepared.data.order().get(index);
				return Call.stoppedAt(prepared.batch.indexOf(failed), causeOf(named));
			}
			logger.warn("Listener method " + this.description + " named a failed record " + "that is not in its batch ("
					+ named.getMessage() + "); the batch failed as a whole");
		}
		return Call.failed(failure);
	}

	/**
	 * The exception the method named a failed record with, in the cause chain of its
	 * failure.
	 */
	private static @Nullable BatchListenerFailedException named(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof BatchListenerFailedException named) {
				return named;
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return null;
	}

	/**
	 * The index, in the order the method got them, of the record the method named; -1 if
	 * none.
	 */
	private static int indexOf(BatchListenerFailedException named, List<ConsumerRecord<Object, Object>> order) {
		ConsumerRecord<?, ?> record = named.getRecord();
		if (record == null) {
			int index = named.getIndex();
			return (index >= 0 && index < order.size()) ? index : -1;
		}
		for (int i = 0; i < order.size(); i++) {
			ConsumerRecord<Object, Object> candidate = order.get(i);
			if (candidate == record || (candidate.topic().equals(record.topic())
					&& candidate.partition() == record.partition() && candidate.offset() == record.offset())) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * What a named record failed with: the exception's cause, or the exception without
	 * one.
	 */
	private static Throwable causeOf(BatchListenerFailedException named) {
		Throwable cause = named.getCause();
		return (cause != null) ? cause : named;
	}

	/**
	 * How one call of the method ended.
	 *
	 * @param stoppedAt the index (in the part called) of the record the method named as
	 * failed, or -1
	 * @param failure what the call or the named record failed with, {@code null} on
	 * success
	 * @param unconvertible whether the records could not be converted, and the method did
	 * not run
	 * @param unsplittable whether every record of the call failed with {@code failure},
	 * which splitting cannot tell apart (the idempotency store failed)
	 */
	record Call(int stoppedAt, @Nullable Throwable failure, boolean unconvertible, boolean unsplittable) {

		static final Call SUCCEEDED = new Call(-1, null, false, false);

		static Call stoppedAt(int index, Throwable failure) {
			return new Call(index, failure, false, false);
		}

		static Call failed(Throwable failure) {
			return new Call(-1, failure, false, false);
		}

		static Call unconvertible(Throwable failure) {
			return new Call(-1, failure, true, false);
		}

		static Call unsplittable(Throwable failure) {
			return new Call(-1, failure, false, true);
		}

		/** How many of the call's first records succeeded, of {@code size}. */
		int succeeded(int size) {
			return (this.stoppedAt >= 0) ? this.stoppedAt : (this.failure == null) ? size : 0;
		}

	}

	/**
	 * The records of one call.
	 *
	 * @param batch the records, in batch order
	 * @param data what the method is given
	 * @param message what its parameters are resolved from
	 * @param refused how the call ended without the method, when the records cannot be
	 * converted
	 */
	private record Prepared(List<ConsumerRecord<Object, Object>> batch, BatchMethodAdapter.Data data,
			Message<?> message, @Nullable Call refused) {

		// the method is not invoked on a refused call, so its absent data and message are
		// never read; declared non-null for the calls that are invoked
		@SuppressWarnings("NullAway")
		static Prepared refused(Call refused) {
			return new Prepared(List.of(), null, null, refused);
		}

	}

	/**
	 * The converter could not read some records of a part: the part is split to find
	 * them.
	 */
	private static final class PoisonInBatch extends PermanentFailureException {

		PoisonInBatch() {
			super("The message converter could not read a record of the batch");
		}

	}

}
