package io.github.kafkaresilience.internal.container.transactions;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;

import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.jspecify.annotations.Nullable;

/**
 * One Kafka transaction of a listener: the steps in it and their lock writes. Its counts
 * are guarded by its {@link Transactions}' monitor.
 */
final class Transaction {

	final TransactionalProducers.Slot slot;

	/** When the first step joined it: {@link System#nanoTime()}. */
	final long begun = System.nanoTime();

	final List<TransactionStep> steps = new ArrayList<>();

	/** Steps in it whose writes are not all made yet. */
	int unsettled;

	/** The failure of a step in it, which dooms it. */
	@Nullable Throwable failure;

	/**
	 * Committed or aborted: its producer may carry the next transaction, a late write
	 * must fail.
	 */
	volatile boolean ended;

	final List<LockWrite> writes = Collections.synchronizedList(new ArrayList<>());

	/** The lock writes made in it by id; an empty value is a release. */
	final Map<String, Optional<Lock>> written = new ConcurrentHashMap<>();

	Transaction(TransactionalProducers.Slot slot) {
		this.slot = slot;
	}

	/**
	 * A lock write made in a transaction, applied to the lock table once the transaction
	 * is committed.
	 */
	record LockWrite(LockRegistry registry, Lock lock, boolean release, Future<RecordMetadata> result) {
	}

}
