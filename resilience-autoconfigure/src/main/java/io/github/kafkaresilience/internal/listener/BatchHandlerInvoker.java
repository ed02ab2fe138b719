package io.github.kafkaresilience.internal.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import io.github.kafkaresilience.AttemptTimeoutException;
import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.idempotency.Claim;
import io.github.kafkaresilience.internal.idempotency.IdempotencyGuard;
import io.github.kafkaresilience.ladder.AsyncBatchHandler;
import io.github.kafkaresilience.ladder.BatchHandler;
import io.github.kafkaresilience.ladder.BatchResult;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.BatchListenerFailedException;

/**
 * Runs a batch listener's method on a batch of records that may all run now, and gives
 * each record its own outcome (docs/PROTOCOL.md, rule 10):
 * <ul>
 * <li>records that cannot be read are poison and do not reach the method: a deserializer
 * failed, or the converter could not convert them;</li>
 * <li>with an {@link IdempotencyGuard}, records whose idempotency key was completed are
 * skipped (they succeed without running), and the keys of the records that succeed are
 * completed after the call, in the guard's transaction when it has one;</li>
 * <li>the method returns: every record it got succeeded;</li>
 * <li>it throws a {@link BatchListenerFailedException}, naming a record by index or by
 * itself: the records before it (in the order the method got them) succeeded, it failed
 * with the exception's cause, and the records after it did not run;</li>
 * <li>it throws anything else: with {@link BatchSettings.Failure#BISECT}, the batch is
 * split in halves that run again, until each failing record failed alone, so that only
 * records that fail on their own fail; with {@link BatchSettings.Failure#FAIL_ALL}, every
 * record it got failed with the exception.</li>
 * </ul>
 * A record of a half that runs again ran before: a bisected batch runs records more than
 * once (at-least-once, as always), and only the last run counts as an attempt.
 * <p>
 * A method whose result completes later ({@link #start}) is called on the calling worker;
 * its result stands for its return: completed normally, every record it got succeeded;
 * exceptionally, as the exception it would have thrown, by the rules above. A result not
 * complete within the attempt timeout is cancelled, and every record of the call failed
 * with an {@link AttemptTimeoutException}; a split does not tell such records apart. What
 * follows a completion (the call on a half, the claims) runs on the worker executor the
 * caller gives.
 */
final class BatchHandlerInvoker implements BatchHandler, AsyncBatchHandler {

	private final BatchCalls calls;

	private final RecordReader reader;

	private final @Nullable IdempotencyGuard guard;

	private final BatchSettings.Failure failure;

	BatchHandlerInvoker(ListenerEndpoint endpoint, RecordReader reader, ListenerMessaging messaging,
			@Nullable IdempotencyGuard guard, BatchSettings.Failure failure) {
		this(endpoint, reader, messaging, guard, failure, Duration.ZERO);
	}

	/**
	 * As above, for a method whose result completes later.
	 * @param attemptTimeout how long a call's result is waited for
	 */
	BatchHandlerInvoker(ListenerEndpoint endpoint, RecordReader reader, ListenerMessaging messaging,
			@Nullable IdempotencyGuard guard, BatchSettings.Failure failure, Duration attemptTimeout) {
		this.calls = new BatchCalls(new BatchMethodAdapter(endpoint.bean(), endpoint.method(), messaging),
				endpoint.method().getDeclaringClass().getName() + "." + endpoint.method().getName(), endpoint.groupId(),
				attemptTimeout);
		this.reader = reader;
		this.guard = guard;
		this.failure = failure;
	}

	@Override
	public BatchResult handle(List<Delivery> deliveries) {
		Run run = admit(deliveries);
		try {
			if (!run.runnable.isEmpty()) {
				run.run(run.runnable);
			}
		}
		finally {
			run.conclude();
		}
		return run.result();
	}

	@Override
	public CompletableFuture<BatchResult> start(List<Delivery> deliveries, Executor worker) {
		Run run = admit(deliveries);
		CompletableFuture<Boolean> ran;
		try {
			ran = run.runLater(run.runnable, worker);
		}
		catch (RuntimeException | Error ex) {
			run.conclude();
			throw ex;
		}
		return ran.handle((stopped, ex) -> {
			if (ex != null) {
				// what follows the completion could not run (the caller stopped): none of
				// them ran
				Arrays.fill(run.results, null);
			}
			run.conclude();
			return run.result();
		});
	}

