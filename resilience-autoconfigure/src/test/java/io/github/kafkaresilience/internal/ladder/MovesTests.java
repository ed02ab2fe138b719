package io.github.kafkaresilience.internal.ladder;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.internal.ladder.AttemptObservation.Attempt;
import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockStore;
import io.github.kafkaresilience.internal.lock.Position;
import io.github.kafkaresilience.internal.support.Futures;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.DlqReason;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.ladder.LadderObserver;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The writes of a step, in their order, each started from the completion of the one
 * before; and what is undone, dead-lettered or left to the aborted transaction when one
 * of them fails.
 */
class MovesTests {

	private static final LadderPlan PLAN = LadderPlan.of("billing", "orders",
			List.of(Duration.ofSeconds(30), Duration.ofMinutes(5)), null, LadderPlan.DEFAULT_RETRY_TEMPLATE,
			LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE);

	private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

	private static final Bytes KEY = Bytes.wrap("k".getBytes(StandardCharsets.UTF_8));

	private static final String STAGE_1 = "billing.orders.retry.30s";

	private static final String DLQ = "billing.orders.dlq";

	private static final FailureInfo FAILURE = ProtocolHeaders.failure(new IllegalStateException("boom"), false, NOW);

	/** Every write, publish and fault hook, in the order they happen. */
	private final List<String> events = new ArrayList<>();

	private final Locks locks = new Locks(this.events);

	private final Publisher publisher = new Publisher(this.events);

	private final List<String> deadLettered = new ArrayList<>();

	private final Object monitor = new Object();

	private final Delivery record = new Delivery("orders", 0, 7, NOW.toEpochMilli(), KEY.get(),
			"value".getBytes(StandardCharsets.UTF_8), new RecordHeaders());

	private final Lock moving = Lock.moving("L1", KEY, 0, 7, 1, new Position(0, 7), 1, FAILURE, NOW);

	// --- a move

	@Test
	void aNewLockIsWrittenThenItsRecordPublishedThenTheLockConfirmedWhereTheBrokerPutTheRecord() {
		CompletableFuture<Void> move = moves(DualWrite.COMPENSATE).moveNewLock(this.moving, this.record, Attempt.NONE);
		assertThat(move).isCompleted();
		assertThat(this.events).containsExactly("write L1 moving to 1", "fault LOCK_WRITTEN", "publish " + STAGE_1,
				"fault PUBLISHED", "write L1 at 1/0");
		assertThat(this.locks.live.get("L1")).isEqualTo(this.moving.confirmedAt(0, NOW));
		Sent sent = this.publisher.sent.get(0);
		assertThat(sent.header("lock.id")).isEqualTo("L1");
		assertThat(sent.header("retry.count")).isEqualTo("1");
		assertThat(sent.header("original.offset")).isEqualTo("7");
		assertThat(sent.header("error.message")).isEqualTo("boom");
		assertThat(sent.header("owner.group")).isEqualTo("billing");
	}

	@Test
	void eachWriteOfAMoveStartsOnlyOnceTheOneBeforeIsDurable() {
		this.locks.hold = true;
		this.publisher.hold = true;
		CompletableFuture<Void> move = moves(DualWrite.COMPENSATE).moveNewLock(this.moving, this.record, Attempt.NONE);
		assertThat(this.events).containsExactly("write L1 moving to 1");
		this.locks.land();
		assertThat(this.events).endsWith("publish " + STAGE_1);
		assertThat(move).isNotDone();
		this.publisher.land(42);
		assertThat(this.events).endsWith("write L1 at 1/42");
		assertThat(move).isNotDone();
		this.locks.land();
		assertThat(move).isCompleted();
		assertThat(this.locks.live.get("L1").at()).isEqualTo(42L);
	}

	@Test
	void aLockInTheLadderIsMovedFromTheRecordThatCarriesIt() {
		Lock lock = new Lock("L1", KEY, 0, 7, 1, 4L, null, 1, null, NOW);
		Lock next = lock.moveTo(2, new Position(1, 4), 2, FAILURE, NOW);
		this.locks.live.put("L1", lock);
		Delivery carrier = stageRecord(4);
		assertThat(moves(DualWrite.COMPENSATE).move(lock, next, carrier, Attempt.NONE)).isCompleted();
		assertThat(this.events).containsExactly("write L1 moving to 2", "fault LOCK_WRITTEN",
				"publish billing.orders.retry.5m", "fault PUBLISHED", "write L1 at 2/0");
		Sent sent = this.publisher.sent.get(0);
		assertThat(sent.header("retry.count")).isEqualTo("2");
		assertThat(sent.header("previous.topic")).isEqualTo(STAGE_1);
		assertThat(sent.header("original.offset")).as("only the first hop says where a record was born").isNull();
	}

