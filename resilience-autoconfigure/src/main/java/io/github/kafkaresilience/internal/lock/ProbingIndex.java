package io.github.kafkaresilience.internal.lock;

import java.util.Objects;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * A hash table of entries that carry their own key, with open addressing: an array of
 * references probed linearly, beside an array of the entries' hashes, and no node per
 * entry nor boxed key, which is what keeps an index of a million locks at about 8 bytes
 * per lock (a {@code HashMap} spends 40). A lookup compares hashes in the dense array and
 * looks at an entry only when its hash matches, so a key that is not there costs about
 * one cache miss. Removing an entry moves the entries of its run back, so no deleted
 * marker is left behind. The caller synchronizes.
 *
 * @param <K> the key that looks entries up
 */
abstract class ProbingIndex<K> {

	private static final int MIN_CAPACITY = 16;

	private static final int FREE = 0;

	/** The entries; a free slot holds {@code null}. */
	private @Nullable Object[] slots = new Object[MIN_CAPACITY];

	/** The {@link #code(int)} of each slot's entry, {@link #FREE} for a free slot. */
	private int[] codes = new int[MIN_CAPACITY];

	private int size;

	/** Whether {@code entry} has the key {@code key}. */
	abstract boolean matches(Object entry, K key);

	final int size() {
		return this.size;
	}

	/** The slot of the entry with {@code key}, whose hash is {@code hash}, or -1. */
	final int slotOf(K key, int hash) {
		int code = code(hash);
		int mask = this.slots.length - 1;
		for (int slot = code & mask;; slot = (slot + 1) & mask) {
			int found = this.codes[slot];
			if (found == FREE) {
				return -1;
			}
			if (found == code && matches(occupied(this.slots, slot), key)) {
				return slot;
			}
		}
	}

	final Object at(int slot) {
		return occupied(this.slots, slot);
	}

	/** The entry of a slot whose code is not {@link #FREE}. */
	private static Object occupied(@Nullable Object[] slots, int slot) {
		return Objects.requireNonNull(slots[slot]);
	}

	/** Replaces the entry in {@code slot} by one with the same key. */
	final void replace(int slot, Object entry) {
		this.slots[slot] = entry;
	}

	/** Adds an entry whose key, of hash {@code hash}, is not in the table. */
	final void add(Object entry, int hash) {
		if (this.size + 1 > this.slots.length - (this.slots.length >>> 2)) {
			resize(this.slots.length << 1);
		}
		place(entry, code(hash));
		this.size++;
	}

	/** Removes the entry in {@code slot}. */
	final void removeAt(int slot) {
		@Nullable Object[] slots = this.slots;
		int[] codes = this.codes;
		int mask = slots.length - 1;
		int free = slot;
		for (int i = (free + 1) & mask; codes[i] != FREE; i = (i + 1) & mask) {
			// an entry may fill the free slot if that slot lies on its way from home to
			// where it is
			if (((i - codes[i]) & mask) >= ((i - free) & mask)) {
				slots[free] = slots[i];
				codes[free] = codes[i];
				free = i;
			}
		}
		slots[free] = null;
		codes[free] = FREE;
		this.size--;
		if (slots.length > MIN_CAPACITY && this.size < (slots.length >>> 3)) {
			resize(slots.length >>> 1);
		}
	}

	final void clear() {
		this.slots = new Object[MIN_CAPACITY];
		this.codes = new int[MIN_CAPACITY];
		this.size = 0;
	}

	/**
	 * Calls {@code action} with every entry, in no order; it must not change the table.
	 */
	final void forEach(Consumer<Object> action) {
		for (Object entry : this.slots) {
			if (entry != null) {
				action.accept(entry);
			}
		}
	}

	private void resize(int capacity) {
		@Nullable Object[] oldSlots = this.slots;
		int[] oldCodes = this.codes;
		this.slots = new Object[capacity];
		this.codes = new int[capacity];
		for (int i = 0; i < oldSlots.length; i++) {
			if (oldCodes[i] != FREE) {
				place(occupied(oldSlots, i), oldCodes[i]);
			}
		}
	}

	private void place(Object entry, int code) {
		int mask = this.slots.length - 1;
		int slot = code & mask;
		while (this.codes[slot] != FREE) {
			slot = (slot + 1) & mask;
		}
		this.slots[slot] = entry;
		this.codes[slot] = code;
	}

	/**
	 * A hash spread over all bits (the key hashes, {@code Arrays.hashCode} of keys like
	 * "order-17", are far from random), never {@link #FREE}. Its low bits are an entry's
	 * home slot.
	 */
	private static int code(int hash) {
		int h = hash;
		h ^= h >>> 16;
		h *= 0x85ebca6b;
		h ^= h >>> 13;
		h *= 0xc2b2ae35;
		h ^= h >>> 16;
		return (h != FREE) ? h : 1;
	}

}
