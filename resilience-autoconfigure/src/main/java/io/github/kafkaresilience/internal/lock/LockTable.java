package io.github.kafkaresilience.internal.lock;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory view of one lock topic: the set of live locks, by id and by business key
 * (ordered by origin).
 * <p>
 * Every change is versioned by the offset of the lock record that made it, and a change
 * older than what the table holds for that lock id is ignored. That makes applying
 * idempotent (replays, duplicates and compacted logs give the same table) and lets the
 * instance apply its own writes at once: they stay as an overlay, and the older records
 * the tailer reads later can neither resurrect nor regress them. Tombstones are
 * remembered until the tailer has read past them, for the same reason.
 * <p>
 * A table may hold millions of locks (every record of every locked key after a long
 * outage of a dependency), in every instance. It keeps each as a {@code CompactLock},
 * primitives in one object, and indexes them in two open-addressing tables of references
 * (by id, and by key with a key's locks sorted by origin), and turns them back into
 * {@link Lock}s when they are read. A lookup of a key without locks, the question asked
 * of nearly every record of the main topic, allocates nothing.
 *
 * @since 0.1.0
 */
final class LockTable {

	private final IdIndex byId = new IdIndex();

	private final KeyIndex byKey = new KeyIndex();

	private final Map<Integer, Long> tailerPositions = new HashMap<>();

	/**
	 * The remembered tombstones of each partition by offset, so forgetting them is cheap.
	 */
	private final Map<Integer, TreeMap<Long, LockVersion>> tombstones = new HashMap<>();

	private final List<Consumer<Bytes>> listeners = new CopyOnWriteArrayList<>();

	private final List<Consumer<Lock>> pendingListeners = new CopyOnWriteArrayList<>();

	private final List<Consumer<OperatorCommand>> commandListeners = new CopyOnWriteArrayList<>();

	/**
	 * The pending operator commands, kept beside the locks they name (docs/PROTOCOL.md,
	 * rule 11).
	 */
	private final CommandBook commands = new CommandBook();

	/**
	 * Whether a command was ever applied: until then the router's look-up for one, made
	 * for every head that runs, takes no lock.
	 */
	private volatile boolean anyCommands;

	/**
	 * The ids of the live pending locks: replays waiting for admission (rare, so few).
	 */
	private final Set<String> pendingIds = new HashSet<>();

	private long version;

	private int live;

	/**
	 * Applies a lock record read from, or written to, lock partition {@code partition} at
	 * {@code offset}. A {@code null} lock is a tombstone: the lock is released.
	 * @param id the lock id, the key of the lock record (and the id of {@code lock})
	 * @return whether the table changed
	 */
	boolean apply(int partition, long offset, String id, @Nullable Lock lock) {
		if (lock != null && !lock.id().equals(id)) {
			throw new IllegalArgumentException("Lock record '" + id + "' holds lock '" + lock.id() + "'");
		}
		LockId lockId = LockId.of(id);
		Bytes changedKey;
		boolean pending = lock != null && lock.isPending();
		synchronized (this) {
			if (offset < this.tailerPositions.getOrDefault(partition, 0L)) {
				// the tailer has read it, and what followed it: an acknowledgement of our
				// own write
				// that came late, after a later release of the lock was applied and
				// forgotten
				return false;
			}
			int slot = this.byId.slotOf(lockId);
			LockVersion current = (slot >= 0) ? this.byId.versionAt(slot) : null;
			if (current != null && current.offset >= offset) {
				return false;
			}
			CompactLock previous = (current instanceof CompactLock stillLive) ? stillLive : null;
			if (lock != null) {
				CompactLock next = new CompactLock(lockId, partition, offset, lock, this.byKey.sharedKey(lock.key()));
				if (previous != null) {
					this.byKey.remove(previous);
				}
				this.byKey.add(next);
				this.byId.put(slot, next);
				if (previous == null) {
					this.live++;
				}
			}
			else {
				if (previous != null) {
					this.byKey.remove(previous);
					this.live--;
				}
				if (offset >= this.tailerPositions.getOrDefault(partition, 0L)) {
					LockVersion released = new LockVersion(lockId, partition, offset);
					this.byId.put(slot, released);
					this.tombstones.computeIfAbsent(partition, (p) -> new TreeMap<>()).put(offset, released);
				}
				else if (slot >= 0) {
					this.byId.removeAt(slot);
				}
			}
			this.version++;
			changedKey = (lock != null) ? lock.key() : (previous != null) ? Bytes.wrap(previous.key) : null;
			if (pending) {
				this.pendingIds.add(id);
			}
			else if (!this.pendingIds.isEmpty()) {
				this.pendingIds.remove(id);
			}
		}
		if (changedKey != null) {
			for (Consumer<Bytes> listener : this.listeners) {
				listener.accept(changedKey);
			}
		}
		if (pending) {
			for (Consumer<Lock> listener : this.pendingListeners) {
				listener.accept(lock);
			}
		}
		return true;
	}

	/**
	 * Records that the tailer has read lock partition {@code partition} up to (excluding)
	 * {@code position}: tombstones below it can be forgotten, no older record can follow.
	 */
	synchronized void tailerReached(int partition, long position) {
		this.tailerPositions.put(partition, position);
		if (!this.commands.isEmpty()) {
			this.commands.tailerReached(partition, position);
		}
		TreeMap<Long, LockVersion> remembered = this.tombstones.get(partition);
		if (remembered == null) {
			return;
		}
		Iterator<LockVersion> below = remembered.headMap(position).values().iterator();
		while (below.hasNext()) {
			LockVersion tombstone = below.next();
			int slot = this.byId.slotOf(tombstone.lockId());
			// the id may have a newer version by now; only that very tombstone is
			// forgotten
			if (slot >= 0 && this.byId.versionAt(slot) == tombstone) {
				this.byId.removeAt(slot);
			}
			below.remove();
		}
	}

	/**
	 * Forgets every lock of a lock partition, for example when the tailer starts over.
	 */
	void clearPartition(int partition) {
		synchronized (this) {
			List<LockVersion> kept = new ArrayList<>();
			this.byId.forEach((entry) -> {
				if (((LockVersion) entry).partition != partition) {
					kept.add((LockVersion) entry);
				}
			});
			this.byId.clear();
			this.byKey.clear();
			this.live = 0;
			for (LockVersion version : kept) {
				this.byId.add(version);
				if (version instanceof CompactLock lock) {
					this.byKey.add(lock);
					this.live++;
				}
			}
			this.tailerPositions.remove(partition);
			this.tombstones.remove(partition);
			this.commands.clearPartition(partition);
			this.pendingIds.removeIf((id) -> find(id) == null);
			this.version++;
		}
	}

	/**
	 * Applies an operator command record read from, or written to, lock partition
	 * {@code partition} at {@code offset}; a {@code null} command is its tombstone. A new
	 * command is passed to the command listeners.
	 * @param id the command's id (its record key without {@code cmd:})
	 * @return whether the table changed
	 */
	boolean applyCommand(int partition, long offset, String id, @Nullable OperatorCommand command) {
		boolean changed;
		synchronized (this) {
			this.anyCommands = true;
			// one the tailer read already, with what followed it, is an acknowledgement
			// that came late
			changed = offset >= this.tailerPositions.getOrDefault(partition, 0L)
					&& this.commands.apply(partition, offset, id, command);
			if (changed) {
				this.version++;
			}
		}
		if (changed && command != null) {
			for (Consumer<OperatorCommand> listener : this.commandListeners) {
				listener.accept(command);
			}
		}
		return changed;
	}

	/**
	 * The pending command to act on for {@code lock} as it is now (confirmed where the
	 * command saw it), the first written when there are several; {@code null} when none
	 * applies.
	 */
	@Nullable OperatorCommand commandFor(Lock lock) {
		if (!this.anyCommands) {
			return null;
		}
		synchronized (this) {
			return this.commands.isEmpty() ? null : this.commands.commandFor(lock);
		}
	}

	/** The pending commands on a lock, whether or not they still apply to it. */
	List<OperatorCommand> commandsOf(String lockId) {
		if (!this.anyCommands) {
			return List.of();
		}
		synchronized (this) {
			return this.commands.isEmpty() ? List.of() : this.commands.of(lockId);
		}
	}

	/** Every pending command. */
	synchronized List<OperatorCommand> commands() {
		return this.commands.all();
	}

	/** Registers a listener called with every new pending command applied. */
	void addCommandListener(Consumer<OperatorCommand> listener) {
		this.commandListeners.add(listener);
	}

	synchronized @Nullable Lock find(String id) {
		int slot = this.byId.slotOf(LockId.of(id));
		return (slot >= 0 && this.byId.versionAt(slot) instanceof CompactLock lock) ? lock.toLock() : null;
	}

	/**
	 * The live locks of a business key, oldest origin first.
	 */
	synchronized List<Lock> locksOf(Bytes key) {
		return this.byKey.locksOf(key);
	}

	synchronized boolean isLocked(Bytes key) {
		return this.byKey.contains(key);
	}

	/**
	 * The live lock of the record born at {@code originOffset} of the main topic, if any;
	 * a replay's lock is never one (it was not born there).
	 */
	synchronized @Nullable Lock byOrigin(Bytes key, long originOffset) {
		CompactLock lock = this.byKey.bornAt(key, originOffset);
		return (lock != null) ? lock.toLock() : null;
	}

	/**
	 * The live lock of the same key with the greatest origin below {@code lock}'s.
	 */
	synchronized @Nullable Lock predecessor(Lock lock) {
		CompactLock predecessor = this.byKey.lastBefore(lock.key(), lock.originOffset(), lock.sequence());
		return (predecessor != null) ? predecessor.toLock() : null;
	}

	/**
	 * The pending locks of replays in lock partition {@code partition}, for admission.
	 */
	synchronized List<Lock> pending(int partition) {
		if (this.pendingIds.isEmpty()) {
			return List.of();
		}
		List<Lock> pending = new ArrayList<>();
		for (String id : this.pendingIds) {
			Lock lock = find(id);
			if (lock != null && lock.originPartition() == partition) {
				pending.add(lock);
			}
		}
		return pending;
	}

	/** The number of live locks. */
	synchronized int size() {
		return this.live;
	}

	/** The number of keys with at least one live lock. */
	synchronized int lockedKeys() {
		return this.byKey.size();
	}

	/**
	 * All live locks, for inspection. Each becomes a {@link Lock} as it is read, so going
	 * through a million of them does not hold a million {@code Lock}s at once.
	 */
	synchronized Collection<Lock> snapshot() {
		CompactLock[] all = new CompactLock[this.live];
		int[] count = new int[1];
		this.byId.forEach((entry) -> {
			if (entry instanceof CompactLock lock) {
				all[count[0]++] = lock;
			}
		});
		return new DecodedLocks(all);
	}

	/**
	 * The {@code n} live locks written longest ago (those whose record has sat longest at
	 * its stage), oldest first.
	 */
	synchronized List<Lock> oldest(int n) {
		if (n <= 0) {
			return List.of();
		}
		Comparator<CompactLock> byAge = CompactLock::compareByUpdated;
		PriorityQueue<CompactLock> youngestFirst = new PriorityQueue<>(n, byAge.reversed());
		this.byId.forEach((entry) -> {
			if (entry instanceof CompactLock lock) {
				youngestFirst.add(lock);
				if (youngestFirst.size() > n) {
					youngestFirst.poll();
				}
			}
		});
		CompactLock[] oldest = youngestFirst.toArray(CompactLock[]::new);
		Arrays.sort(oldest, byAge);
		return List.copyOf(new DecodedLocks(oldest));
	}

	/**
	 * Increases with every change: a reader can tell whether anything changed since it
	 * looked.
	 */
	synchronized long version() {
		return this.version;
	}

	/** Registers a listener called with the business key of every change. */
	void addListener(Consumer<Bytes> listener) {
		this.listeners.add(listener);
	}

	/** Registers a listener called with every pending lock applied: a replay to admit. */
	void addPendingListener(Consumer<Lock> listener) {
		this.pendingListeners.add(listener);
	}

}
