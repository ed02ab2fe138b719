package io.github.kafkaresilience.container;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.lock.Lock;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * One assigned partition: its records in flight in per-key queues (a key's records run one
 * at a time, in offset order), its parked records, the replays waiting for their turn, its
 * offsets, and the flags the poll loop reads. Every change happens under its monitor; a
 * revoked partition takes no more change.
 */
final class PartitionWork {

	/** What became of a record handed to the partition. */
	enum Taken {

		/** The partition is at its in-flight bound, or revoked: the record was not taken. */
		REFUSED,

		/** Taken, behind an earlier record of its key. */
		QUEUED,

		/** Taken, and parked behind a parked record of its key. */
		PARKED,

		/** Taken, and first of its key: it runs now. */
		RUN

	}

	final TopicPartition partition;

	final OrderedRetryContainer.Route route;

	/** Records in flight before the partition is paused: {@code max-in-flight-per-partition}. */
	private final int bound;

	private final OffsetTracker offsets = new OffsetTracker();

	private final Map<Bytes, ArrayDeque<Task>> keyQueues = new HashMap<>();

	/** Keys with parked records here, and how many: later records of such a key park too. */
	private final Map<Bytes, Integer> parkedKeys = new HashMap<>();

	/** The replays whose admission waits in a key queue here, by lock id. */
	private final Set<String> admissions = new HashSet<>();

	/**
	 * The offset of the last record taken from this partition (or the one before its
	 * committed offset): a replay admitted now goes behind it.
	 */
	private long lastTaken = -1;

	/** When the re-reader should next look at the parked records: epoch millis. */
	private long lookAt = Long.MAX_VALUE;

	private long committed = -1;

	private volatile boolean revoked;

	/** The handler runs under way on this partition's records. */
	final HandlerRuns runs = new HandlerRuns();

	volatile boolean barrierOpen;

	final long assignedNanos = System.nanoTime();

	/** Written by the poll thread only; read by workers to tell it when there is room. */
	volatile boolean boundPaused;

	/**
	 * The records a poll returned past the bound, in offset order: taken once the partition has
	 * room again, before anything the consumer returns later, so the consumer keeps what it has
	 * fetched and does not read it again. At most one poll's records. Poll thread only.
	 */
	private final List<Delivery> heldBack = new ArrayList<>();

	/** Why the partition was stopped at a record that can go nowhere, or {@code null}. */
	volatile @Nullable String stopped;

	/** The end of the partition as of the last fetch, or -1. */
	volatile long endOffset = -1;

	/** The consumer's lag as of the last fetch: the end offset minus its position. */
	volatile long fetchLag;

	PartitionWork(TopicPartition partition, OrderedRetryContainer.Route route, int bound) {
		this.partition = partition;
		this.route = route;
		this.bound = bound;
	}

	boolean isRevoked() {
		return this.revoked;
	}

	/**
	 * Whether the consumer may fetch from the partition, as far as the partition goes: its
	 * barrier is open, it is not paused at its bound and not stopped. Poll thread only.
	 */
	boolean mayFetch() {
		return this.barrierOpen && !this.boundPaused && this.stopped == null;
	}

	/**
	 * Takes a polled record, unless the partition is at its bound: it queues behind the
	 * earlier records of its key, or parks behind them if they are parked.
	 */
	synchronized Taken take(Task task) {
		if (this.revoked || this.offsets.inFlight() >= this.bound) {
			return Taken.REFUSED;
		}
		long offset = task.delivery.offset();
		this.offsets.add(offset);
		this.lastTaken = Math.max(this.lastTaken, offset);
		if (task.key != null && this.parkedKeys.containsKey(task.key)) {
			// an earlier record of its key is parked: this one parks behind it, in order
			this.offsets.park(offset);
			this.parkedKeys.merge(task.key, 1, Integer::sum);
			return Taken.PARKED;
		}
		return enqueue(task) ? Taken.RUN : Taken.QUEUED;
	}

