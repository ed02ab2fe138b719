package io.github.kafkaresilience.internal.ladder;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;

/**
 * What the consumer does with a record after the {@link StageRouter} looked at it.
 *
 * @param kind what to do
 * @param dueAt for {@link Kind#WAIT_UNTIL}, the epoch millis at which to look again
 * @param writes for {@link Kind#SETTLING}, the writes under way
 * @param rest for {@link Kind#FAILED}, the rest of the step: what the failure means, and
 * the start of its writes
 * @param failure for {@link Kind#FAILED}, what the handler's run gave
 * @param ready for {@link Kind#READY}, the record's run, to finish once the handler ran
 * @since 0.1.0
 */
public record Step(Kind kind, long dueAt, @Nullable CompletableFuture<?> writes, @Nullable Supplier<Step> rest,
		@Nullable HandlerResult failure, @Nullable ReadyRun ready) {

	public enum Kind {

		/** The record is finished: its offset may be committed. */
		DONE,

		/** The record is a retry not yet due: look again at {@code dueAt}. */
		WAIT_UNTIL,

		/**
		 * The record waits for another lock of its key to change: look again when it
		 * does.
		 */
		WAIT_FOR_KEY,

		/** The record's lock is unknown: look again once the tailer has caught up. */
		WAIT_FOR_TAILER,

		/**
		 * The record's writes are under way: it is finished once {@code writes}
		 * completes, and until then its key stays held and its offset uncommitted. When
		 * {@code writes} fails, the record is routed again, as after a failure of the
		 * step itself.
		 */
		SETTLING,

		/**
		 * The handler failed on the record and nothing was written yet: {@code rest}
		 * decides what the failure means and starts its writes, returning the step that
		 * follows. Until it has run, the record stays at the head of its key and its
		 * offset uncommitted. Only {@link StageRouter#route(Delivery, boolean, boolean)}
		 * with {@code deferFailures} returns it, so that its caller can let records of
		 * other keys run first.
		 */
		FAILED,

		/**
		 * The rules let the record run now, and the listener runs its records in batches:
		 * the caller runs the handler on it together with other ready records and takes
		 * the rest of the step from {@code ready}. Until then, the record stays at the
		 * head of its key and its offset uncommitted. Only a router built to
		 * {@link StageRouter.Builder#batchRuns(boolean) run in batches} returns it.
		 */
		READY

	}

	private static final Step DONE = new Step(Kind.DONE, 0, null, null, null, null);

	private static final Step WAIT_FOR_KEY = new Step(Kind.WAIT_FOR_KEY, 0, null, null, null, null);

	private static final Step WAIT_FOR_TAILER = new Step(Kind.WAIT_FOR_TAILER, 0, null, null, null, null);

	public static Step done() {
		return DONE;
	}

	public static Step waitUntil(long dueAt) {
		return new Step(Kind.WAIT_UNTIL, dueAt, null, null, null, null);
	}

	public static Step waitForKey() {
		return WAIT_FOR_KEY;
	}

	public static Step waitForTailer() {
		return WAIT_FOR_TAILER;
	}

	public static Step settling(CompletableFuture<?> writes) {
		return new Step(Kind.SETTLING, 0, writes, null, null, null);
	}

	public static Step failed(HandlerResult failure, Supplier<Step> rest) {
		return new Step(Kind.FAILED, 0, null, rest, failure, null);
	}

	public static Step ready(ReadyRun ready) {
		return new Step(Kind.READY, 0, null, null, null, ready);
	}

}
