package io.github.kafkaresilience.container;

import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The container that runs one {@code @OrderedRetryListener}, as an application sees it:
 * its figures, and pausing and resuming it. An {@code OrderedRetryContainerCustomizer} is
 * given one before it starts; the registry starts and stops it by the listener's id.
 *
 * @since 0.1.0
 */
public interface OrderedRetryContainer {

	/**
	 * What the container holds, for meters: records in memory, parked records and the
	 * deepest key (records of one key waiting in one partition, the sign of a hot key).
	 *
	 * @param inFlight records held in memory, running or waiting
	 * @param parked records parked: pending, not held, to be read again
	 * @param busiestPartitionInFlight records held by the partition that holds the most
	 * (what {@code max-in-flight-per-partition} bounds)
	 * @param busiestKeyDepth records of the busiest key of any partition, held or parked
	 */
	record Load(long inFlight, long parked, int busiestPartitionInFlight, int busiestKeyDepth) {
	}

	/** The listener's id. */
	String id();

	/** The topics this container consumes: main topics and their retry topics. */
	Set<String> topics();

	/** Whether the container runs: started and not stopped. */
	boolean isRunning();

	/**
	 * Stops handing out new records: the consumer's partitions are paused, records
	 * already running finish, and records waiting (for a due time, their key or the
	 * tailer) wait on until {@link #resume()}. Locks stay as they are, so every key keeps
	 * its order; the consumer keeps polling, so it stays in its group.
	 */
	void pause();

	/** Hands out records again after {@link #pause()}. */
	void resume();

	/** Whether {@link #pause()} was called and {@link #resume()} not since. */
	boolean isPauseRequested();

	/** The partitions assigned to this container's consumer now. */
	Set<TopicPartition> assignment();

	/**
	 * The records of an assigned partition not done yet: from the first one pending to
	 * the end of the partition as of the last fetch. For a stage topic this is its depth:
	 * retries waiting or running. Empty for a partition not assigned here or not fetched
	 * from yet.
	 */
	OptionalLong lag(TopicPartition partition);

	/**
	 * The assigned partitions whose sync barrier is still closed, with how long each has
	 * waited for the lock view so far.
	 */
	Map<TopicPartition, Duration> closedBarriers();

	/**
	 * How long ago the last poll of the consumer that polled least recently returned:
	 * what {@code max.poll.interval.ms} bounds. Zero before the first poll.
	 */
	Duration sinceLastPoll();

	/**
	 * The partitions this container stopped consuming because a record in them can be
	 * neither moved on nor dead-lettered, each with the reason: the record, the topic
	 * that refused it and the setting to raise. A partition stays stopped until it is
	 * assigned again (after a restart or a rebalance), which delivers the record again.
	 */
	Map<TopicPartition, String> stoppedPartitions();

	/** What the container holds now; computed on each call. */
	Load load();

	/** Records held while the listener holds for an outage or is paused. */
	int heldRecords();

	/**
	 * How many of this listener's records wait for their handler's result now, or
	 * {@code null} when its handler returns once done.
	 */
	@Nullable Integer pendingResults();

	/**
	 * Whether the listener runs on half its workers after an outage, its breaker having
	 * closed less than {@code kafka.resilience.outage.ramp-up} ago.
	 */
	boolean isRampingUp();

	/**
	 * How this listener's batches are gathered, or {@code null} when it runs records one
	 * at a time.
	 */
	@Nullable BatchSettings batchSettings();

}