	/**
	 * Reads the records and takes their claims; a record that cannot run has its outcome
	 * already.
	 */
	private Run admit(List<Delivery> deliveries) {
		Run run = new Run(deliveries.size());
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
			run.runnable.add(i);
		}
		if (this.calls.isConsumerRecords()) {
			run.groupByPartition(run.runnable); // the order ConsumerRecords gives them in
		}
		return run;
	}

	/** One batch: each record's outcome as it becomes known. */
	private final class Run {

		final @Nullable HandlerResult[] results;

		final @Nullable ConsumerRecord<Object, Object>[] records;

		final @Nullable Claim[] claims;

		/**
		 * Each record's key in its partition, {@code null} for a record without a key.
		 */
		final @Nullable KeyOf[] keys;

		/** The records that may run, in the order the method gets them. */
		final List<Integer> runnable;

		int bisections;

		@SuppressWarnings("unchecked")
		Run(int size) {
			this.runnable = new ArrayList<>(size);
			this.results = new HandlerResult[size];
			this.records = new ConsumerRecord[size];
			this.claims = new Claim[size];
			this.keys = new KeyOf[size];
		}

		/**
		 * The records of a part that may still run: a record after one of its key that
		 * did not succeed (failed alone, or is poison) does not, since it may not run
		 * before that one is done (docs/PROTOCOL.md, rule 10).
		 */
		List<Integer> runnable(List<Integer> part) {
			Map<KeyOf, Integer> stops = null; // the first record of each key that did not
												// succeed
			for (int i = 0; i < this.results.length; i++) {
				HandlerResult result = this.results[i];
				if (result != null && result.outcome() != HandlerResult.Outcome.SUCCESS && this.keys[i] != null) {
					if (stops == null) {
						stops = new HashMap<>();
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
		 * A record after one of its key that did not succeed did not run: a call that
		 * failed as a whole, or failed every record, counts for none of them
		 * (docs/PROTOCOL.md, rule 10).
		 */
		void notRunBehindFailures() {
			Set<KeyOf> stopped = new HashSet<>();
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
		 * The runs are over: records behind a failure of their key did not run, and the
		 * claims of those that did not succeed are released.
		 */
		void conclude() {
			notRunBehindFailures();
			releaseUnsucceeded();
		}

		/** Each record's outcome, once concluded. */
		BatchResult result() {
			return new BatchResult(Arrays.asList(this.results), this.bisections);
		}

		/**
		 * Runs the method on records of the batch (by index, in batch order) until each
		 * has an outcome or a record was named as failed; returns whether one was, so
		 * that nothing after it runs.
		 */
		boolean run(List<Integer> called) {
			List<Integer> part = runnable(called);
			if (part.isEmpty()) {
				return false;
			}
			Boolean stopped = settle(part, call(part));
			if (stopped != null) {
				return stopped;
			}
			int half = part.size() / 2;
			return run(part.subList(0, half)) || run(part.subList(half, part.size()));
		}

		/**
		 * As {@link #run}, for a method whose result completes later: each call's outcome
		 * is taken, and the next call made, on {@code worker}.
		 */
		CompletableFuture<Boolean> runLater(List<Integer> called, Executor worker) {
			List<Integer> part = runnable(called);
			if (part.isEmpty()) {
				return CompletableFuture.completedFuture(false);
			}
			return callLater(part).thenComposeAsync((call) -> {
				Boolean stopped = settle(part, completeClaims(part, call));
				if (stopped != null) {
					return CompletableFuture.completedFuture(stopped);
				}
				int half = part.size() / 2;
				return runLater(part.subList(0, half), worker).thenComposeAsync((first) -> first
						? CompletableFuture.completedFuture(true) : runLater(part.subList(half, part.size()), worker),
						worker);
			}, worker);
		}

		/**
		 * Gives the records of a call their outcomes; returns whether a record was named
		 * as failed, or {@code null} when the part is to be split in halves that run
		 * again.
		 */
		private @Nullable Boolean settle(List<Integer> part, BatchCalls.Call call) {
			if (call.stoppedAt() >= 0) {
				for (int i = 0; i < call.stoppedAt(); i++) {
					this.results[part.get(i)] = HandlerResult.success();
				}
				// a call that stopped at a record failed with its throwable
				this.results[part.get(call.stoppedAt())] = HandlerResult.failed(Objects.requireNonNull(call.failure()));
				return true;
			}
			if (call.failure() == null) {
				part.forEach((i) -> this.results[i] = HandlerResult.success());
				return false;
			}
			if (call.unsplittable()) {
				// the call's outcome could not be kept: each of its records failed, as
				// after a single run
				Throwable failed = call.failure();
				part.forEach((i) -> this.results[i] = HandlerResult.failed(failed));
				return false;
			}
			boolean unreadable = call.unconvertible();
			if (part.size() == 1) {
				this.results[part.get(0)] = unreadable ? HandlerResult.poison(call.failure())
						: HandlerResult.failed(call.failure());
				return false;
			}
			if (!unreadable && BatchHandlerInvoker.this.failure == BatchSettings.Failure.FAIL_ALL) {
				Throwable failed = call.failure();
				part.forEach((i) -> this.results[i] = HandlerResult.failed(failed));
				return false;
			}
			this.bisections++;
			return null;
		}

		/**
		 * Completes the claims of the records a call whose result completed later says
		 * succeeded, on a worker: one that cannot be completed fails the call from that
		 * record on, as a record the method named would, transiently.
		 */
		private BatchCalls.Call completeClaims(List<Integer> part, BatchCalls.Call call) {
			IdempotencyGuard guard = BatchHandlerInvoker.this.guard;
			if (guard == null) {
				return call;
			}
			int succeeded = call.succeeded(part.size());
			for (int i = 0; i < succeeded; i++) {
				Claim claim = this.claims[part.get(i)];
				if (claim == null) {
					continue;
				}
				HandlerResult completed = guard.finish(claim, HandlerResult.success());
				this.claims[part.get(i)] = null; // completed, or released by finish
				if (completed.outcome() != HandlerResult.Outcome.SUCCESS) {
					return BatchCalls.Call.stoppedAt(i, (completed.failure() != null) ? completed.failure()
							: new IllegalStateException("The idempotency claim could not be completed"));
				}
			}
			return call;
		}

		/**
		 * Calls the method once on records of the batch, completing the keys of those
		 * that succeed.
		 */
		private BatchCalls.Call call(List<Integer> part) {
			IdempotencyGuard guard = BatchHandlerInvoker.this.guard;
			if (guard == null) {
				return callMethod(part);
			}
			try {
				return completing(guard, part);
			}
			catch (RuntimeException ex) {
				// the store failed to complete the keys of the records that succeeded: as
				// for a
				// single record, the attempt failed, transiently, and the records run
				// again later
				return BatchCalls.Call.unsplittable(ex);
			}
		}

		private BatchCalls.Call completing(IdempotencyGuard guard, List<Integer> part) {
			return guard.callCompleting(() -> callMethod(part), (call) -> {
				int succeeded = call.succeeded(part.size());
				List<Claim> done = new ArrayList<>(succeeded);
				for (int i = 0; i < succeeded; i++) {
					done.add(this.claims[part.get(i)]);
				}
				return done;
			});
		}

		private BatchCalls.Call callMethod(List<Integer> part) {
			return BatchHandlerInvoker.this.calls.now(records(part));
		}

		private CompletableFuture<BatchCalls.Call> callLater(List<Integer> part) {
			return BatchHandlerInvoker.this.calls.later(records(part));
		}

		private List<ConsumerRecord<Object, Object>> records(List<Integer> part) {
			List<ConsumerRecord<Object, Object>> batch = new ArrayList<>(part.size());
			part.forEach((i) -> batch.add(this.records[i]));
			return batch;
		}

		/**
		 * Orders records by their partition, in the order the partitions first appear.
		 */
		void groupByPartition(List<Integer> runnable) {
			List<String> partitions = new ArrayList<>();
			for (int i : runnable) {
				String partition = partitionOf(i);
				if (!partitions.contains(partition)) {
					partitions.add(partition);
				}
			}
			runnable.sort(Comparator.comparingInt((i) -> partitions.indexOf(partitionOf(i))));
		}

		/** The partition of a record that can run: it was read. */
		private String partitionOf(int i) {
			ConsumerRecord<Object, Object> record = Objects.requireNonNull(this.records[i]);
			return record.topic() + "-" + record.partition();
		}

		/**
		 * Releases the idempotency claims of records that did not succeed, so that they
		 * run again.
		 */
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

	/**
	 * A record's key in its partition: the records of one key in a batch run in order.
	 */
	private record KeyOf(String topic, int partition, Bytes key) {

		static @Nullable KeyOf of(Delivery delivery) {
			Bytes key = delivery.businessKey();
			return (key != null) ? new KeyOf(delivery.topic(), delivery.partition(), key) : null;
		}

	}

	/** A record's claim released because its batch stopped before it. */
	private static final class NotRun extends RuntimeException {

		NotRun() {
			super("The batch stopped before the record ran", null, false, false);
		}

	}

}
