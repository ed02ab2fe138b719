package io.github.kafkaresilience.ladder;

import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.support.Futures;
import org.apache.kafka.common.header.Headers;

/**
 * Sends a record to a retry or dead-letter topic, to an explicit partition.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface RecordPublisher {

	/**
	 * Sends and returns once the broker has the record.
	 * @return the offset the broker gave the record
	 */
	long publish(String topic, int partition, byte[] key, byte[] value, Headers headers);

	/**
	 * Sends without waiting. The future completes with the record's offset once the broker has
	 * it, never on a Kafka client's network thread, so the next step of a move may be chained
	 * on it.
	 */
	default CompletableFuture<Long> sending(String topic, int partition, byte[] key, byte[] value, Headers headers) {
		return Futures.call(() -> CompletableFuture.completedFuture(publish(topic, partition, key, value, headers)));
	}

}