	@Test
	void anUnfinishedMoveIsFinishedWithTheCountAndFailureItWasStartedWith() {
		this.locks.live.put("L1", this.moving);
		assertThat(moves(DualWrite.COMPENSATE).completeMove(this.moving, this.record, true)).isCompleted();
		assertThat(this.events).containsExactly("publish " + STAGE_1, "fault PUBLISHED", "write L1 at 1/0");
		assertThat(this.publisher.sent.get(0).header("retry.count")).isEqualTo("1");
		assertThat(this.publisher.sent.get(0).header("error.message")).isEqualTo("boom");
	}

	@Test
	void aConfirmationIsDroppedWhenTheLockChangedMeanwhile() {
		this.locks.live.put("L1", this.moving);
		this.publisher.onPublish = () -> this.locks.live.remove("L1"); // another delivery
																		// finished the
																		// work
		assertThat(moves(DualWrite.COMPENSATE).completeMove(this.moving, this.record, true)).isCompleted();
		assertThat(this.events).containsExactly("publish " + STAGE_1, "fault PUBLISHED");
		assertThat(this.locks.live).isEmpty();
	}

	@Test
	void aConfirmationLooksAtTheLockHoldingTheRoutersMonitor() {
		this.locks.live.put("L1", this.moving);
		this.locks.monitor = this.monitor;
		moves(DualWrite.COMPENSATE).completeMove(this.moving, this.record, true);
		assertThat(this.locks.findsUnderMonitor).containsExactly(true);
	}

	// --- a failed move

	@Test
	void aNewLockWhosePublishFailsIsReleasedAndTheMoveFailsWithThePublishFailure() {
		this.publisher.fail(STAGE_1);
		CompletableFuture<Void> move = moves(DualWrite.COMPENSATE).moveNewLock(this.moving, this.record, Attempt.NONE);
		assertThat(this.events).containsExactly("write L1 moving to 1", "fault LOCK_WRITTEN",
				"publish " + STAGE_1 + " FAILS", "fault COMPENSATING", "release L1");
		assertThat(failure(move)).hasMessage("injected publish failure");
		assertThat(this.locks.live).isEmpty();
	}

	@Test
	void aLockInTheLadderWhosePublishFailsGoesBackWhereItWas() {
		Lock lock = new Lock("L1", KEY, 0, 7, 1, 4L, null, 1, null, NOW);
		this.locks.live.put("L1", lock);
		this.publisher.fail("billing.orders.retry.5m");
		CompletableFuture<Void> move = moves(DualWrite.COMPENSATE).move(lock,
				lock.moveTo(2, new Position(1, 4), 2, FAILURE, NOW), stageRecord(4), Attempt.NONE);
		assertThat(failure(move)).hasMessage("injected publish failure");
		assertThat(this.events).endsWith("fault COMPENSATING", "write L1 at 1/4");
		assertThat(this.locks.live.get("L1")).isEqualTo(lock);
	}

	@Test
	void aNewLockWhoseWriteReportsAFailureIsReleasedForItMayHaveLanded() {
		this.locks.failAfterWriting.add("write L1 moving to 1");
		CompletableFuture<Void> move = moves(DualWrite.COMPENSATE).moveNewLock(this.moving, this.record, Attempt.NONE);
		assertThat(failure(move)).hasMessage("injected failure of write L1 moving to 1");
		assertThat(this.events).containsExactly("write L1 moving to 1", "fault COMPENSATING", "release L1");
		assertThat(this.publisher.sent).isEmpty();
		assertThat(this.locks.live).isEmpty();
	}

	@Test
	void anUndoThatFailsTooIsAddedToTheFailureAndLeavesTheMoveForTheRedelivery() {
		this.publisher.fail(STAGE_1);
		this.locks.failAfterWriting.add("release L1");
		this.locks.failBeforeWriting = true;
		CompletableFuture<Void> move = moves(DualWrite.COMPENSATE).moveNewLock(this.moving, this.record, Attempt.NONE);
		assertThat(failure(move)).hasMessage("injected publish failure")
			.satisfies((ex) -> assertThat(ex.getSuppressed()).singleElement()
				.satisfies((undo) -> assertThat(undo).hasMessage("injected failure of release L1")));
		assertThat(this.locks.live.get("L1")).isEqualTo(this.moving);
	}

