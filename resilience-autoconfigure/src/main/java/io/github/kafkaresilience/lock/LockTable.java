package io.github.kafkaresilience.lock;

import java.util.ArrayList;
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
 * Every change is versioned by the offset of the lock record that made it, and a change older
 * than what the table holds for that lock id is ignored. That makes applying idempotent
 * (replays, duplicates and compacted logs give the same table) and lets the instance apply its
 * own writes at once: they stay as an overlay, and the older records the tailer reads later
 * can neither resurrect nor regress them. Tombstones are remembered until the tailer has read
 * past them, for the same reason.
 *
 * @since 0.1.0
 */
public final class LockTable {

	private record Entry(int partition, long offset, @Nullable Lock lock) {
	}

	/**
	 * Orders a key's locks by origin ({@link Lock#BY_ORIGIN}): offset, then the entry of a
	 * replay (-1 for a main-topic record), then the id, which tells apart two locks of one
	 * origin (a duplicate).
	 */
	private record OriginKey(long offset, long sequence, String id) implements Comparable<OriginKey> {

		static OriginKey of(Lock lock) {
			return new OriginKey(lock.originOffset(), lock.sequence(), lock.id());
		}

		/** Below every lock of {@code lock}'s origin, duplicates included. */
		static OriginKey before(Lock lock) {
			return new OriginKey(lock.originOffset(), lock.sequence(), "");
		}

		@Override
		public int compareTo(OriginKey other) {
			int byOffset = Long.compare(this.offset, other.offset);
			if (byOffset != 0) {
				return byOffset;
			}
			int bySequence = Long.compare(this.sequence, other.sequence);
			return (bySequence != 0) ? bySequence : this.id.compareTo(other.id);
		}

	}

	private final Map<String, Entry> byId = new HashMap<>();

	/**
	 * The live locks of each locked key: the {@link Lock} itself while a key has one (almost
	 * always), a {@code TreeMap<OriginKey, Lock>} ordered by origin while it has more. A table of
	 * a million locks saves a map per key that way.
	 */
	private final Map<Bytes, Object> byKey = new HashMap<>();

	private final Map<Integer, Long> tailerPositions = new HashMap<>();

	/** The remembered tombstones of each partition by offset, so forgetting them is cheap. */
	private final Map<Integer, TreeMap<Long, String>> tombstones = new HashMap<>();

	private final List<Consumer<Bytes>> listeners = new CopyOnWriteArrayList<>();

	private final List<Consumer<Lock>> pendingListeners = new CopyOnWriteArrayList<>();

	/** The ids of the live pending locks: replays waiting for admission (rare, so few). */
	private final Set<String> pendingIds = new HashSet<>();

	private long version;

	private int live;

