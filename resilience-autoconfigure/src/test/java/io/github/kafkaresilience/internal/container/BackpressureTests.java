package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToIntBiFunction;

import io.github.kafkaresilience.ladder.Delivery;

import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import static io.github.kafkaresilience.internal.container.Records.record;
import static io.github.kafkaresilience.internal.container.Records.task;
import static io.github.kafkaresilience.internal.container.Records.work;
import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

/**
 * A partition at its in-flight bound is paused (the poll loop's settling carries out what
 * backpressure marks), and resumed once drained to half of it (or to where it was told to
 * resume) if its barrier is open and it was not stopped; records held back at the bound
 * are taken as soon as there is room; the poll loop is told when there is room, for a
 * poll or for the records held back, and polls briefly while a partition is paused at its
 * bound.
 */
class BackpressureTests {

	private static final TopicPartition P0 = new TopicPartition("orders", 0);

	private static final TopicPartition P1 = new TopicPartition("orders", 1);

	private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>(AutoOffsetResetStrategy.EARLIEST.name());

	private final Backpressure backpressure = new Backpressure();

	private final PauseRequest pauseRequest = new PauseRequest(mock(Workers.class));

	private final PauseRequest.Consumption pauses = this.pauseRequest.consumption();

	private final PartitionWork full = work(P0, 4);

	private final PartitionWork empty = work(P1, 4);

	BackpressureTests() {
		this.consumer.assign(List.of(P0, P1));
		this.full.barrierOpen = true;
		this.empty.barrierOpen = true;
		for (int offset = 0; offset < 4; offset++) {
			this.full.take(task(this.full, offset, "k" + offset));
		}
	}