	@Test
	void inTransactionModeAFailedPublishIsNotUndoneForTheCallerAbortsTheTransaction() {
		this.publisher.fail(STAGE_1);
		CompletableFuture<Void> move = moves(DualWrite.TRANSACTION).moveNewLock(this.moving, this.record, Attempt.NONE);
		assertThat(failure(move)).hasMessage("injected publish failure");
		assertThat(this.events).containsExactly("write L1 moving to 1", "fault LOCK_WRITTEN",
				"publish " + STAGE_1 + " FAILS");
	}

	@Test
	void anErrorIsNeverUndone() {
		this.publisher.error = new OutOfMemoryError("injected");
		CompletableFuture<Void> move = moves(DualWrite.COMPENSATE).moveNewLock(this.moving, this.record, Attempt.NONE);
		assertThat(failure(move)).isInstanceOf(OutOfMemoryError.class);
		assertThat(this.events).doesNotContain("release L1");
	}

	// --- records without a key, dead letters, releases

	@Test
	void aRecordWithoutAKeyIsPublishedWithoutALock() {
		Delivery keyless = new Delivery("orders", 0, 7, 0, null, new byte[1], new RecordHeaders());
		Hop hop = new Hop(true, 1, null, FAILURE);
		assertThat(moves(DualWrite.COMPENSATE).publishWithoutLock(keyless, hop, 1, Attempt.NONE)).isCompleted();
		assertThat(this.events).containsExactly("publish " + STAGE_1);
		assertThat(this.publisher.sent.get(0).header("lock.id")).isNull();
		assertThat(this.publisher.sent.get(0).header("retry.count")).isEqualTo("1");
	}

	@Test
	void aDeadLetterCarriesItsReasonAndIsToldToTheObserver() {
		Moves moves = moves(DualWrite.COMPENSATE, new LadderObserver() {

			@Override
			public void deadLettered(DlqReason reason, String errorClass) {
				MovesTests.this.deadLettered.add(reason.value() + "/" + errorClass);
			}

		});
		assertThat(moves.deadLetter(this.record, new Hop(true, 1, null, FAILURE), DlqReason.EXHAUSTED, Attempt.NONE))
			.isCompleted();
		assertThat(this.publisher.sent).singleElement().satisfies((sent) -> {
			assertThat(sent.topic()).isEqualTo(DLQ);
			assertThat(sent.header("dlq.reason")).isEqualTo("exhausted");
		});
		assertThat(this.deadLettered).containsExactly("exhausted/transient");
	}

	@Test
	void aMalformedRecordIsDeadLetteredAsPoison() {
		FailureInfo malformed = ProtocolHeaders.failure(new IllegalStateException("no count"), true, NOW);
		assertThat(moves(DualWrite.COMPENSATE).deadLetterMalformed(stageRecord(4), new Hop(false, 0, null, malformed),
				"no count"))
			.isCompleted();
		assertThat(this.publisher.sent.get(0).header("dlq.reason")).isEqualTo("poison");
	}

	@Test
	void aDeadLetterTheDeadLetterTopicRefusesFailsAsUnpublishable() {
		this.publisher.refuse(DLQ);
		CompletableFuture<Void> dead = moves(DualWrite.COMPENSATE).deadLetter(this.record,
				new Hop(true, 1, null, FAILURE), DlqReason.PERMANENT, Attempt.NONE);
		assertThat(failure(dead)).isInstanceOfSatisfying(UnpublishableRecordException.class,
				(ex) -> assertThat(ex.refusingTopic()).isEqualTo(DLQ));
	}

	@Test
	void aReleaseOfNoLockWritesNothing() {
		assertThat(moves(DualWrite.COMPENSATE).release(null)).isCompleted();
		assertThat(this.events).isEmpty();
	}

	// --- a move a retry topic refuses as too large

