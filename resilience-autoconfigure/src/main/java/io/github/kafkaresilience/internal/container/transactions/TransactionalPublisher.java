package io.github.kafkaresilience.internal.container.transactions;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.internal.ladder.RecordPublisher;
import io.github.kafkaresilience.internal.support.Futures;
import io.github.kafkaresilience.internal.support.KafkaFutures;
import io.github.kafkaresilience.internal.support.Sends;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

/**
 * Sends in the transaction of the step that calls it. The offset comes once the broker
 * has the record (before the commit), on a thread that runs the rest of the step's move
 * in the same transaction.
 */
final class TransactionalPublisher implements RecordPublisher {

	private final TransactionScope scope;

	private final Sends sends;

	private final Duration sendTimeout;

	/**
	 * @param scope the step each thread runs, whose transaction a write joins
	 * @param sends sends the records, completing on a thread of its own
	 * @param sendTimeout how long one send may take
	 */
	TransactionalPublisher(TransactionScope scope, Sends sends, Duration sendTimeout) {
		this.scope = scope;
		this.sends = sends;
		this.sendTimeout = sendTimeout;
	}

	@Override
	public long publish(String topic, int partition, byte @Nullable [] key, byte @Nullable [] value, Headers headers) {
		return KafkaFutures.await(sending(topic, partition, key, value, headers), this.sendTimeout,
				"publish to '" + topic + "' partition " + partition);
	}

	@Override
	public CompletableFuture<Long> sending(String topic, int partition, byte @Nullable [] key, byte @Nullable [] value,
			Headers headers) {
		return send(new ProducerRecord<>(topic, partition, null, key, value, headers),
				"publish to '" + topic + "' partition " + partition);
	}

	/**
	 * {@inheritDoc} The reply joins the step's transaction, and is committed with the
	 * record's offset; without a partition, the producer's partitioner picks one.
	 */
	@Override
	public CompletableFuture<Long> replying(ProducerRecord<byte[], byte[]> reply) {
		return send(reply, "reply to '" + reply.topic() + "'");
	}

	private CompletableFuture<Long> send(ProducerRecord<byte[], byte[]> record, String description) {
		TransactionStep current = this.scope.inTransaction();
		CompletableFuture<Long> offset = new CompletableFuture<>();
		this.sends.send(current.producer(), record, this.sendTimeout, description).whenComplete((metadata, ex) -> {
			// the rest of the move runs here, in the step's transaction; when the send
			// completed at once this is the step's own thread, whose scope stays
			TransactionStep previous = this.scope.current();
			this.scope.enter(current);
			try {
				if (ex != null) {
					offset.completeExceptionally(Futures.cause(ex));
				}
				else {
					offset.complete(metadata.offset());
				}
			}
			finally {
				if (previous != null) {
					this.scope.enter(previous);
				}
				else {
					this.scope.leave();
				}
			}
		});
		return offset;
	}

}