	/**
	 * Takes a poll's records of this partition in offset order, as many as its bound lets in,
	 * under one acquisition of the monitor: a worker finishing a record takes it too, so a
	 * monitor taken once per record would keep the poll thread waiting behind the workers.
	 * Adds the tasks that run now to {@code run} and those parked behind their key to
	 * {@code parked}; returns how many records were taken.
	 */
	synchronized int takeAll(List<Delivery> records, List<Task> run, List<Task> parked) {
		int taken = 0;
		for (Delivery record : records) {
			Task task = new Task(this, record);
			Taken outcome = take(task);
			if (outcome == Taken.REFUSED) {
				break;
			}
			if (outcome == Taken.RUN) {
				run.add(task);
			}
			else if (outcome == Taken.PARKED) {
				parked.add(task);
			}
			taken++;
		}
		return taken;
	}

	/**
	 * Parks a task that waits for a due time far ahead, with every record of its key queued
	 * behind it: their offsets stay pending (no commit passes them) but the tasks are let go.
	 * Returns false when the partition has as many parked runs as its bound: the task then
	 * waits in memory. A revoked partition takes nothing and says it parked.
	 * @param lookAt when the re-reader should read the parked records again, epoch millis
	 */
	synchronized boolean park(Task task, long lookAt) {
		if (this.revoked) {
			return true;
		}
		if (this.offsets.parkedRuns() >= this.bound) {
			return false;
		}
		int parked = 0;
		ArrayDeque<Task> queue = (task.key != null) ? this.keyQueues.remove(task.key) : null;
		if (queue != null) {
			for (Task queued : queue) {
				this.offsets.park(queued.delivery.offset());
				parked++;
			}
		}
		else {
			this.offsets.park(task.delivery.offset());
			parked = 1;
		}
		if (task.key != null) {
			this.parkedKeys.merge(task.key, parked, Integer::sum);
		}
		this.lookAt = Math.min(this.lookAt, lookAt);
		return true;
	}

	/**
	 * Takes back a parked record read again, behind the records of its key taken back before
	 * it; refused when the partition is at its bound (or revoked, or the offset is not
	 * parked): the record stays parked.
	 */
	synchronized Taken unpark(Task task) {
		if (this.revoked || this.offsets.inFlight() >= this.bound || !this.offsets.unpark(task.delivery.offset())) {
			return Taken.REFUSED;
		}
		if (task.key != null) {
			this.parkedKeys.computeIfPresent(task.key, (k, count) -> (count > 1) ? count - 1 : null);
		}
		forgetParkedKeysIfNoneParked();
		return enqueue(task) ? Taken.RUN : Taken.QUEUED;
	}

	/**
	 * Queues the admission of a replay's pending lock in its key's turn, behind the records of
	 * its key taken so far; returns it when it runs now, {@code null} when it waits its turn
	 * or is queued already.
	 */
	synchronized @Nullable Task queueAdmission(Lock pending) {
		if (this.revoked || !this.admissions.add(pending.id())) {
			return null;
		}
		Task task = new Task(this, pending, this.lastTaken);
		return enqueue(task) ? task : null;
	}

	/** An admission is done: returns the next task of its key, if one runs now. */
	synchronized @Nullable Task admitted(Task task) {
		if (this.revoked) {
			return null;
		}
		this.admissions.remove(task.admission);
		return nextOfKey(task.key);
	}

	/** A record is done: returns the next task of its key, if one runs now. */
	synchronized @Nullable Task done(Task task) {
		if (this.revoked) {
			return null;
		}
		this.offsets.done(task.delivery.offset());
		if (task.riding) {
			// a rider whose batch ran it, done before the step of the record ahead of it ended
			task.riding = false;
			ArrayDeque<Task> queue = this.keyQueues.get(task.key);
			if (queue != null && queue.peek() != task) {
				queue.remove(task);
				return null;
			}
		}
		return nextOfKey(task.key);
	}