	/**
	 * Applies a lock record read from, or written to, lock partition {@code partition} at
	 * {@code offset}. A {@code null} lock is a tombstone: the lock is released.
	 * @return whether the table changed
	 */
	public boolean apply(int partition, long offset, String id, @Nullable Lock lock) {
		Bytes changedKey;
		boolean pending = lock != null && lock.isPending();
		synchronized (this) {
			Entry current = this.byId.get(id);
			if (current != null && current.offset() >= offset) {
				return false;
			}
			Lock previous = (current != null) ? current.lock() : null;
			if (previous != null) {
				removeFromKey(previous);
			}
			if (lock != null) {
				addToKey(lock);
				this.byId.put(id, new Entry(partition, offset, lock));
				if (previous == null) {
					this.live++;
				}
			}
			else {
				if (previous != null) {
					this.live--;
				}
				if (offset >= this.tailerPositions.getOrDefault(partition, 0L)) {
					this.byId.put(id, new Entry(partition, offset, null));
					this.tombstones.computeIfAbsent(partition, (p) -> new TreeMap<>()).put(offset, id);
				}
				else {
					this.byId.remove(id);
				}
			}
			this.version++;
			changedKey = (lock != null) ? lock.key() : (previous != null) ? previous.key() : null;
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
	public synchronized void tailerReached(int partition, long position) {
		this.tailerPositions.put(partition, position);
		TreeMap<Long, String> remembered = this.tombstones.get(partition);
		if (remembered == null) {
			return;
		}
		Iterator<Map.Entry<Long, String>> below = remembered.headMap(position).entrySet().iterator();
		while (below.hasNext()) {
			Map.Entry<Long, String> tombstone = below.next();
			Entry entry = this.byId.get(tombstone.getValue());
			// the id may have a newer version by now; only that very tombstone is forgotten
			if (entry != null && entry.lock() == null && entry.partition() == partition
					&& entry.offset() == tombstone.getKey()) {
				this.byId.remove(tombstone.getValue());
			}
			below.remove();
		}
	}

	/**
	 * Forgets every lock of a lock partition, for example when the tailer starts over.
	 */
	public void clearPartition(int partition) {
		synchronized (this) {
			this.byId.values().removeIf((entry) -> entry.partition() == partition);
			for (Lock lock : allLocks()) {
				if (lock.originPartition() == partition) {
					removeFromKey(lock);
				}
			}
			this.tailerPositions.remove(partition);
			this.tombstones.remove(partition);
			this.pendingIds.removeIf((id) -> find(id) == null);
			this.live = (int) this.byId.values().stream().filter((entry) -> entry.lock() != null).count();
			this.version++;
		}
	}

	public synchronized @Nullable Lock find(String id) {
		Entry entry = this.byId.get(id);
		return (entry != null) ? entry.lock() : null;
	}

	/**
	 * The live locks of a business key, oldest origin first.
	 */
	public synchronized List<Lock> locksOf(Bytes key) {
		Object locks = this.byKey.get(key);
		if (locks == null) {
			return List.of();
		}
		return (locks instanceof Lock lock) ? List.of(lock) : new ArrayList<>(many(locks).values());
	}

	public synchronized boolean isLocked(Bytes key) {
		return this.byKey.containsKey(key);
	}

	/**
	 * The live lock of the record born at {@code originOffset} of the main topic, if any; a
	 * replay's lock is never one (it was not born there).
	 */
	public synchronized @Nullable Lock byOrigin(Bytes key, long originOffset) {
		Object locks = this.byKey.get(key);
		if (locks == null) {
			return null;
		}
		if (locks instanceof Lock lock) {
			return (lock.originOffset() == originOffset && lock.entry() == null) ? lock : null;
		}
		Map.Entry<OriginKey, Lock> first = many(locks).ceilingEntry(new OriginKey(originOffset, -1, ""));
		return (first != null && first.getKey().offset() == originOffset && first.getValue().entry() == null)
				? first.getValue() : null;
	}

	/**
	 * The live lock of the same key with the greatest origin below {@code lock}'s.
	 */
	public synchronized @Nullable Lock predecessor(Lock lock) {
		Object locks = this.byKey.get(lock.key());
		if (locks == null) {
			return null;
		}
		if (locks instanceof Lock only) {
			return (OriginKey.of(only).compareTo(OriginKey.before(lock)) < 0) ? only : null;
		}
		Map.Entry<OriginKey, Lock> lower = many(locks).lowerEntry(OriginKey.before(lock));
		return (lower != null) ? lower.getValue() : null;
	}

	/** The pending locks of replays in lock partition {@code partition}, for admission. */
	public synchronized List<Lock> pending(int partition) {
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
	public synchronized int size() {
		return this.live;
	}

	/** The number of keys with at least one live lock. */
	public synchronized int lockedKeys() {
		return this.byKey.size();
	}

	/** All live locks, for inspection. */
	public synchronized Collection<Lock> snapshot() {
		return allLocks();
	}

	/**
	 * The {@code n} live locks written longest ago (those whose record has sat longest at
	 * its stage), oldest first.
	 */
	public synchronized List<Lock> oldest(int n) {
		if (n <= 0) {
			return List.of();
		}
		Comparator<Lock> byAge = Comparator.comparing(Lock::updated);
		PriorityQueue<Lock> youngestFirst = new PriorityQueue<>(n, byAge.reversed());
		for (Lock lock : allLocks()) {
			youngestFirst.add(lock);
			if (youngestFirst.size() > n) {
				youngestFirst.poll();
			}
		}
		List<Lock> oldest = new ArrayList<>(youngestFirst);
		oldest.sort(byAge);
		return oldest;
	}

	private List<Lock> allLocks() {
		List<Lock> all = new ArrayList<>(this.live);
		for (Object locks : this.byKey.values()) {
			if (locks instanceof Lock lock) {
				all.add(lock);
			}
			else {
				all.addAll(many(locks).values());
			}
		}
		return all;
	}

	/** Increases with every change: a reader can tell whether anything changed since it looked. */
	public synchronized long version() {
		return this.version;
	}

	/** Registers a listener called with the business key of every change. */
	public void addListener(Consumer<Bytes> listener) {
		this.listeners.add(listener);
	}

	/** Registers a listener called with every pending lock applied: a replay to admit. */
	public void addPendingListener(Consumer<Lock> listener) {
		this.pendingListeners.add(listener);
	}

	private void addToKey(Lock lock) {
		Object locks = this.byKey.get(lock.key());
		if (locks == null) {
			this.byKey.put(lock.key(), lock);
		}
		else if (locks instanceof Lock other) {
			TreeMap<OriginKey, Lock> both = new TreeMap<>();
			both.put(OriginKey.of(other), other);
			both.put(OriginKey.of(lock), lock);
			this.byKey.put(lock.key(), both);
		}
		else {
			many(locks).put(OriginKey.of(lock), lock);
		}
	}

	private void removeFromKey(Lock lock) {
		Object locks = this.byKey.get(lock.key());
		if (locks instanceof Lock only) {
			if (only.id().equals(lock.id())) {
				this.byKey.remove(lock.key());
			}
		}
		else if (locks != null) {
			TreeMap<OriginKey, Lock> byOrigin = many(locks);
			byOrigin.remove(OriginKey.of(lock));
			if (byOrigin.size() == 1) {
				this.byKey.put(lock.key(), byOrigin.firstEntry().getValue());
			}
			else if (byOrigin.isEmpty()) {
				this.byKey.remove(lock.key());
			}
		}
	}

	@SuppressWarnings("unchecked")
	private static TreeMap<OriginKey, Lock> many(Object locks) {
		return (TreeMap<OriginKey, Lock>) locks;
	}

}
