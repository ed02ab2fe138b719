package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;

import static io.github.kafkaresilience.internal.container.Records.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;

/**
 * The rebalance callbacks behind the sync barrier: an assigned partition stays paused
 * until the lock view has caught up and starts at its committed offset; a revoked one is
 * committed before it is dropped, whatever the application's listener does.
 */
class BarrierRebalanceListenerTests {

	private static final TopicPartition MAIN = new TopicPartition("orders", 0);

	private static final TopicPartition STAGE = new TopicPartition("orders.billing.retry-1", 0);

	private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>(AutoOffsetResetStrategy.NONE.name());

	private final LockRegistry registry = mock(LockRegistry.class);

	private final CompletableFuture<Void> caughtUp = new CompletableFuture<>();

	private final Partitions partitions = new Partitions();

	private final List<String> events = new ArrayList<>();

	private final Queue<Runnable> pollThread = new ConcurrentLinkedQueue<>();

	private final Assignments assignments = new Assignments();

	private ConsumerAwareRebalanceListener user = new ConsumerAwareRebalanceListener() {
	};

	private ConsumerRebalanceListener listener() {
		return new SyncBarrier().rebalanceListener("test", this.consumer, this.partitions, this.assignments,
				new ConsumerAwareRebalanceListener() {

					@Override
					public void onPartitionsRevokedBeforeCommit(Consumer<?, ?> consumer, Collection<TopicPartition> p) {
						BarrierRebalanceListenerTests.this.events.add("user before commit");
						BarrierRebalanceListenerTests.this.user.onPartitionsRevokedBeforeCommit(consumer, p);
					}

					@Override
					public void onPartitionsRevokedAfterCommit(Consumer<?, ?> consumer, Collection<TopicPartition> p) {
						BarrierRebalanceListenerTests.this.events.add("user after commit");
					}

					@Override
					public void onPartitionsAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> p) {
						BarrierRebalanceListenerTests.this.events.add("user assigned");
					}

				});
	}

	@Test
	void anAssignedPartitionStaysPausedUntilTheLockViewCaughtUpAndOpensOnThePollThread() {
		given(this.registry.catchUp(0)).willReturn(this.caughtUp);
		this.consumer.assign(List.of(MAIN));
		this.consumer.commitSync(Map.of(MAIN, new OffsetAndMetadata(40)));
		listener().onPartitionsAssigned(List.of(MAIN));
		PartitionWork work = this.partitions.get(MAIN);
		assertThat(work).isNotNull();
		assertThat(this.consumer.paused()).containsExactly(MAIN);
		assertThat(this.consumer.position(MAIN)).isEqualTo(40);
		assertThat(this.events).containsExactly("changed assigned [orders-0]", "user assigned");
		this.caughtUp.complete(null);
		assertThat(work.barrierOpen).as("opens only on the poll thread").isFalse();
		runPollThread();
		assertThat(work.barrierOpen).isTrue();
		assertThat(this.consumer.paused()).isEmpty();
		assertThat(this.events).last().isEqualTo("opened orders-0");
		// a replay admitted now goes behind the committed offset
		AdmissionTask admission = work
			.queueAdmission(Lock.pendingReplay("L", Bytes.wrap(new byte[] { 1 }), 0, 3, Instant.EPOCH));
		assertThat(admission).isNotNull();
		assertThat(admission.lastTaken).isEqualTo(39);
	}

	@Test
	void aBarrierThatOpensWhileTheListenerIsHeldPausedLeavesThePartitionPaused() {
		given(this.registry.catchUp(0)).willReturn(this.caughtUp);
		this.consumer.assign(List.of(MAIN));
		this.consumer.commitSync(Map.of(MAIN, new OffsetAndMetadata(0)));
		this.assignments.pauseRequest.pause();
		listener().onPartitionsAssigned(List.of(MAIN));
		this.caughtUp.complete(null);
		runPollThread();
		assertThat(this.partitions.get(MAIN).barrierOpen).isTrue();
		assertThat(this.consumer.paused()).containsExactly(MAIN);
	}

	@Test
	void aBarrierThatFailsClosesAgainAndAPartitionRevokedMeanwhileNeverOpens() {
		CompletableFuture<Void> failed = CompletableFuture.failedFuture(new IllegalStateException("tailer down"));
		given(this.registry.catchUp(0)).willReturn(failed, this.caughtUp);
		this.consumer.assign(List.of(MAIN));
		this.consumer.commitSync(Map.of(MAIN, new OffsetAndMetadata(0)));
		ConsumerRebalanceListener listener = listener();
		listener.onPartitionsAssigned(List.of(MAIN));
		runPollThread();
		PartitionWork work = this.partitions.get(MAIN);
		assertThat(work.barrierOpen).isFalse();
		assertThat(this.consumer.paused()).containsExactly(MAIN);
		listener.onPartitionsLost(List.of(MAIN));
		this.caughtUp.complete(null);
		runPollThread();
		assertThat(work.barrierOpen).isFalse();
		assertThat(this.events).doesNotContain("opened orders-0").contains("changed lost [orders-0]");
	}

	@Test
	void aRevokedPartitionIsCommittedBeforeItIsDroppedEvenWhenTheApplicationsListenerThrows() {
		given(this.registry.catchUp(0)).willReturn(this.caughtUp);
		this.consumer.assign(List.of(MAIN));
		this.consumer.commitSync(Map.of(MAIN, new OffsetAndMetadata(5)));
		ConsumerRebalanceListener listener = listener();
		listener.onPartitionsAssigned(List.of(MAIN));
		PartitionWork work = this.partitions.get(MAIN);
		RecordTask five = task(work, 5, "a");
		RecordTask six = task(work, 6, "b");
		work.take(five);
		work.take(six);
		Records.done(work, five);
		this.user = new ConsumerAwareRebalanceListener() {

			@Override
			public void onPartitionsRevokedBeforeCommit(Consumer<?, ?> consumer, Collection<TopicPartition> p) {
				throw new IllegalStateException("the application's bug");
			}

		};
		this.events.clear();
		listener.onPartitionsRevoked(List.of(MAIN));
		assertThat(this.events).containsExactly("user before commit", "revoking [orders-0] at 6",
				"changed revoked [orders-0]", "user after commit");
		assertThat(work.isRevoked()).isTrue();
		assertThat(this.partitions.get(MAIN)).isNull();
		// assigned back before any commit: it restarts where it was let go
		assertThat(this.partitions.takeDroppedAt(MAIN)).isEqualTo(6);
	}

	@Test
	void aRetryTopicNeverCommittedOnIsReadFromTheBeginningAndAMainTopicPartitionIsLeftToTheResetPolicy() {
		given(this.registry.catchUp(0)).willReturn(this.caughtUp);
		this.consumer.assign(List.of(MAIN, STAGE));
		this.consumer.updateBeginningOffsets(Map.of(MAIN, 0L, STAGE, 0L));
		listener().onPartitionsAssigned(List.of(MAIN, STAGE));
		assertThat(this.consumer.position(STAGE)).isZero();
		assertThat(this.assignments.askedFromBeginning).containsExactlyInAnyOrder(MAIN, STAGE);
	}

	/**
	 * Runs the actions queued for the poll thread, then settles the pauses, as the poll
	 * loop does before a poll.
	 */
	private void runPollThread() {
		for (Runnable action; (action = this.pollThread.poll()) != null;) {
			action.run();
		}
		this.assignments.settlePauses();
	}

	private final class Assignments implements BarrierRebalanceListener.Assignments {

		final Set<TopicPartition> askedFromBeginning = new HashSet<>();

		final PauseRequest pauseRequest = new PauseRequest(mock(Workers.class));

		private final PauseRequest.Consumption pauses = this.pauseRequest.consumption();

		@Override
		public PartitionWork assign(TopicPartition partition) {
			return new PartitionWork(partition,
					new RetryContainer.Route(null, BarrierRebalanceListenerTests.this.registry), 10);
		}

		@Override
		public boolean readFromBeginning(TopicPartition partition) {
			this.askedFromBeginning.add(partition);
			return partition.equals(STAGE);
		}

		@Override
		public void revoking(Collection<TopicPartition> revoked) {
			PartitionWork work = BarrierRebalanceListenerTests.this.partitions.get(MAIN);
			BarrierRebalanceListenerTests.this.events
				.add("revoking " + revoked + " at " + work.committable().orElse(-1));
		}

		@Override
		public void changed(String kind, Collection<TopicPartition> changed) {
			BarrierRebalanceListenerTests.this.events.add("changed " + kind + " " + changed);
		}

		@Override
		public void opened(PartitionWork work, Duration waited) {
			BarrierRebalanceListenerTests.this.events.add("opened " + work.partition);
		}

		@Override
		public void settlePauses() {
			this.pauses.settle(BarrierRebalanceListenerTests.this.consumer,
					BarrierRebalanceListenerTests.this.partitions.all(),
					new ContainerEvents(mock(RetryContainer.class), (event) -> {
					}, null));
		}

		@Override
		public void onPollThread(Runnable action) {
			BarrierRebalanceListenerTests.this.pollThread.add(action);
		}

	}

}