	/**
	 * Lets records queued behind a ready head of its key ride in its batch (docs/PROTOCOL.md,
	 * rule 10): the records right behind it in its key's queue, none of them an admission,
	 * riding already or waiting to handle its failure, at most {@code most}, as long as
	 * {@code fits} lets each in. They stay
	 * queued, in order, and are not handed out when the records before them are done; each is
	 * let go by {@link #done} once it ran, or by {@link #unride} when its batch did not get to it.
	 */
	synchronized List<Task> riders(Task head, int most, java.util.function.Predicate<Task> fits) {
		ArrayDeque<Task> queue = (head.key != null && !this.revoked) ? this.keyQueues.get(head.key) : null;
		if (queue == null || most <= 0 || queue.peek() != head) {
			return List.of();
		}
		List<Task> riders = new ArrayList<>();
		java.util.Iterator<Task> behind = queue.iterator();
		behind.next();
		while (behind.hasNext() && riders.size() < most) {
			Task next = behind.next();
			// a record whose failed run waits for its key's turn to take the rest of its step rides no more
			if (next.admission != null || next.riding || next.rest != null || !fits.test(next)) {
				break;
			}
			next.riding = true;
			riders.add(next);
		}
		return riders;
	}

	/**
	 * A rider's batch did not get to it: it waits in its key's queue, handed out when the
	 * records before it are done, or now if it is first of its key. Returns it when it runs now.
	 */
	synchronized @Nullable Task unride(Task rider) {
		rider.riding = false;
		ArrayDeque<Task> queue = this.revoked ? null : this.keyQueues.get(rider.key);
		return (queue != null && queue.peek() == rider) ? rider : null;
	}

	/**
	 * A record whose step failed is no longer riding; returns whether it waits in its key's
	 * queue behind an earlier record, which hands it out once done.
	 */
	synchronized boolean unrideBehind(Task task) {
		task.riding = false;
		ArrayDeque<Task> queue = (task.key != null && !this.revoked) ? this.keyQueues.get(task.key) : null;
		return queue != null && queue.peek() != task && queue.contains(task);
	}

	/** Queues a task behind the earlier tasks of its key; returns whether it runs now. */
	private boolean enqueue(Task task) {
		if (task.key == null) {
			return true;
		}
		ArrayDeque<Task> queue = this.keyQueues.computeIfAbsent(task.key, (k) -> new ArrayDeque<>(4)); // most keys queue one or two
		queue.add(task);
		return queue.size() == 1;
	}

	/** Takes the head off a key's queue; returns the next one. */
	private @Nullable Task nextOfKey(@Nullable Bytes key) {
		if (key == null) {
			return null;
		}
		ArrayDeque<Task> queue = this.keyQueues.get(key);
		if (queue == null) {
			return null;
		}
		queue.poll();
		Task next = queue.peek();
		if (next == null) {
			this.keyQueues.remove(key);
		}
		return (next != null && next.riding) ? null : next; // a rider's batch tells its outcome
	}

	/**
	 * Revokes the partition: it takes no more change. Returns the offset to restart from if
	 * it is assigned again before a commit, or -1.
	 */
	synchronized long revoke() {
		this.revoked = true;
		return this.offsets.committable();
	}

	/** The partition starts at its committed offset: a replay admitted now goes behind it. */
	synchronized void startsAt(long committedOffset) {
		this.lastTaken = Math.max(this.lastTaken, committedOffset - 1);
	}

	synchronized int inFlight() {
		return this.offsets.inFlight();
	}

	/** Whether the partition has drained to half its bound: paused at its bound, it resumes. */
	synchronized boolean hasRoom() {
		return this.offsets.inFlight() <= this.bound / 2;
	}

	/** Keeps polled records that did not fit for later, behind those kept before them. Poll thread only. */
	void holdBack(List<Delivery> records) {
		this.heldBack.addAll(records);
	}

	/** Whether records polled past the bound wait to be taken. Poll thread only. */
	boolean hasHeldBack() {
		return !this.heldBack.isEmpty();
	}

	/** The records held back, in offset order: a view, until {@link #heldBackTaken}. Poll thread only. */
	List<Delivery> heldBack() {
		return this.heldBack;
	}

	/** Forgets the first {@code count} records held back, once taken. Poll thread only. */
	void heldBackTaken(int count) {
		this.heldBack.subList(0, count).clear();
	}

