package io.github.kafkaresilience.listener;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.idempotency.Claim;
import io.github.kafkaresilience.idempotency.IdempotencyGuard;
import io.github.kafkaresilience.ladder.BatchHandler;
import io.github.kafkaresilience.ladder.BatchResult;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.kafka.support.KafkaUtils;
import org.springframework.messaging.Message;

/**
 * Runs a batch listener's method on a batch of records that may all run now, and gives each
 * record its own outcome (docs/PROTOCOL.md, rule 10):
 * <ul>
 * <li>records that cannot be read are poison and do not reach the method: a deserializer
 * failed, or the converter could not convert them;</li>
 * <li>with an {@link IdempotencyGuard}, records whose idempotency key was completed are
 * skipped (they succeed without running), and the keys of the records that succeed are
 * completed after the call, in the guard's transaction when it has one;</li>
 * <li>the method returns: every record it got succeeded;</li>
 * <li>it throws a {@link BatchListenerFailedException}, naming a record by index or by
 * itself: the records before it (in the order the method got them) succeeded, it failed with
 * the exception's cause, and the records after it did not run;</li>
 * <li>it throws anything else: with {@link BatchSettings.Failure#BISECT}, the batch is split
 * in halves that run again, until each failing record failed alone, so that only records that
 * fail on their own fail; with {@link BatchSettings.Failure#FAIL_ALL}, every record it got
 * failed with the exception.</li>
 * </ul>
 * A record of a half that runs again ran before: a bisected batch runs records more than once
 * (at-least-once, as always), and only the last run counts as an attempt.
 */
final class BatchHandlerInvoker implements BatchHandler {

	private static final Log logger = LogFactory.getLog(BatchHandlerInvoker.class);

	private final BatchMethodAdapter method;

	private final String description;

	private final String groupId;

	private final RecordReader reader;

	private final @Nullable IdempotencyGuard guard;

	private final BatchSettings.Failure failure;

	BatchHandlerInvoker(ListenerEndpoint endpoint, RecordReader reader, ListenerMessaging messaging,
			@Nullable IdempotencyGuard guard, BatchSettings.Failure failure) {
		this.method = new BatchMethodAdapter(endpoint.bean(), endpoint.method(), messaging);
		this.description = endpoint.method().getDeclaringClass().getName() + "." + endpoint.method().getName();
		this.groupId = endpoint.groupId();
		this.reader = reader;
		this.guard = guard;
		this.failure = failure;
	}

	@Override
	public BatchResult handle(List<Delivery> deliveries) {
		Run run = new Run(deliveries.size());
		List<Integer> runnable = new ArrayList<>(deliveries.size());
		for (int i = 0; i < deliveries.size(); i++) {
			run.keys[i] = KeyOf.of(deliveries.get(i));
			RecordReader.Read read = this.reader.read(deliveries.get(i));
			ConsumerRecord<Object, Object> record = read.record();
			if (record == null) {
				run.results[i] = read.poison();
				continue;
			}
			run.records[i] = record;
			if (this.guard != null) {
				IdempotencyGuard.Admission admission = this.guard.admit(record);
				if (admission.claim() == null) {
					run.results[i] = admission.decided();
					continue;
				}
				run.claims[i] = admission.claim();
			}
			runnable.add(i);
		}
		if (this.method.isConsumerRecords()) {
			run.groupByPartition(runnable); // the order ConsumerRecords gives them in
		}
		// the converter and the method read the group from the thread, as on a listener container's thread
		KafkaUtils.setConsumerGroupId(this.groupId);
		try {
			if (!runnable.isEmpty()) {
				run.run(runnable);
			}
		}
		finally {
			KafkaUtils.clearConsumerGroupId();
			run.notRunBehindFailures();
			run.releaseUnsucceeded();
		}
		return new BatchResult(Arrays.asList(run.results), run.bisections);
	}

	/** One batch: each record's outcome as it becomes known. */
	private final class Run {

		final @Nullable HandlerResult[] results;

		final @Nullable ConsumerRecord<Object, Object>[] records;

		final @Nullable Claim[] claims;

		/** Each record's key in its partition, {@code null} for a record without a key. */
		final @Nullable KeyOf[] keys;

		int bisections;

		@SuppressWarnings("unchecked")
		Run(int size) {
			this.results = new HandlerResult[size];
			this.records = new ConsumerRecord[size];
			this.claims = new Claim[size];
			this.keys = new KeyOf[size];
		}