	@Test
	void aMoveTheRetryTopicRefusesIsDeadLetteredAsPermanentAndItsLockReleased() {
		this.publisher.refuse(STAGE_1);
		assertThat(moves(DualWrite.COMPENSATE).moveNewLock(this.moving, this.record, Attempt.NONE)).isCompleted();
		assertThat(this.events).containsExactly("write L1 moving to 1", "fault LOCK_WRITTEN",
				"publish " + STAGE_1 + " REFUSED", "publish " + DLQ, "release L1");
		Sent dead = this.publisher.sent.get(0);
		assertThat(dead.header("dlq.reason")).isEqualTo("permanent");
		assertThat(dead.header("lock.id")).isEqualTo("L1");
		assertThat(dead.header("retry.count")).isEqualTo("1");
		assertThat(dead.header("error.exception")).isEqualTo(RecordTooLargeException.class.getName());
		assertThat(dead.header("error.message")).contains("could not be published to '" + STAGE_1 + "'")
			.contains("Its last failure: java.lang.IllegalStateException: boom");
	}

	@Test
	void inTransactionModeARefusedMoveFailsAndTheRecordIsDeadLetteredWhenItIsRoutedAgain() {
		this.publisher.refuse(STAGE_1);
		Moves moves = moves(DualWrite.TRANSACTION);
		assertThat(moves.deadLetterIfRefused(this.record)).isNull();
		assertThat(failure(moves.moveNewLock(this.moving, this.record, Attempt.NONE)))
			.isInstanceOf(KafkaException.class)
			.hasMessage(
					"'" + STAGE_1 + "' refused orders/0/7 as too large; the transaction is aborted and the record is "
							+ "sent to '" + DLQ + "' when it is routed again");
		assertThat(this.publisher.sent).isEmpty();
		this.locks.live.clear(); // the caller aborted the transaction, and the lock write
									// with it
		assertThat(moves.deadLetterIfRefused(this.record)).isCompleted();
		assertThat(this.publisher.sent).singleElement()
			.satisfies((dead) -> assertThat(dead.header("dlq.reason")).isEqualTo("permanent"));
		assertThat(moves.deadLetterIfRefused(this.record)).as("dead-lettered once").isNull();
	}

	@Test
	void aRememberedRefusalIsKeptWhileItsDeadLetterFailsAndForgottenWhenTheDeadLetterTopicRefusesIt() {
		this.publisher.refuse(STAGE_1);
		Moves moves = moves(DualWrite.TRANSACTION);
		moves.moveNewLock(this.moving, this.record, Attempt.NONE);
		this.publisher.fail(DLQ);
		assertThat(failure(moves.deadLetterIfRefused(this.record))).hasMessage("injected publish failure");
		this.publisher.refuse(DLQ);
		assertThat(failure(moves.deadLetterIfRefused(this.record))).isInstanceOf(UnpublishableRecordException.class);
		assertThat(moves.deadLetterIfRefused(this.record)).isNull();
	}

	// --- helpers

	private Moves moves(DualWrite dualWrite) {
		return moves(dualWrite, LadderObserver.NONE);
	}

	private Moves moves(DualWrite dualWrite, LadderObserver observer) {
		FaultInjection faults = (point, delivery) -> this.events.add("fault " + point);
		return new Moves(PLAN, this.locks, this.publisher, Clock.fixed(NOW, ZoneOffset.UTC), dualWrite, faults,
				PLAN.ownership(), observer, this.monitor);
	}

	private static Delivery stageRecord(long offset) {
		Headers headers = new RecordHeaders().add("retry.count", "1".getBytes(StandardCharsets.UTF_8))
			.add("lock.id", "L1".getBytes(StandardCharsets.UTF_8));
		return new Delivery(STAGE_1, 0, offset, 0, KEY.get(), new byte[1], headers);
	}

	private static Throwable failure(@Nullable CompletableFuture<Void> future) {
		assertThat(future).isCompletedExceptionally();
		return future.handle((ignored, ex) -> Futures.cause(ex)).join();
	}

	record Sent(String topic, Headers headers) {

		@Nullable String header(String name) {
			return ProtocolHeaders.text(this.headers, name);
		}

	}

	/**
	 * A producer in memory: it gives offsets from 0, refuses some topics as too large and
	 * fails others.
	 */
	static final class Publisher implements RecordPublisher {

		final List<Sent> sent = new ArrayList<>();

		boolean hold;

		@Nullable Runnable onPublish;

		@Nullable Error error;

		private final List<String> events;

		private final Set<String> refused = new HashSet<>();