	synchronized boolean isFull() {
		return this.offsets.inFlight() >= this.bound;
	}

	synchronized long parkedCount() {
		return this.offsets.parkedCount();
	}

	/** The records of the busiest key, held or parked. */
	synchronized int busiestKeyDepth() {
		int busiest = 0;
		for (ArrayDeque<Task> queue : this.keyQueues.values()) {
			busiest = Math.max(busiest, queue.size());
		}
		for (Map.Entry<Bytes, Integer> entry : this.parkedKeys.entrySet()) {
			ArrayDeque<Task> queue = this.keyQueues.get(entry.getKey());
			busiest = Math.max(busiest, entry.getValue() + ((queue != null) ? queue.size() : 0));
		}
		return busiest;
	}

	/** The first offset not done, or -1 when nothing was taken. */
	synchronized long firstPending() {
		return this.offsets.committable();
	}

	/** The offset to commit now, or empty when it is not beyond the last commit. */
	synchronized OptionalLong committable() {
		long committable = this.offsets.committable();
		return (committable > this.committed) ? OptionalLong.of(committable) : OptionalLong.empty();
	}

	/** The offset to commit once the given records are done, or empty as above. */
	synchronized OptionalLong committableOnceDone(Set<Long> done) {
		long committable = this.offsets.committableOnceDone(done);
		return (committable > this.committed) ? OptionalLong.of(committable) : OptionalLong.empty();
	}

	synchronized void committed(long offset) {
		this.committed = Math.max(this.committed, offset);
	}

	/**
	 * Starts a pass of the re-reader if it is time: returns the first parked offset and
	 * clears the time to look, or empty when there is nothing to read again now.
	 */
	synchronized OptionalLong startPass(long now) {
		if (this.revoked || this.offsets.parkedCount() == 0 || this.lookAt > now
				|| this.offsets.inFlight() >= this.bound) {
			return OptionalLong.empty();
		}
		this.lookAt = Long.MAX_VALUE;
		return OptionalLong.of(this.offsets.nextParked(0));
	}

	/** When the re-reader should look next, after a pass was not started at {@code now}. */
	synchronized long nextLook(long now, long idleMillis) {
		if (this.revoked || this.offsets.parkedCount() == 0 || this.lookAt > now) {
			return this.lookAt;
		}
		return now + idleMillis; // due, but no room yet
	}

	/** Asks the re-reader to look no later than {@code at}; returns when it looks. */
	synchronized long lookAgainBy(long at) {
		this.lookAt = Math.min(this.lookAt, at);
		return this.lookAt;
	}

	synchronized boolean isParked(long offset) {
		return this.offsets.isParked(offset);
	}

	/** Whether a record of {@code key} is parked here. */
	synchronized boolean isParked(Bytes key) {
		return this.parkedKeys.containsKey(key);
	}

	/** The first parked offset, or -1. */
	synchronized long firstParked() {
		return this.offsets.nextParked(0);
	}

	/** Whether anything at or after {@code offset} is parked. */
	synchronized boolean parkedFrom(long offset) {
		return this.offsets.nextParked(offset) >= 0;
	}

	/**
	 * Parked offsets in [from, to) that a read from {@code from} skipped are gone from the
	 * log (deleted by retention): they are done, and returned.
	 */
	synchronized List<Long> doneIfGone(long from, long to) {
		List<Long> gone = new ArrayList<>();
		for (long offset = this.offsets.nextParked(from); offset >= 0 && offset < to; offset = this.offsets
			.nextParked(offset + 1)) {
			this.offsets.done(offset);
			gone.add(offset);
		}
		forgetParkedKeysIfNoneParked();
		return gone;
	}

	/**
	 * A parked record the log no longer holds leaves its key counted; once nothing is
	 * parked, no key is.
	 */
	private void forgetParkedKeysIfNoneParked() {
		if (this.offsets.parkedCount() == 0) {
			this.parkedKeys.clear();
		}
	}

	@Override
	public String toString() {
		return this.partition.toString();
	}

}
