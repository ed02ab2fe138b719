package io.github.kafkaresilience.internal.ladder;

import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.internal.support.Futures;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

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
	long publish(String topic, int partition, byte @Nullable [] key, byte @Nullable [] value, Headers headers);

	/**
	 * Sends without waiting. The future completes with the record's offset once the
	 * broker has it, never on a Kafka client's network thread, so the next step of a move
	 * may be chained on it.
	 */
	default CompletableFuture<Long> sending(String topic, int partition, byte @Nullable [] key, byte @Nullable [] value,
			Headers headers) {
		return Futures.call(() -> CompletableFuture.completedFuture(publish(topic, partition, key, value, headers)));
	}

	/**
	 * Sends a listener's reply without waiting, as {@link #sending} does: to the
	 * partition it names or, without one, to the one the producer's partitioner picks.
	 * This publisher sends to explicit partitions only, and fails a reply that names
	 * none.
	 * @param reply the reply, serialized
	 * @return completes with the reply's offset once the broker has it
	 */
	default CompletableFuture<Long> replying(ProducerRecord<byte[], byte[]> reply) {
		Integer partition = reply.partition();
		if (partition == null) {
			return CompletableFuture.failedFuture(
					new IllegalStateException("This publisher sends to explicit partitions only, and the reply to '"
							+ reply.topic() + "' names none"));
		}
		return sending(reply.topic(), partition, reply.key(), reply.value(), reply.headers());
	}

}