		private final Set<String> failing = new HashSet<>();

		private final Deque<CompletableFuture<Long>> held = new ArrayDeque<>();

		Publisher(List<String> events) {
			this.events = events;
		}

		void refuse(String topic) {
			this.failing.remove(topic);
			this.refused.add(topic);
		}

		void fail(String topic) {
			this.refused.remove(topic);
			this.failing.add(topic);
		}

		void land(long offset) {
			this.held.removeFirst().complete(offset);
		}

		@Override
		public long publish(String topic, int partition, byte[] key, byte[] value, Headers headers) {
			throw new UnsupportedOperationException("moves do not wait for a publish");
		}

		@Override
		public CompletableFuture<Long> sending(String topic, int partition, byte[] key, byte[] value, Headers headers) {
			if (this.error != null) {
				this.events.add("publish " + topic + " ERROR");
				return CompletableFuture.failedFuture(this.error);
			}
			if (this.refused.contains(topic)) {
				this.events.add("publish " + topic + " REFUSED");
				return CompletableFuture.failedFuture(new KafkaException("Could not publish to '" + topic + "'",
						new RecordTooLargeException("The message is 2000000 bytes when serialized")));
			}
			if (this.failing.contains(topic)) {
				this.events.add("publish " + topic + " FAILS");
				return CompletableFuture.failedFuture(new KafkaException("injected publish failure"));
			}
			this.events.add("publish " + topic);
			this.sent.add(new Sent(topic, headers));
			if (this.onPublish != null) {
				this.onPublish.run();
			}
			if (this.hold) {
				CompletableFuture<Long> offset = new CompletableFuture<>();
				this.held.add(offset);
				return offset;
			}
			return CompletableFuture.completedFuture((long) this.sent.size() - 1);
		}

	}

	/**
	 * The live locks in memory. A write lands at once, or when the test says so; one
	 * named in {@code failAfterWriting} lands and then reports a failure, or fails before
	 * landing with {@code failBeforeWriting}.
	 */
	static final class Locks implements LockStore {

		final Map<String, Lock> live = new LinkedHashMap<>();

		final Set<String> failAfterWriting = new HashSet<>();

		final List<Boolean> findsUnderMonitor = new ArrayList<>();

		boolean failBeforeWriting;

		boolean hold;

		@Nullable Object monitor;

		private final List<String> events;

		private final Deque<Runnable> held = new ArrayDeque<>();

		Locks(List<String> events) {
			this.events = events;
		}

		void land() {
			this.held.removeFirst().run();
		}

		@Override
		public @Nullable Lock find(String id) {
			if (this.monitor != null) {
				this.findsUnderMonitor.add(Thread.holdsLock(this.monitor));
			}
			return this.live.get(id);
		}

		@Override
		public List<Lock> locksOf(Bytes key) {
			throw new UnsupportedOperationException("moves do not look at a key's locks");
		}

		@Override
		public @Nullable Lock byOrigin(Bytes key, long originOffset) {
			throw new UnsupportedOperationException("moves do not look locks up by origin");
		}

		@Override
		public @Nullable Lock predecessor(Lock lock) {
			throw new UnsupportedOperationException("moves do not look for predecessors");
		}

		@Override
		public void write(Lock lock) {
			this.live.put(lock.id(), lock);
		}

		@Override
		public void release(Lock lock) {
			this.live.remove(lock.id());
		}

		@Override
		public CompletableFuture<Void> writing(Lock lock) {
			String event = "write " + lock.id()
					+ (lock.isMoving() ? " moving to " + lock.stage() : " at " + lock.stage() + "/" + lock.at());
			return send(event, () -> write(lock));
		}

		@Override
		public CompletableFuture<Void> releasing(Lock lock) {
			return send("release " + lock.id(), () -> release(lock));
		}

		private CompletableFuture<Void> send(String event, Runnable effect) {
			this.events.add(event);
			CompletableFuture<Void> written = new CompletableFuture<>();
			Runnable land = () -> {
				if (this.failAfterWriting.contains(event)) {
					if (!this.failBeforeWriting) {
						effect.run();
					}
					written.completeExceptionally(new KafkaException("injected failure of " + event));
					return;
				}
				effect.run();
				written.complete(null);
			};
			if (this.hold) {
				this.held.add(land);
			}
			else {
				land.run();
			}
			return written;
		}

	}

}
