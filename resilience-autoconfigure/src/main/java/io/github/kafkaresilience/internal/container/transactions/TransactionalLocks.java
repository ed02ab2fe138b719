package io.github.kafkaresilience.internal.container.transactions;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Future;

import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.LockStore;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * The locks of a registry as the steps run in transactions see and write them. Reads see
 * the writes of the step's transaction first (a move confirms the lock it wrote a moment
 * earlier); writes join the step's transaction, and reach the registry once it is
 * committed.
 */
final class TransactionalLocks implements LockStore {

	private final TransactionScope scope;

	private final LockRegistry registry;

	/**
	 * @param scope the step each thread runs, whose transaction a write joins
	 * @param registry the lock table, and how a lock is written
	 */
	TransactionalLocks(TransactionScope scope, LockRegistry registry) {
		this.scope = scope;
		this.registry = registry;
	}

	@Override
	public @Nullable Lock find(String id) {
		TransactionStep current = this.scope.current();
		Transaction transaction = (current != null) ? current.transaction : null;
		Optional<Lock> own = (transaction != null) ? transaction.written.get(id) : null;
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
		TransactionStep current = this.scope.inTransaction();
		Future<RecordMetadata> result = current.producer().send(this.registry.recordOf(lock, release));
		Transaction transaction = Objects.requireNonNull(current.transaction, "the step joined no transaction");
		transaction.writes.add(new Transaction.LockWrite(this.registry, lock, release, result));
		transaction.written.put(lock.id(), release ? Optional.empty() : Optional.of(lock));
	}

}
