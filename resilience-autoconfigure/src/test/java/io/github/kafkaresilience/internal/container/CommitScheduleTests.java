package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.internal.container.offsets.CommittableOffsets;
import io.github.kafkaresilience.internal.container.offsets.WritesUnderWay;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.internal.ladder.Step;
import io.github.kafkaresilience.internal.support.MovingClock;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static io.github.kafkaresilience.internal.container.Records.task;
import static io.github.kafkaresilience.internal.container.Records.work;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.awaitility.Awaitility.await;

/**
 * The container commits the done offsets every commit interval, and the last ones of
 * partitions it lets go of once their writes under way have settled (for no longer than
 * the shutdown timeout); a failed commit goes no further, but for a wakeup outside
 * shutdown.
 */
class CommitScheduleTests {

	private static final TopicPartition P0 = new TopicPartition("orders", 0);

	private static final TopicPartition P1 = new TopicPartition("orders", 1);

	private static final Duration COMMIT_INTERVAL = Duration.ofSeconds(5);

	/** Long enough for the writes of a test to settle in. */
	private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);

	private final FailingConsumer consumer = new FailingConsumer();

	private final Partitions partitions = new Partitions();

	private final WritesUnderWay settling = new WritesUnderWay();

	private final MovingClock clock = new MovingClock(Instant.ofEpochSecond(1_000));

	private final CommitSchedule commits = commits(SHUTDOWN_TIMEOUT);

	private final PartitionWork p0 = work(P0, 10);

	private final PartitionWork p1 = work(P1, 10);

	CommitScheduleTests() {
		this.partitions.add(this.p0);
		this.partitions.add(this.p1);
		this.consumer.assign(List.of(P0, P1));
	}

	@Test
	void aCommitIsDueEveryCommitInterval() {
		assertThat(this.commits.due()).as("never committed").isTrue();
		this.commits.commit(this.consumer, List.of(P0, P1));
		assertThat(this.commits.due()).isFalse();
		this.clock.advance(COMMIT_INTERVAL.toMillis() - 1);
		assertThat(this.commits.due()).isFalse();
		this.clock.advance(1);
		assertThat(this.commits.due()).isTrue();
	}

	@Test
	void onlyTheGivenPartitionsAreCommittedUpToTheirFirstRecordNotDone() {
		done(this.p0, 0, 1);
		this.p0.take(task(this.p0, 2, "k2"));
		done(this.p1, 0);
		this.commits.commit(this.consumer, List.of(P0));
		assertThat(committed()).containsExactly(Map.entry(P0, new OffsetAndMetadata(2)));
	}

	@Test
	void aFailedCommitIsLoggedAndTheNextCommitsTheSameOffsets() {
		done(this.p0, 0);
		this.consumer.failure = new KafkaException("the coordinator moved");
		assertThatNoException().isThrownBy(() -> this.commits.commit(this.consumer, List.of(P0)));
		assertThat(committed()).isEmpty();
		this.consumer.failure = null;
		this.commits.commit(this.consumer, List.of(P0));
		assertThat(committed()).containsExactly(Map.entry(P0, new OffsetAndMetadata(1)));
	}

	@Test
	void aCommitRefusedForARebalanceUnderWayIsMadeByTheNextOne() {
		done(this.p0, 0);
		this.consumer.failure = new RebalanceInProgressException("rebalancing");
		this.consumer.once = true;
		assertThatNoException().isThrownBy(() -> this.commits.commit(this.consumer, List.of(P0)));
		assertThat(committed()).isEmpty();
		this.commits.commit(this.consumer, List.of(P0));
		assertThat(committed()).containsExactly(Map.entry(P0, new OffsetAndMetadata(1)));
	}

	@Test
	void aWakeupEndsACommitButNotTheLastOneOnShutdown() {
		done(this.p0, 0);
		this.consumer.failure = new WakeupException();
		assertThatExceptionOfType(WakeupException.class)
			.isThrownBy(() -> this.commits.commit(this.consumer, List.of(P0)));
		assertThatExceptionOfType(WakeupException.class)
			.isThrownBy(() -> this.commits.revoking(this.consumer, List.of(P0)));
		assertThatNoException().isThrownBy(() -> this.commits.shutdown(this.consumer, List.of(P0, P1)));
	}

	/**
	 * A wakeup asked for while the poll loop was not in a poll (the container stopping)
	 * is raised by the consumer's next blocking call, the last commit: that commit is
	 * made all the same, so that a clean stop hands on no record to run again.
	 */
	@Test
	void aWakeupLeftPendingByTheStopDoesNotCostTheLastCommit() {
		done(this.p0, 0, 1);
		this.consumer.failure = new WakeupException();
		this.consumer.once = true;
		this.commits.shutdown(this.consumer, List.of(P0));
		assertThat(this.consumer.committed(Set.of(P0)).get(P0).offset()).isEqualTo(2);
	}

	@Test
	void aRevokedPartitionsLastCommitWaitsForItsWritesUnderWay() {
		RecordTask task = task(this.p0, 0, "k0");
		this.p0.take(task);
		CompletableFuture<Void> writes = new CompletableFuture<>();
		this.settling.add(writes, P0);
		Thread committing = Thread.currentThread();
		Thread writer = new Thread(() -> {
			await().atMost(SHUTDOWN_TIMEOUT)
				.pollInterval(Duration.ofMillis(5))
				.until(() -> committing.getState() == Thread.State.TIMED_WAITING);
			Records.done(this.p0, task);
			writes.complete(null);
		});
		writer.start();
		this.commits.revoking(this.consumer, List.of(P0));
		assertThat(committed()).containsExactly(Map.entry(P0, new OffsetAndMetadata(1)));
	}

	@Test
	void theWritesOfOtherPartitionsDoNotHoldUpARevocation() {
		done(this.p0, 0);
		this.settling.add(new CompletableFuture<>(), P1);
		long start = System.nanoTime();
		this.commits.revoking(this.consumer, List.of(P0));
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(SHUTDOWN_TIMEOUT);
		assertThat(committed()).containsExactly(Map.entry(P0, new OffsetAndMetadata(1)));
	}

	@Test
	void onShutdownWritesThatDoNotSettleInTheShutdownTimeoutAreLetGo() {
		Duration shutdownTimeout = Duration.ofMillis(300);
		done(this.p0, 0);
		this.settling.add(new CompletableFuture<>(), P1);
		long start = System.nanoTime();
		commits(shutdownTimeout).shutdown(this.consumer, List.of(P0, P1));
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(shutdownTimeout)
			.isLessThan(SHUTDOWN_TIMEOUT);
		assertThat(committed()).containsExactly(Map.entry(P0, new OffsetAndMetadata(1)));
	}

	@Test
	void theCommitOfAnIntervalNeedNotWaitButTheLastOfARevocationOrAShutdownDoes() {
		done(this.p0, 0);
		done(this.p1, 0, 1);
		List<String> calls = new CopyOnWriteArrayList<>();
		OffsetCommitter recording = new OffsetCommitter() {

			@Override
			public Step runStep(Delivery record, Supplier<Step> step, CommittableOffsets offsets) {
				return step.get();
			}

			@Override
			public void commit(Consumer<byte[], byte[]> consumer, CommittableOffsets offsets) {
				calls.add("now " + described(offsets));
			}

			@Override
			public void commitSoon(Consumer<byte[], byte[]> consumer, CommittableOffsets offsets) {
				calls.add("soon " + described(offsets));
			}

			@Override
			public void close() {
			}

		};
		CommitSchedule commits = commits(recording, SHUTDOWN_TIMEOUT);
		commits.commit(this.consumer, List.of(P0, P1));
		commits.revoking(this.consumer, List.of(P0));
		commits.shutdown(this.consumer, List.of(P1));
		assertThat(calls).containsExactly("soon [orders-0@1, orders-1@2]", "now [orders-0@1]", "now [orders-1@2]");
	}

	private static List<String> described(CommittableOffsets offsets) {
		return offsets.committable()
			.entrySet()
			.stream()
			.map((entry) -> entry.getKey() + "@" + entry.getValue().offset())
			.sorted()
			.toList();
	}

	private CommitSchedule commits(Duration shutdownTimeout) {
		return commits(new OffsetCommitter.WithConsumer(), shutdownTimeout);
	}

	private CommitSchedule commits(OffsetCommitter committer, Duration shutdownTimeout) {
		return new CommitSchedule("orders", committer, new ContainerOffsets("orders", this.partitions), this.settling,
				new ContainerSettings(1, 10, Duration.ofMillis(100), COMMIT_INTERVAL, shutdownTimeout,
						Duration.ofSeconds(1), Duration.ofSeconds(10), false),
				this.clock);
	}

	private static void done(PartitionWork work, long... offsets) {
		for (long offset : offsets) {
			RecordTask task = task(work, offset, "k" + offset);
			work.take(task);
			Records.done(work, task);
		}
	}

	private Map<TopicPartition, OffsetAndMetadata> committed() {
		return this.consumer.committed(Set.of(P0, P1));
	}

	/** A consumer whose commits fail while told to. */
	private static final class FailingConsumer extends MockConsumer<byte[], byte[]> {

		@Nullable RuntimeException failure;

		/** Whether the failure is thrown once only, as a pending wakeup is. */
		boolean once;

		FailingConsumer() {
			super(AutoOffsetResetStrategy.EARLIEST.name());
		}

		@Override
		public synchronized void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
			RuntimeException failure = this.failure;
			if (failure != null) {
				if (this.once) {
					this.failure = null;
				}
				throw failure;
			}
			super.commitSync(offsets);
		}

	}

}