		/**
		 * The records of a part that may still run: a record after one of its key that did not
		 * succeed (failed alone, or is poison) does not, since it may not run before that one is
		 * done (docs/PROTOCOL.md, rule 10).
		 */
		List<Integer> runnable(List<Integer> part) {
			Map<KeyOf, Integer> stops = null; // the first record of each key that did not succeed
			for (int i = 0; i < this.results.length; i++) {
				HandlerResult result = this.results[i];
				if (result != null && result.outcome() != HandlerResult.Outcome.SUCCESS && this.keys[i] != null) {
					if (stops == null) {
						stops = new java.util.HashMap<>();
					}
					stops.putIfAbsent(this.keys[i], i);
				}
			}
			if (stops == null) {
				return part;
			}
			List<Integer> runnable = new ArrayList<>(part.size());
			for (int i : part) {
				Integer stop = (this.keys[i] != null) ? stops.get(this.keys[i]) : null;
				if (stop == null || i < stop) {
					runnable.add(i);
				}
			}
			return runnable;
		}

		/**
		 * A record after one of its key that did not succeed did not run: a call that failed as a
		 * whole, or failed every record, counts for none of them (docs/PROTOCOL.md, rule 10).
		 */
		void notRunBehindFailures() {
			java.util.Set<KeyOf> stopped = new java.util.HashSet<>();
			for (int i = 0; i < this.results.length; i++) {
				KeyOf key = this.keys[i];
				if (key == null) {
					continue;
				}
				HandlerResult result = this.results[i];
				if (stopped.contains(key)) {
					this.results[i] = null;
				}
				else if (result == null || result.outcome() != HandlerResult.Outcome.SUCCESS) {
					stopped.add(key);
				}
			}
		}

		/**
		 * Runs the method on records of the batch (by index, in batch order) until each has an
		 * outcome or a record was named as failed; returns whether one was, so that nothing
		 * after it runs.
		 */
		boolean run(List<Integer> called) {
			List<Integer> part = runnable(called);
			if (part.isEmpty()) {
				return false;
			}
			Call call = call(part);
			if (call.stoppedAt >= 0) {
				for (int i = 0; i < call.stoppedAt; i++) {
					this.results[part.get(i)] = HandlerResult.success();
				}
				this.results[part.get(call.stoppedAt)] = HandlerResult.failed(call.failure);
				return true;
			}
			if (call.failure == null) {
				part.forEach((i) -> this.results[i] = HandlerResult.success());
				return false;
			}
			if (call.unsplittable) {
				// the call's outcome could not be kept: each of its records failed, as after a single run
				Throwable failed = call.failure;
				part.forEach((i) -> this.results[i] = HandlerResult.failed(failed));
				return false;
			}
			boolean unreadable = call.unconvertible;
			if (part.size() == 1) {
				this.results[part.get(0)] = unreadable ? HandlerResult.poison(call.failure)
						: HandlerResult.failed(call.failure);
				return false;
			}
			if (!unreadable && BatchHandlerInvoker.this.failure == BatchSettings.Failure.FAIL_ALL) {
				Throwable failed = call.failure;
				part.forEach((i) -> this.results[i] = HandlerResult.failed(failed));
				return false;
			}
			this.bisections++;
			int half = part.size() / 2;
			return run(part.subList(0, half)) || run(part.subList(half, part.size()));
		}

		/** Calls the method once on records of the batch, completing the keys of those that succeed. */
		private Call call(List<Integer> part) {
			IdempotencyGuard guard = BatchHandlerInvoker.this.guard;
			if (guard == null) {
				return callMethod(part);
			}
			try {
				return completing(guard, part);
			}
			catch (RuntimeException ex) {
				// the store failed to complete the keys of the records that succeeded: as for a
				// single record, the attempt failed, transiently, and the records run again later
				return Call.unsplittable(ex);
			}
		}

		private Call completing(IdempotencyGuard guard, List<Integer> part) {
			return guard.callCompleting(() -> callMethod(part), (call) -> {
				int succeeded = (call.stoppedAt >= 0) ? call.stoppedAt : (call.failure == null) ? part.size() : 0;
				List<Claim> done = new ArrayList<>(succeeded);
				for (int i = 0; i < succeeded; i++) {
					done.add(this.claims[part.get(i)]);
				}
				return done;
			});
		}

