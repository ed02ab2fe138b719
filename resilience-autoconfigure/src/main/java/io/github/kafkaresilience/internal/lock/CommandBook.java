package io.github.kafkaresilience.internal.lock;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The pending operator commands of one lock topic (docs/PROTOCOL.md, rule 11), by command
 * id and by the lock they name. Like the lock table it is versioned by the offset of each
 * command's record, so that this instance's own writes apply at once and the older
 * records the tailer reads later change nothing; a tombstone is remembered until the
 * tailer has read past it. Commands are rare (an operator's clicks), so plain maps do.
 * Not thread-safe: the {@link LockTable} that holds it guards it.
 */
final class CommandBook {

	/** A command's latest version: the command, or {@code null} once tombstoned. */
	private record Version(int partition, long offset, @Nullable OperatorCommand command) {
	}

	private final Map<String, Version> byId = new HashMap<>();

	private final Map<String, List<OperatorCommand>> byLock = new HashMap<>();

	/**
	 * Applies a command record, or its tombstone ({@code command == null}).
	 * @return whether the book changed
	 */
	boolean apply(int partition, long offset, String id, @Nullable OperatorCommand command) {
		Version current = this.byId.get(id);
		if (current != null && current.offset() >= offset) {
			return false;
		}
		if (current != null && current.command() != null) {
			forget(current.command());
		}
		this.byId.put(id, new Version(partition, offset, command));
		if (command != null) {
			this.byLock.computeIfAbsent(command.lockId(), (lock) -> new ArrayList<>(1)).add(command);
		}
		return true;
	}

	/**
	 * Forgets the tombstones of a partition below the tailer's position: no older record
	 * can follow.
	 */
	void tailerReached(int partition, long position) {
		this.byId.values().removeIf((v) -> v.command() == null && v.partition() == partition && v.offset() < position);
	}

	/** Forgets every command of a partition. */
	void clearPartition(int partition) {
		Iterator<Version> versions = this.byId.values().iterator();
		while (versions.hasNext()) {
			Version version = versions.next();
			if (version.partition() == partition) {
				if (version.command() != null) {
					forget(version.command());
				}
				versions.remove();
			}
		}
	}

	/** The pending commands on a lock, in the order they were written. */
	List<OperatorCommand> of(String lockId) {
		List<OperatorCommand> commands = this.byLock.get(lockId);
		return (commands != null) ? List.copyOf(commands) : List.of();
	}

	/**
	 * The command to act on for {@code lock}: the first written of those that apply to it
	 * as it is now, or {@code null}.
	 */
	@Nullable OperatorCommand commandFor(Lock lock) {
		List<OperatorCommand> commands = this.byLock.get(lock.id());
		if (commands == null) {
			return null;
		}
		OperatorCommand first = null;
		long firstOffset = Long.MAX_VALUE;
		for (OperatorCommand command : commands) {
			long offset = Objects.requireNonNull(this.byId.get(command.id()), command.id()).offset();
			if (command.appliesTo(lock) && offset < firstOffset) {
				first = command;
				firstOffset = offset;
			}
		}
		return first;
	}

	/** Every pending command. */
	List<OperatorCommand> all() {
		List<OperatorCommand> all = new ArrayList<>();
		this.byLock.values().forEach(all::addAll);
		return all;
	}

	boolean isEmpty() {
		return this.byLock.isEmpty();
	}

	private void forget(OperatorCommand command) {
		List<OperatorCommand> commands = this.byLock.get(command.lockId());
		if (commands != null) {
			commands.removeIf((c) -> c.id().equals(command.id()));
			if (commands.isEmpty()) {
				this.byLock.remove(command.lockId());
			}
		}
	}

}
