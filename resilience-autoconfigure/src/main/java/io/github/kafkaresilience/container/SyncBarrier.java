package io.github.kafkaresilience.container;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.lock.LockRegistry;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * The sync barrier applied when a partition of a main or retry topic is assigned: the
 * partition stays paused until this instance's lock tailer has read the matching lock
 * partition up to its end offset as of the assignment, so that no record is routed on an
 * out-of-date view of which keys are locked.
 * <p>
 * The barrier never blocks the rebalance callback: the consumer keeps polling (and so keeps
 * its group membership) while the partition is paused.
 *
 * @since 0.1.0
 */
public class SyncBarrier {

	/**
	 * Closes the barrier for a freshly assigned partition. Called on the consumer thread from
	 * the rebalance callback.
	 * @param consumer the consumer the partition was assigned to
	 * @param partition the assigned partition
	 * @param registry the lock registry of the partition's main topic
	 * @return completes with the time waited once the partition may be resumed; the caller
	 * resumes it on the consumer thread
	 */
	public CompletableFuture<Duration> close(Consumer<?, ?> consumer, TopicPartition partition, LockRegistry registry) {
		long start = System.nanoTime();
		consumer.pause(List.of(partition));
		return registry.catchUp(partition.partition()).thenApply((ignored) -> Duration.ofNanos(System.nanoTime() - start));
	}

}