		private Call callMethod(List<Integer> part) {
			List<ConsumerRecord<Object, Object>> batch = new ArrayList<>(part.size());
			part.forEach((i) -> batch.add(this.records[i]));
			BatchMethodAdapter.Data data = BatchHandlerInvoker.this.method.data(batch);
			Message<?> message;
			try {
				message = BatchHandlerInvoker.this.method.toMessage(data.order());
			}
			catch (RuntimeException ex) {
				return Call.unconvertible(ex);
			}
			Map<Integer, Throwable> unconverted = BatchMethodAdapter.conversionFailures(message);
			if (!unconverted.isEmpty()) {
				// the converter left the payloads of records it could not read empty: they are poison
				Map.Entry<Integer, Throwable> first = unconverted.entrySet().iterator().next();
				return (part.size() == 1) ? Call.unconvertible(first.getValue()) : Call.unconvertible(new PoisonInBatch());
			}
			try {
				BatchHandlerInvoker.this.method.invoke(data, message);
				return Call.SUCCEEDED;
			}
			catch (ListenerExecutionFailedException ex) {
				BatchListenerFailedException named = named(ex);
				if (named != null) {
					int index = indexOf(named, data.order());
					if (index >= 0) {
						ConsumerRecord<Object, Object> failed = data.order().get(index);
						return Call.stoppedAt(batch.indexOf(failed), causeOf(named));
					}
					logger.warn("Listener method " + BatchHandlerInvoker.this.description + " named a failed record "
							+ "that is not in its batch (" + named.getMessage() + "); the batch failed as a whole");
				}
				return Call.failed(HandlerInvoker.failure(ex, BatchHandlerInvoker.this.description));
			}
			catch (Error ex) {
				return Call.failed(ex); // an error the method threw fails the call, as an exception does
			}
		}

		/** Orders records by their partition, in the order the partitions first appear. */
		void groupByPartition(List<Integer> runnable) {
			List<String> partitions = new ArrayList<>();
			for (int i : runnable) {
				String partition = this.records[i].topic() + "-" + this.records[i].partition();
				if (!partitions.contains(partition)) {
					partitions.add(partition);
				}
			}
			runnable.sort(java.util.Comparator
				.comparingInt((i) -> partitions.indexOf(this.records[i].topic() + "-" + this.records[i].partition())));
		}

		/** Releases the idempotency claims of records that did not succeed, so that they run again. */
		void releaseUnsucceeded() {
			IdempotencyGuard guard = BatchHandlerInvoker.this.guard;
			if (guard == null) {
				return;
			}
			for (int i = 0; i < this.claims.length; i++) {
				Claim claim = this.claims[i];
				HandlerResult result = this.results[i];
				if (claim != null && (result == null || result.outcome() != HandlerResult.Outcome.SUCCESS)) {
					guard.release(claim, (result != null) ? result : HandlerResult.failed(new NotRun()));
				}
			}
		}

	}

	/** A record's key in its partition: the records of one key in a batch run in order. */
	private record KeyOf(String topic, int partition, Bytes key) {

		static @Nullable KeyOf of(Delivery delivery) {
			Bytes key = delivery.businessKey();
			return (key != null) ? new KeyOf(delivery.topic(), delivery.partition(), key) : null;
		}

	}

	/** The exception the method named a failed record with, in the cause chain of its failure. */
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

	/** The index, in the order the method got them, of the record the method named; -1 if none. */
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

	/** What a named record failed with: the exception's cause, or the exception without one. */
	private static Throwable causeOf(BatchListenerFailedException named) {
		Throwable cause = named.getCause();
		return (cause != null) ? cause : named;
	}

	/**
	 * How one call of the method ended.
	 * @param stoppedAt the index (in the part called) of the record the method named as
	 * failed, or -1
	 * @param failure what the call or the named record failed with, {@code null} on success
	 * @param unconvertible whether the records could not be converted, and the method did not run
	 * @param unsplittable whether every record of the call failed with {@code failure}, which
	 * splitting cannot tell apart (the idempotency store failed)
	 */
	private record Call(int stoppedAt, @Nullable Throwable failure, boolean unconvertible, boolean unsplittable) {

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

	}

	/** The converter could not read some records of a part: the part is split to find them. */
	private static final class PoisonInBatch extends PermanentFailureException {

		PoisonInBatch() {
			super("The message converter could not read a record of the batch");
		}

	}

	/** A record's claim released because its batch stopped before it. */
	private static final class NotRun extends RuntimeException {

		NotRun() {
			super("The batch stopped before the record ran", null, false, false);
		}

	}

}
