package io.github.kafkaresilience.container;

import java.time.Duration;
import java.util.Collection;
import java.util.List;

import io.github.kafkaresilience.internal.container.Partitions;
import io.github.kafkaresilience.ladder.LadderObserver;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;

/**
 * Hears what the containers do that an operator wants to see: what the ladder does with
 * each record, barrier waits, reaped locks, polls and rebalances. The metrics module
 * implements it with Micrometer; every method does nothing by default.
 *
 * @since 0.1.0
 */
public interface ResilienceObserver {

	/**
	 * A partition's sync barrier opened after {@code waited}; {@code group} owns its
	 * ladder.
	 */
	default void barrierOpened(String listenerId, String group, TopicPartition partition, Duration waited) {
	}

	/**
	 * A zombie lock of {@code group}'s ladder on {@code mainTopic} was released by the
	 * reaper: the record of {@code key} it held is lost outside the protocol.
	 * @param key the key of the lock
	 * @param lockId the lock's id, as in the {@code lock.id} header
	 */
	default void lockReaped(String listenerId, String group, String mainTopic, Bytes key, String lockId) {
	}

	/**
	 * Who hears what {@code group}'s ladder on {@code mainTopic} does with each record of
	 * a listener.
	 */
	default LadderObserver ladder(String listenerId, String group, String mainTopic) {
		return LadderObserver.NONE;
	}

	/**
	 * The listener's consumer is about to poll again, {@code sinceLastPoll} after its
	 * last poll returned: what {@code max.poll.interval.ms} bounds.
	 */
	default void polling(String listenerId, Duration sinceLastPoll) {
	}

	/**
	 * Partitions were assigned to, revoked from or lost by the listener's consumer.
	 * @param kind {@code assigned}, {@code revoked} or {@code lost}
	 */
	default void rebalanced(String listenerId, String kind, Collection<TopicPartition> partitions) {
	}

	/** An observer that ignores everything. */
	ResilienceObserver NONE = new ResilienceObserver() {
	};

	/**
	 * One observer that tells each of {@code observers} everything, in order.
	 * @param observers the observers
	 * @return the only one, {@link #NONE} for none, or one that calls them all
	 */
	static ResilienceObserver composite(List<ResilienceObserver> observers) {
		if (observers.isEmpty()) {
			return NONE;
		}
		return (observers.size() == 1) ? observers.get(0) : new CompositeResilienceObserver(observers);
	}

}
