package io.github.kafkaresilience.internal.lock;

import java.util.Collection;
import java.util.List;
import java.util.function.Consumer;

import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * A real {@link LockTable} for the tests of other packages, which fill one with lock
 * records they read or write themselves (the simulation, the chaos and group runs'
 * checkers): the table is package-private, and the library reaches it only through
 * {@link LockRegistry}.
 */
public final class TestLockTable {

	private final LockTable table = new LockTable();

	/** See {@link LockTable#apply(int, long, String, Lock)}. */
	public boolean apply(int partition, long offset, String id, @Nullable Lock lock) {
		return this.table.apply(partition, offset, id, lock);
	}

	/** See {@link LockTable#tailerReached(int, long)}. */
	public void tailerReached(int partition, long position) {
		this.table.tailerReached(partition, position);
	}

	/** See {@link LockTable#applyCommand(int, long, String, OperatorCommand)}. */
	public boolean applyCommand(int partition, long offset, String id, @Nullable OperatorCommand command) {
		return this.table.applyCommand(partition, offset, id, command);
	}

	public @Nullable OperatorCommand commandFor(Lock lock) {
		return this.table.commandFor(lock);
	}

	public List<OperatorCommand> commands() {
		return this.table.commands();
	}

	public @Nullable Lock find(String id) {
		return this.table.find(id);
	}

	public List<Lock> locksOf(Bytes key) {
		return this.table.locksOf(key);
	}

	public @Nullable Lock byOrigin(Bytes key, long originOffset) {
		return this.table.byOrigin(key, originOffset);
	}

	public @Nullable Lock predecessor(Lock lock) {
		return this.table.predecessor(lock);
	}

	public List<Lock> pending(int partition) {
		return this.table.pending(partition);
	}

	public int size() {
		return this.table.size();
	}

	public Collection<Lock> snapshot() {
		return this.table.snapshot();
	}

	public void addListener(Consumer<Bytes> listener) {
		this.table.addListener(listener);
	}

	public void addPendingListener(Consumer<Lock> listener) {
		this.table.addPendingListener(listener);
	}

	public void addCommandListener(Consumer<OperatorCommand> listener) {
		this.table.addCommandListener(listener);
	}

}
