package io.github.kafkaresilience.internal.container;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.mockito.InOrder;

import org.springframework.kafka.event.ConsumerPausedEvent;
import org.springframework.kafka.event.ConsumerResumedEvent;

import static io.github.kafkaresilience.internal.container.Records.work;
import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.mockito.Mockito.verifyNoMoreInteractions;

/**
 * The one place where a consumer's partitions are paused and resumed: each partition is
 * paused while it has a reason (its barrier closed, its bound reached, stopped) and
 * resumed when it has none; the application's pause request holds the workers and pauses
 * every assigned partition, a partition assigned meanwhile too, with one paused event;
 * resuming releases the workers and resumes only the partitions free to be fetched from,
 * with a resumed event.
 */
class PauseRequestTests {

	private static final TopicPartition OPEN = new TopicPartition("orders", 0);

	private static final TopicPartition BEHIND_BARRIER = new TopicPartition("orders", 1);

	private static final TopicPartition AT_BOUND = new TopicPartition("orders", 2);

	private static final TopicPartition STOPPED = new TopicPartition("orders", 3);

	private static final TopicPartition LATE = new TopicPartition("orders", 4);

	private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>(AutoOffsetResetStrategy.EARLIEST.name());

	private final Workers workers = mock(Workers.class);

	private final PauseRequest request = new PauseRequest(this.workers);

	/** The request as the consumer carries it out. */
	private final PauseRequest.Consumption consumer0 = this.request.consumption();

	private final List<Object> published = new ArrayList<>();

	private final ContainerEvents events = new ContainerEvents(mock(RetryContainer.class), this.published::add, null);

	private final List<PartitionWork> partitions = new ArrayList<>();

	PauseRequestTests() {
		assigned(OPEN, true);
		assigned(BEHIND_BARRIER, false);
		assigned(AT_BOUND, true).boundPaused = true;
		assigned(STOPPED, true).stopped = "a record can go nowhere";
		this.consumer.assign(List.of(OPEN, BEHIND_BARRIER, AT_BOUND, STOPPED));
		this.consumer.pause(List.of(BEHIND_BARRIER, AT_BOUND, STOPPED));
	}

	@Test
	void withoutARequestNothingIsPausedOrResumed() {
		this.consumer0.settle(this.consumer, this.partitions, this.events);
		assertThat(this.consumer.paused()).containsExactlyInAnyOrder(BEHIND_BARRIER, AT_BOUND, STOPPED);
		assertThat(this.consumer0.held()).isFalse();
		assertThat(this.published).isEmpty();
		verifyNoInteractions(this.workers);
	}

	@Test
	void aPartitionIsPausedWhileItHasAReasonAndResumedWhenItHasNone() {
		PartitionWork open = this.partitions.get(0);
		PartitionWork behindBarrier = this.partitions.get(1);
		PartitionWork atBound = this.partitions.get(2);
		this.consumer.resume(List.of(BEHIND_BARRIER, AT_BOUND, STOPPED));
		this.consumer0.settle(this.consumer, this.partitions, this.events);
		assertThat(this.consumer.paused()).containsExactlyInAnyOrder(BEHIND_BARRIER, AT_BOUND, STOPPED);
		behindBarrier.barrierOpen = true;
		atBound.boundPaused = false;
		open.boundPaused = true;
		this.consumer0.settle(this.consumer, this.partitions, this.events);
		assertThat(this.consumer.paused()).containsExactlyInAnyOrder(OPEN, STOPPED);
		assertThat(this.published).as("no event: those are the partitions' own pauses").isEmpty();
	}

	@Test
	void pausingHoldsTheWorkersAndPausesEveryAssignedPartitionWithOnePausedEvent() {
		this.request.pause();
		assertThat(this.request.isRequested()).isTrue();
		assertThat(this.consumer0.held()).as("not applied by the poll thread yet").isFalse();
		this.consumer0.settle(this.consumer, this.partitions, this.events);
		this.consumer0.settle(this.consumer, this.partitions, this.events);
		assertThat(this.consumer.paused()).containsExactlyInAnyOrder(OPEN, BEHIND_BARRIER, AT_BOUND, STOPPED);
		assertThat(this.consumer0.held()).isTrue();
		assertThat(this.published).singleElement()
			.isInstanceOfSatisfying(ConsumerPausedEvent.class, (event) -> assertThat(event.getPartitions())
				.containsExactlyInAnyOrder(OPEN, BEHIND_BARRIER, AT_BOUND, STOPPED));
		verify(this.workers).hold(Holds.APPLICATION);
		verifyNoMoreInteractions(this.workers);
	}

