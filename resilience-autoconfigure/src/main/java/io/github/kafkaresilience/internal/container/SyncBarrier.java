package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.internal.lock.LockRegistry;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;

/**
 * The sync barrier applied when a partition of a main or retry topic is assigned: the
 * partition stays paused until this instance's lock tailer has read the matching lock
 * partition up to its end offset as of the assignment, so that no record is routed on an
 * out-of-date view of which keys are locked.
 * <p>
 * The barrier never blocks the rebalance callback: the consumer keeps polling (and so
 * keeps its group membership) while the partition is paused.
 * <p>
 * Each container subscribes with the {@link ConsumerRebalanceListener} this bean hands
 * out: it closes the barrier of every assigned partition, starts it at its committed
 * offset, and commits a revoked partition once its writes under way have finished; the
 * application's own rebalance listener runs inside it.
 *
 * @since 0.1.0
 */
public class SyncBarrier {

	/**
	 * Closes the barrier for a freshly assigned partition, which its consumer keeps
	 * paused until the barrier opens. Called on the consumer thread from the rebalance
	 * callback.
	 * @param partition the assigned partition
	 * @param registry the lock registry of the partition's main topic
	 * @return completes with the time waited once the partition may be resumed; the
	 * caller resumes it on the consumer thread
	 */
	public CompletableFuture<Duration> close(TopicPartition partition, LockRegistry registry) {
		long start = System.nanoTime();
		return registry.catchUp(partition.partition())
			.thenApply((ignored) -> Duration.ofNanos(System.nanoTime() - start));
	}

	/**
	 * The rebalance listener of a container's consumer, behind this barrier.
	 * @param id the listener id
	 * @param consumer the container's consumer
	 * @param partitions the container's partitions
	 * @param assignments what the callbacks do to the container
	 * @param userListener the application's rebalance listener, or {@code null}
	 */
	ConsumerRebalanceListener rebalanceListener(String id, Consumer<?, ?> consumer, Partitions partitions,
			BarrierRebalanceListener.Assignments assignments, @Nullable ConsumerAwareRebalanceListener userListener) {
		return new BarrierRebalanceListener(id, consumer, this, partitions, assignments, userListener);
	}

}
