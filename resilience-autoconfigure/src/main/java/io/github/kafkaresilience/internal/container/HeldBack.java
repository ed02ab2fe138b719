package io.github.kafkaresilience.internal.container;

import java.util.ArrayList;
import java.util.List;

import io.github.kafkaresilience.ladder.Delivery;

/**
 * The records a poll returned past a partition's bound, in offset order: taken once the
 * partition has room again, before anything the consumer returns later, so the consumer
 * keeps what it has fetched and does not read it again. At most one poll's records. Poll
 * thread only.
 */
final class HeldBack {

	private final List<Delivery> records = new ArrayList<>();

	/** How many records are held back, for the workers to read. */
	private volatile int size;

	/** Keeps polled records that did not fit for later, behind those kept before them. */
	void add(List<Delivery> polled) {
		this.records.addAll(polled);
		this.size = this.records.size();
	}

	/** How many records are held back; any thread. */
	int size() {
		return this.size;
	}

	boolean isEmpty() {
		return this.records.isEmpty();
	}

	/** The records held back, in offset order: a view, until {@link #taken}. */
	List<Delivery> records() {
		return this.records;
	}

	/** Forgets the first {@code count} records held back, once taken. */
	void taken(int count) {
		this.records.subList(0, count).clear();
		this.size = this.records.size();
	}

}