	@Test
	void aPartitionAssignedOrResumedWhilePausedIsPausedTooWithoutAnotherEvent() {
		this.request.pause();
		this.consumer0.settle(this.consumer, this.partitions, this.events);
		assigned(LATE, true);
		this.consumer.assign(List.of(OPEN, BEHIND_BARRIER, AT_BOUND, STOPPED, LATE));
		this.consumer.resume(List.of(OPEN));
		this.consumer0.settle(this.consumer, this.partitions, this.events);
		assertThat(this.consumer.paused()).containsExactlyInAnyOrder(OPEN, BEHIND_BARRIER, AT_BOUND, STOPPED, LATE);
		assertThat(this.published).hasSize(1);
	}

	@Test
	void resumingReleasesTheWorkersAndResumesOnlyThePartitionsThatMayBeFetchedFrom() {
		this.request.pause();
		this.consumer0.settle(this.consumer, this.partitions, this.events);
		this.request.resume();
		assertThat(this.request.isRequested()).isFalse();
		assertThat(this.consumer.paused()).as("until the poll thread applies it").contains(OPEN);
		this.consumer0.settle(this.consumer, this.partitions, this.events);
		assertThat(this.consumer.paused()).containsExactlyInAnyOrder(BEHIND_BARRIER, AT_BOUND, STOPPED);
		assertThat(this.consumer0.held()).isFalse();
		assertThat(this.published).hasSize(2)
			.last()
			.isInstanceOfSatisfying(ConsumerResumedEvent.class,
					(event) -> assertThat(event.getPartitions()).containsExactly(OPEN));
		this.consumer0.settle(this.consumer, this.partitions, this.events);
		assertThat(this.published).as("resumed once").hasSize(2);
		InOrder order = inOrder(this.workers);
		order.verify(this.workers).hold(Holds.APPLICATION);
		order.verify(this.workers).release(Holds.APPLICATION);
	}

	@Test
	void clearingForgetsTheRequestAndTheConsumersOfTheNextRunStartUnpaused() {
		this.request.pause();
		this.consumer0.settle(this.consumer, this.partitions, this.events);
		this.request.clear();
		assertThat(this.request.isRequested()).isFalse();
		assertThat(this.request.consumption().held()).isFalse();
	}

	/**
	 * The main topics' consumer and the stages' each pause their own partitions for one
	 * request, each with its paused event, and resume them.
	 */
	@Test
	void eachConsumerOfTheContainerPausesAndResumesItsOwnPartitions() {
		MockConsumer<byte[], byte[]> retries = new MockConsumer<>(AutoOffsetResetStrategy.EARLIEST.name());
		TopicPartition stage = new TopicPartition("orders.retry.1s", 0);
		PartitionWork stageWork = work(stage, 10);
		stageWork.barrierOpen = true;
		retries.assign(List.of(stage));
		PauseRequest.Consumption ofRetries = this.request.consumption();
		this.request.pause();
		this.consumer0.settle(this.consumer, this.partitions, this.events);
		assertThat(ofRetries.held()).as("not applied by the stages' poll thread yet").isFalse();
		ofRetries.settle(retries, List.of(stageWork), this.events);
		assertThat(retries.paused()).containsExactly(stage);
		assertThat(this.published).hasSize(2);
		this.request.resume();
		ofRetries.settle(retries, List.of(stageWork), this.events);
		assertThat(retries.paused()).isEmpty();
		assertThat(this.consumer.paused()).as("until its own poll thread applies it").contains(OPEN);
	}

	private PartitionWork assigned(TopicPartition partition, boolean barrierOpen) {
		PartitionWork work = work(partition, 10);
		work.barrierOpen = barrierOpen;
		this.partitions.add(work);
		return work;
	}

}
