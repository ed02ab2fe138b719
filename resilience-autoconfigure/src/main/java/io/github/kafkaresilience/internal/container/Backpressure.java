package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.ToIntBiFunction;

import io.github.kafkaresilience.ladder.Delivery;

/**
 * Keeps each partition within its in-flight bound: a partition at its bound is paused and
 * resumed once it has drained to half of it (to an eighth below it for a listener whose
 * results complete later, whose records in flight wait on another service, not on the
 * workers), and the poll loop does not wait out a whole poll timeout while the workers
 * make room: while a partition is paused at its bound, polls are brief.
 * <p>
 * The records a poll returned past the bound are held back, not given back to the
 * consumer by seeking: the consumer keeps what it fetched for a paused partition, so once
 * the held records are taken and the partition resumed, its next records are at hand
 * instead of a fetch away. The poll loop is woken as soon as a partition makes room when
 * no other partition has anything to fetch (a single busy partition, the last one of a
 * backlog): a poll then would only leave a fetch waiting at the broker for
 * {@code fetch.max.wait.ms}, and the resumed partition's next fetch behind it.
 */
final class Backpressure {

	/**
	 * The poll timeout while some partitions are paused at their bound and may soon
	 * resume.
	 */
	static final Duration BRIEF_POLL = Duration.ofMillis(10);

	/**
	 * Signalled by a worker when a partition paused at its bound may take records again.
	 */
	private final Object room = new Object();

	private volatile boolean roomMade;

	/**
	 * Waits for a partition paused at its bound to make room when polling could bring
	 * nothing else: when every partition is paused at its bound, up to {@code timeout};
	 * when the others have nothing to fetch, up to a brief poll, so that records arriving
	 * there wait no longer than they would in a brief poll. When only some are paused and
	 * others may have records, the poll itself is brief, for the same reason. Returns the
	 * timeout for the next poll.
	 * @param partitions the assigned partitions
	 * @param timeout the poll timeout
	 * @param caughtUp whether a partition has nothing left to fetch as far as the
	 * consumer knows
	 * @param running whether to go on waiting
	 */
	Duration awaitRoom(Collection<PartitionWork> partitions, Duration timeout, Predicate<PartitionWork> caughtUp,
			BooleanSupplier running) {
		boolean anyFull = false;
		boolean allFull = !partitions.isEmpty();
		boolean othersCaughtUp = true;
		for (PartitionWork work : partitions) {
			// paused at its bound but drained already: resumed before this poll, not
			// waited for; with
			// room for the records it holds back: they are taken before this poll
			boolean full = work.boundPaused && !work.canTakeMore();
			anyFull |= full;
			allFull &= full;
			othersCaughtUp &= full || !work.mayFetch() || caughtUp.test(work);
		}
		if (allFull) {
			waitForRoom(timeout, running);
		}
		else if (anyFull && othersCaughtUp) {
			waitForRoom(BRIEF_POLL.compareTo(timeout) < 0 ? BRIEF_POLL : timeout, running);
		}
		this.roomMade = false;
		return (anyFull && BRIEF_POLL.compareTo(timeout) < 0) ? BRIEF_POLL : timeout;
	}

	private void waitForRoom(Duration timeout, BooleanSupplier running) {
		long deadline = System.nanoTime() + timeout.toNanos();
		synchronized (this.room) {
			long left;
			while (!this.roomMade && running.getAsBoolean() && (left = deadline - System.nanoTime()) > 0) {
				try {
					TimeUnit.NANOSECONDS.timedWait(this.room, left);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					break;
				}
			}
		}
	}

	/**
	 * Hands a poll's records of a partition to it, in order, as far as its bound lets
	 * them in; the rest are held back behind any held back before, and a partition that
	 * is full now is marked paused at its bound now: not a poll later, so that the
	 * workers that drain it wake the poll loop. Poll thread only.
	 * @param take hands records to their partition, in order; returns how many it took
	 */
	void offer(PartitionWork work, List<Delivery> records, ToIntBiFunction<PartitionWork, List<Delivery>> take) {
		int taken = work.heldBack.isEmpty() ? take.applyAsInt(work, records) : 0;
		if (taken < records.size()) {
			work.heldBack.add(records.subList(taken, records.size()));
		}
		if (!work.heldBack.isEmpty() || work.isFull()) {
			work.boundPaused = true;
		}
	}

	/**
	 * Takes the records held back at their partition's bound, in order, as far as it has
	 * room: as soon as any record of it is done, not only once it has drained to where it
	 * resumes, for records already in memory cost no fetch, and taking them at every turn
	 * of the poll loop keeps the workers supplied while the partition stays paused. A
	 * worker that makes room for them (for all, or for an eighth of the bound) wakes the
	 * poll loop. Not while the listener is held paused, nor for a partition stopped at a
	 * record that can go nowhere. Poll thread only, before {@link #apply}.
	 */
	void takeHeldBack(Collection<PartitionWork> partitions, boolean held,
			ToIntBiFunction<PartitionWork, List<Delivery>> take) {
		if (held) {
			return;
		}
		for (PartitionWork work : partitions) {
			if (!work.heldBack.isEmpty() && work.stopped == null && !work.isFull()) {
				work.heldBack.taken(take.applyAsInt(work, work.heldBack.records()));
			}
		}
	}

	/**
	 * A record of a partition is done: wakes the poll loop if that made room, for polls
	 * or for the records held back.
	 */
	void recordDone(PartitionWork work) {
		if (work.boundPaused && !this.roomMade && work.canTakeMore()) {
			synchronized (this.room) {
				this.roomMade = true;
				this.room.notifyAll();
			}
		}
	}

	/**
	 * Marks the partitions at their bound paused, and those drained to half of it that
	 * hold no records back no longer: the poll loop's settling then pauses or resumes
	 * them (see {@link PauseRequest.Consumption#settle}). Poll thread only.
	 */
	void mark(Collection<PartitionWork> partitions) {
		for (PartitionWork work : partitions) {
			if (!work.boundPaused && work.isFull()) {
				work.boundPaused = true;
			}
			else if (work.boundPaused && work.hasRoom() && work.heldBack.isEmpty()) {
				work.boundPaused = false;
			}
		}
	}

	/**
	 * The timeout of the poll about to be made: brief while a partition stays paused at
	 * its bound after {@link #apply}. A worker that makes room wakes a wait for room, not
	 * a poll, and taking records held back can leave a partition paused though it was not
	 * full when {@link #awaitRoom} chose the timeout; a whole poll timeout then left the
	 * workers idle once they had drained it. Poll thread only.
	 */
	static Duration pollTimeout(Collection<PartitionWork> partitions, Duration timeout) {
		if (BRIEF_POLL.compareTo(timeout) < 0) {
			for (PartitionWork work : partitions) {
				if (work.boundPaused) {
					return BRIEF_POLL;
				}
			}
		}
		return timeout;
	}

	/** Pauses the poll loop after a failed poll, unless woken by {@link #wakeAll()}. */
	void pauseAfterFailure(long millis, BooleanSupplier running) {
		synchronized (this.room) {
			if (running.getAsBoolean()) {
				try {
					this.room.wait(millis);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		}
	}

	/** Ends every wait: the container is stopping. */
	void wakeAll() {
		synchronized (this.room) {
			this.room.notifyAll();
		}
	}

}
