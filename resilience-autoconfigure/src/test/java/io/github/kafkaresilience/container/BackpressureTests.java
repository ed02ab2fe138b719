package io.github.kafkaresilience.container;

import java.time.Duration;
import java.util.List;

import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import static io.github.kafkaresilience.container.Records.task;
import static io.github.kafkaresilience.container.Records.work;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A partition at its in-flight bound is paused, and resumed once drained to half of it if
 * its barrier is open and it was not stopped; the poll loop is told when there is room.
 */
class BackpressureTests {

	private static final TopicPartition P0 = new TopicPartition("orders", 0);

	private static final TopicPartition P1 = new TopicPartition("orders", 1);

	private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>(AutoOffsetResetStrategy.EARLIEST.name());

	private final Backpressure backpressure = new Backpressure();

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
		this.backpressure.apply(this.consumer, List.of(this.full, this.empty), false);
		assertThat(this.consumer.paused()).containsExactly(P0);
		assertThat(this.backpressure.awaitRoom(List.of(this.full, this.empty), Duration.ofSeconds(1), () -> true))
			.as("some partitions wait for room: a brief poll").isEqualTo(Backpressure.BRIEF_POLL);
		this.full.done(task(this.full, 0, "k0"));
		this.backpressure.apply(this.consumer, List.of(this.full, this.empty), false);
		assertThat(this.consumer.paused()).containsExactly(P0);
		this.full.done(task(this.full, 1, "k1"));
		this.backpressure.apply(this.consumer, List.of(this.full, this.empty), false);
		assertThat(this.consumer.paused()).isEmpty();
		assertThat(this.backpressure.awaitRoom(List.of(this.full, this.empty), Duration.ofSeconds(1), () -> true))
			.isEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void aStoppedPartitionOrOneBehindItsBarrierIsNotResumed() {
		this.backpressure.apply(this.consumer, List.of(this.full), false);
		this.full.stopped = "a record can go nowhere";
		this.full.done(task(this.full, 0, "k0"));
		this.full.done(task(this.full, 1, "k1"));
		this.backpressure.apply(this.consumer, List.of(this.full), false);
		assertThat(this.consumer.paused()).containsExactly(P0);
		assertThat(this.full.boundPaused).isFalse();
	}

	@Test
	void nothingIsResumedWhileTheListenerIsHeldPaused() {
		this.backpressure.apply(this.consumer, List.of(this.full), false);
		this.full.done(task(this.full, 0, "k0"));
		this.full.done(task(this.full, 1, "k1"));
		this.backpressure.apply(this.consumer, List.of(this.full), true);
		assertThat(this.consumer.paused()).containsExactly(P0);
		assertThat(this.full.boundPaused).isFalse();
	}

	@Test
	void whenEveryPartitionIsFullThePollWaitsForTheFirstToMakeRoom() throws InterruptedException {
		this.backpressure.apply(this.consumer, List.of(this.full), false);
		Thread worker = new Thread(() -> {
			this.full.done(task(this.full, 0, "k0"));
			this.full.done(task(this.full, 1, "k1"));
			this.backpressure.recordDone(this.full);
		});
		long start = System.nanoTime();
		worker.start();
		Duration timeout = this.backpressure.awaitRoom(List.of(this.full), Duration.ofMinutes(5), () -> true);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMinutes(5));
		assertThat(timeout).isEqualTo(Backpressure.BRIEF_POLL);
		worker.join();
	}

}