	@Test
	void aPartitionAtItsBoundIsPausedAndResumedAtHalfOfIt() {
		apply(List.of(this.full, this.empty), false);
		assertThat(this.consumer.paused()).containsExactly(P0);
		assertThat(this.backpressure.awaitRoom(List.of(this.full, this.empty), Duration.ofSeconds(1), (work) -> false,
				() -> true))
			.as("some partitions wait for room: a brief poll")
			.isEqualTo(Backpressure.BRIEF_POLL);
		Records.done(this.full, task(this.full, 0, "k0"));
		apply(List.of(this.full, this.empty), false);
		assertThat(this.consumer.paused()).containsExactly(P0);
		Records.done(this.full, task(this.full, 1, "k1"));
		apply(List.of(this.full, this.empty), false);
		assertThat(this.consumer.paused()).isEmpty();
		assertThat(this.backpressure.awaitRoom(List.of(this.full, this.empty), Duration.ofSeconds(1), (work) -> false,
				() -> true))
			.isEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void aStoppedPartitionOrOneBehindItsBarrierIsNotResumed() {
		apply(List.of(this.full), false);
		this.full.stopped = "a record can go nowhere";
		Records.done(this.full, task(this.full, 0, "k0"));
		Records.done(this.full, task(this.full, 1, "k1"));
		apply(List.of(this.full), false);
		assertThat(this.consumer.paused()).containsExactly(P0);
		assertThat(this.full.boundPaused).isFalse();
	}

	@Test
	void nothingIsResumedWhileTheListenerIsHeldPaused() {
		apply(List.of(this.full), false);
		Records.done(this.full, task(this.full, 0, "k0"));
		Records.done(this.full, task(this.full, 1, "k1"));
		apply(List.of(this.full), true);
		assertThat(this.consumer.paused()).as("every partition, for the application's pause")
			.containsExactlyInAnyOrder(P0, P1);
		assertThat(this.full.boundPaused).isFalse();
	}

	@Test
	void recordsPolledPastTheBoundAreHeldBackAndTakenInOrderBeforeThePartitionResumes() {
		List<Long> taken = new ArrayList<>();
		ToIntBiFunction<PartitionWork, List<Delivery>> take = recording(taken);
		this.empty.take(task(this.empty, 0, "k0"));
		this.empty.take(task(this.empty, 1, "k1"));
		this.empty.take(task(this.empty, 2, "k2"));
		this.backpressure.offer(this.empty, records(P1, 3, 6), take);
		settle(false);
		assertThat(taken).containsExactly(3L);
		assertThat(this.consumer.paused()).containsExactly(P1);
		assertThat(!this.empty.heldBack.isEmpty()).isTrue();
		this.backpressure.offer(this.empty, records(P1, 7, 7), take);
		assertThat(taken).as("behind those held back, whatever the room").containsExactly(3L);

		Records.done(this.empty, task(this.empty, 0, "k0"));
		this.backpressure.takeHeldBack(List.of(this.empty), false, take);
		assertThat(taken).as("room for one: the next held back is taken, before the partition drains to half")
			.containsExactly(3L, 4L);
		Records.done(this.empty, task(this.empty, 1, "k1"));
		this.backpressure.takeHeldBack(List.of(this.empty), false, take);
		apply(List.of(this.empty), false);
		assertThat(taken).containsExactly(3L, 4L, 5L);
		assertThat(this.consumer.paused()).as("full again, and records still held back").containsExactly(P1);

		Records.done(this.empty, task(this.empty, 2, "k2"));
		Records.done(this.empty, task(this.empty, 3, "k3"));
		this.backpressure.takeHeldBack(List.of(this.empty), false, take);
		apply(List.of(this.empty), false);
		assertThat(taken).containsExactly(3L, 4L, 5L, 6L, 7L);
		assertThat(!this.empty.heldBack.isEmpty()).isFalse();
		assertThat(this.consumer.paused()).as("four in flight: not yet drained to half").containsExactly(P1);
		Records.done(this.empty, task(this.empty, 4, "k4"));
		Records.done(this.empty, task(this.empty, 5, "k5"));
		apply(List.of(this.empty), false);
		assertThat(this.consumer.paused()).as("resumed once nothing is held back and it has room").isEmpty();
	}

	@Test
	void recordsHeldBackWaitWhileTheListenerIsHeldPausedOrThePartitionStopped() {
		ToIntBiFunction<PartitionWork, List<Delivery>> take = recording(new ArrayList<>());
		this.backpressure.offer(this.full, records(P0, 4, 4), take);
		Records.done(this.full, task(this.full, 0, "k0"));
		Records.done(this.full, task(this.full, 1, "k1"));

		this.backpressure.takeHeldBack(List.of(this.full), true, take);
		apply(List.of(this.full), true);
		assertThat(!this.full.heldBack.isEmpty()).isTrue();
		assertThat(this.full.boundPaused).as("stays paused for the record it holds back").isTrue();

		this.full.stopped = "a record can go nowhere";
		this.backpressure.takeHeldBack(List.of(this.full), false, take);
		apply(List.of(this.full), false);
		assertThat(!this.full.heldBack.isEmpty()).isTrue();
		assertThat(this.consumer.paused()).containsExactly(P0);
	}

	@Test
	void whilePartitionStaysPausedAtItsBoundThePollIsBriefThoughItWasNotFullWhenTheLoopLookedForRoom() {
		ToIntBiFunction<PartitionWork, List<Delivery>> take = recording(new ArrayList<>());
		this.backpressure.offer(this.full, records(P0, 4, 7), take);
		Records.done(this.full, task(this.full, 0, "k0"));
		Records.done(this.full, task(this.full, 1, "k1"));
		assertThat(this.backpressure.awaitRoom(List.of(this.full, this.empty), Duration.ofSeconds(1), (work) -> false,
				() -> true))
			.as("drained to half when the loop looked")
			.isEqualTo(Duration.ofSeconds(1));
		this.backpressure.takeHeldBack(List.of(this.full, this.empty), false, take);
		apply(List.of(this.full, this.empty), false);
		assertThat(this.consumer.paused()).as("full again with what it held back").containsExactly(P0);
		assertThat(Backpressure.pollTimeout(List.of(this.full, this.empty), Duration.ofSeconds(1)))
			.as("its workers cannot wake a poll: brief, not the whole timeout")
			.isEqualTo(Backpressure.BRIEF_POLL);

		for (long offset = 2; offset < 6; offset++) {
			Records.done(this.full, task(this.full, offset, "k" + offset));
		}
		this.backpressure.takeHeldBack(List.of(this.full, this.empty), false, take);
		Records.done(this.full, task(this.full, 6, "k6"));
		Records.done(this.full, task(this.full, 7, "k7"));
		apply(List.of(this.full, this.empty), false);
		assertThat(this.consumer.paused()).isEmpty();
		assertThat(Backpressure.pollTimeout(List.of(this.full, this.empty), Duration.ofSeconds(1)))
			.isEqualTo(Duration.ofSeconds(1));
		assertThat(Backpressure.pollTimeout(List.of(this.full), Duration.ofMillis(5)))
			.as("never longer than the configured timeout")
			.isEqualTo(Duration.ofMillis(5));
	}

	@Test
	void aPollThatFillsItsPartitionMarksItPausedAtOnceSoThatTheWorkersDrainingItWakeThePollLoop() {
		List<Long> taken = new ArrayList<>();
		this.backpressure.offer(this.empty, records(P1, 0, 3), recording(taken));
		assertThat(taken).containsExactly(0L, 1L, 2L, 3L);
		assertThat(!this.empty.heldBack.isEmpty()).isFalse();
		assertThat(this.empty.boundPaused).as("full: marked now, not a poll later").isTrue();
		settle(false);
		assertThat(this.consumer.paused()).as("paused by the settling before the next poll").containsExactly(P1);
	}

	@Test
	void aPausedPartitionThatHasDrainedToHalfIsNotWaitedFor() {
		apply(List.of(this.full), false);
		Records.done(this.full, task(this.full, 0, "k0"));
		Records.done(this.full, task(this.full, 1, "k1"));
		AtomicInteger waits = new AtomicInteger();
		assertThat(this.backpressure.awaitRoom(List.of(this.full), Duration.ofMinutes(5), (work) -> true,
				() -> waits.incrementAndGet() > 0))
			.as("no partition is full any more: a whole poll")
			.isEqualTo(Duration.ofMinutes(5));
		assertThat(waits).as("it did not wait for the room it has").hasValue(0);
	}

	@Test
	void aPartitionWithRoomForTheRecordsItHoldsBackIsNotWaitedForThoughNotDrainedToHalf() {
		PartitionWork work = work(P0, 16);
		work.barrierOpen = true;
		List<Long> taken = new ArrayList<>();
		this.backpressure.offer(work, records(P0, 0, 17), recording(taken));
		assertThat(work.heldBack.size()).isEqualTo(2);
		AtomicInteger waits = new AtomicInteger();
		assertThat(work.canTakeMore()).isFalse();

		Records.done(work, task(work, 0, "k0"));
		assertThat(work.canTakeMore()).as("room for one of the two it holds back: an eighth of 16 is 2").isFalse();
		Records.done(work, task(work, 1, "k1"));
		assertThat(work.canTakeMore()).as("room for both, 14 in flight: far from half").isTrue();
		assertThat(this.backpressure.awaitRoom(List.of(work), Duration.ofMinutes(5), (w) -> true,
				() -> waits.incrementAndGet() > 0))
			.as("not full: the records held back are taken before the poll")
			.isEqualTo(Duration.ofMinutes(5));
		assertThat(waits).as("it did not wait for the room it has").hasValue(0);
		this.backpressure.takeHeldBack(List.of(work), false, recording(taken));
		assertThat(taken).hasSize(18);
		assertThat(work.canTakeMore()).as("full again, nothing held back").isFalse();
	}

	@Test
	void aPartitionThatResumesNearItsBoundResumesOnceAnEighthOfItIsFree() {
		PartitionWork work = new PartitionWork(P0, new RetryContainer.Route(null, null), 16, 14, null);
		work.barrierOpen = true;
		this.backpressure.offer(work, records(P0, 0, 15), recording(new ArrayList<>()));
		this.backpressure.mark(List.of(work));
		assertThat(work.boundPaused).isTrue();
		Records.done(work, task(work, 0, "k0"));
		this.backpressure.mark(List.of(work));
		assertThat(work.boundPaused).as("15 in flight").isTrue();
		Records.done(work, task(work, 1, "k1"));
		this.backpressure.mark(List.of(work));
		assertThat(work.boundPaused).as("14 in flight: resumed, not at 8").isFalse();
	}

	/**
	 * As the poll loop does before a poll: marks the partitions at their bound, then
	 * settles the consumer's pauses over both partitions, with the listener held paused
	 * or not.
	 */
	private void apply(List<PartitionWork> partitions, boolean held) {
		this.backpressure.mark(partitions);
		settle(held);
	}

	private void settle(boolean held) {
		if (held) {
			this.pauseRequest.pause();
		}
		else {
			this.pauseRequest.resume();
		}
		this.pauses.settle(this.consumer, List.of(this.full, this.empty),
				new ContainerEvents(mock(RetryContainer.class), (event) -> {
				}, null));
	}

	private static List<Delivery> records(TopicPartition tp, long first, long last) {
		List<Delivery> records = new ArrayList<>();
		for (long offset = first; offset <= last; offset++) {
			records.add(record(tp, offset, "k" + offset));
		}
		return records;
	}

	/** Takes records as the container does, noting the offsets taken. */
	private static ToIntBiFunction<PartitionWork, List<Delivery>> recording(List<Long> taken) {
		return (work, records) -> {
			int count = work.takeAll(records, new ArrayList<>(), new ArrayList<>());
			records.subList(0, count).forEach((record) -> taken.add(record.offset()));
			return count;
		};
	}

	@Test
	void whenTheOtherPartitionsHaveNothingToFetchThePollLoopWaitsForRoomInsteadOfPolling() {
		apply(List.of(this.full, this.empty), false);
		AtomicInteger waits = new AtomicInteger();
		assertThat(this.backpressure.awaitRoom(List.of(this.full, this.empty), Duration.ofSeconds(1), (work) -> false,
				() -> waits.incrementAndGet() > 0))
			.isEqualTo(Backpressure.BRIEF_POLL);
		assertThat(waits).as("another partition may have records: the poll itself is brief").hasValue(0);

		assertThat(this.backpressure.awaitRoom(List.of(this.full, this.empty), Duration.ofSeconds(1), (work) -> true,
				() -> waits.incrementAndGet() > 0))
			.isEqualTo(Backpressure.BRIEF_POLL);
		assertThat(waits.get()).as("the others have caught up: it waited for room, a brief poll at most").isPositive();
	}

	@Test
	void whenEveryPartitionIsFullThePollWaitsForTheFirstToMakeRoom() throws InterruptedException {
		apply(List.of(this.full), false);
		CountDownLatch waiting = new CountDownLatch(1);
		Thread worker = new Thread(() -> {
			try {
				waiting.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			Records.done(this.full, task(this.full, 0, "k0"));
			Records.done(this.full, task(this.full, 1, "k1"));
			this.backpressure.recordDone(this.full);
		});
		worker.start();
		long start = System.nanoTime();
		Duration timeout = this.backpressure.awaitRoom(List.of(this.full), Duration.ofMinutes(5), (work) -> false,
				() -> {
					waiting.countDown(); // the loop waits now: the worker drains the
											// partition
					return true;
				});
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("woken by the worker")
			.isLessThan(Duration.ofMinutes(5));
		assertThat(timeout).isEqualTo(Backpressure.BRIEF_POLL);
		worker.join();
	}

}
