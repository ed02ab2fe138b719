package io.github.kafkaresilience.container;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.Future;

import io.github.kafkaresilience.container.TransactionBatches.Batch;
import io.github.kafkaresilience.container.TransactionBatches.Member;
import io.github.kafkaresilience.container.TransactionBatches.PendingWrite;
import io.github.kafkaresilience.lock.Lock;
import io.github.kafkaresilience.lock.LockRegistry;
import io.github.kafkaresilience.lock.LockStore;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * The locks of a registry as the steps run in transactions see and write them. Reads see the
 * writes of the step's transaction first (a move confirms the lock it wrote a moment earlier);
 * writes join the step's transaction, and reach the registry once it is committed.
 */
final class TransactionalLocks implements LockStore {

	private final TransactionBatches transactions;

	private final LockRegistry registry;

	/**
	 * @param transactions the transactions the steps join
	 * @param registry the lock table, and how a lock is written
	 */
	TransactionalLocks(TransactionBatches transactions, LockRegistry registry) {
		this.transactions = transactions;
		this.registry = registry;
	}

	@Override
	public @Nullable Lock find(String id) {
		Member current = this.transactions.current();
		Batch batch = (current != null) ? current.batch : null;
		Optional<Lock> own = (batch != null) ? batch.written.get(id) : null;
		return (own != null) ? own.orElse(null) : this.registry.find(id);
	}

	@Override
	public List<Lock> locksOf(Bytes key) {
		return this.registry.locksOf(key);
	}

	@Override
	public @Nullable Lock byOrigin(Bytes key, long originOffset) {
		return this.registry.byOrigin(key, originOffset);
	}

	@Override
	public @Nullable Lock predecessor(Lock lock) {
		return this.registry.predecessor(lock);
	}

	@Override
	public void write(Lock lock) {
		send(lock, false);
	}

	@Override
	public void release(Lock lock) {
		send(lock, true);
	}

	private void send(Lock lock, boolean release) {
		Member current = this.transactions.inTransaction();
		Future<RecordMetadata> result = current.producer().send(this.registry.recordOf(lock, release));
		current.batch.writes.add(new PendingWrite(this.registry, lock, release, result));
		current.batch.written.put(lock.id(), release ? Optional.empty() : Optional.of(lock));
	}

}
