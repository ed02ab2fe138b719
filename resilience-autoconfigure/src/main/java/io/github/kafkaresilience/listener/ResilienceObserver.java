package io.github.kafkaresilience.listener;

import java.time.Duration;

import io.github.kafkaresilience.lock.Lock;
import org.apache.kafka.common.TopicPartition;

/**
 * Hears what the containers do that an operator wants to see: barrier waits and reaped locks.
 * The metrics module implements it with Micrometer; every method does nothing by default.
 *
 * @since 0.1.0
 */
public interface ResilienceObserver {

	/** A partition's sync barrier opened after {@code waited}. */
	default void barrierOpened(String listenerId, TopicPartition partition, Duration waited) {
	}

	/** A zombie lock of {@code mainTopic} was released by the reaper. */
	default void lockReaped(String listenerId, String mainTopic, Lock lock) {
	}

	/** An observer that ignores everything. */
	ResilienceObserver NONE = new ResilienceObserver() {
	};

}
