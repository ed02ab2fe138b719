package io.github.kafkaresilience.internal.container.transactions;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.internal.container.offsets.CommittableOffsets;
import io.github.kafkaresilience.ladder.Delivery;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.KafkaException;
import org.jspecify.annotations.Nullable;

/** The step of one record, and the transaction it joined by writing. */
final class TransactionStep {

	private final Transactions transactions;

	final Delivery record;

	final CommittableOffsets offsets;

	/** Completes when the transaction is committed, fails when it is aborted. */
	final CompletableFuture<Void> committed = new CompletableFuture<>();

	volatile @Nullable Transaction transaction;

	/**
	 * Whether the step finishes the record, so that its offset is committed with its
	 * writes.
	 */
	volatile boolean finishes;

	TransactionStep(Transactions transactions, Delivery record, CommittableOffsets offsets) {
		this.transactions = transactions;
		this.record = record;
		this.offsets = offsets;
	}

	/** Every write of the step is made. */
	void settled() {
		this.transactions.settled(Objects.requireNonNull(this.transaction, "the step joined no transaction"));
	}

	/** The step failed; when it wrote, its transaction is doomed. */
	void failed(Throwable ex) {
		Transaction current = this.transaction;
		if (current != null) {
			this.transactions.failed(current, ex);
		}
	}

	Producer<byte[], byte[]> producer() {
		Transaction current = Objects.requireNonNull(this.transaction, "the step joined no transaction");
		if (current.ended) {
			throw new KafkaException("The transaction of the step for " + this.record + " has ended");
		}
		return this.transactions.producerOf(current);
	}

}
