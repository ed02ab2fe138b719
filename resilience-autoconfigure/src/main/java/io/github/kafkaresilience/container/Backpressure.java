package io.github.kafkaresilience.container;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.consumer.Consumer;

/**
 * Keeps each partition within its in-flight bound: a partition at its bound is paused and
 * resumed once it has drained to half of it, and the poll loop does not wait out a whole
 * poll timeout while the workers make room.
 */
final class Backpressure {

	/** The poll timeout while some partitions are paused at their bound and may soon resume. */
	static final Duration BRIEF_POLL = Duration.ofMillis(10);

	/** Signalled by a worker when a partition paused at its bound has drained to half of it. */
	private final Object room = new Object();

	private volatile boolean roomMade;

	/**
	 * When every partition is paused at its bound, a poll could only wait out its timeout while
	 * the workers drain them: waits for the first one to drain to half the bound instead, so it
	 * is resumed and fetched from at once. When only some are paused, polls briefly, for the
	 * same reason. Returns the timeout for the next poll.
	 * @param partitions the assigned partitions
	 * @param timeout the poll timeout
	 * @param running whether to go on waiting
	 */
	Duration awaitRoom(Collection<PartitionWork> partitions, Duration timeout, BooleanSupplier running) {
		boolean anyFull = false;
		boolean allFull = !partitions.isEmpty();
		for (PartitionWork work : partitions) {
			anyFull |= work.boundPaused;
			allFull &= work.boundPaused;
		}
		if (allFull) {
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
		this.roomMade = false;
		return (anyFull && BRIEF_POLL.compareTo(timeout) < 0) ? BRIEF_POLL : timeout;
	}

	/** A record of a partition is done: wakes the poll loop if that made room. */
	void recordDone(PartitionWork work) {
		if (work.boundPaused && !this.roomMade && work.hasRoom()) {
			synchronized (this.room) {
				this.roomMade = true;
				this.room.notifyAll();
			}
		}
	}

	/**
	 * Pauses the partitions at their bound and resumes those drained to half of it whose
	 * barrier is open and that are not stopped, unless the whole listener is held paused.
	 * Poll thread only.
	 */
	void apply(Consumer<?, ?> consumer, Collection<PartitionWork> partitions, boolean held) {
		for (PartitionWork work : partitions) {
			if (!work.boundPaused && work.isFull()) {
				work.boundPaused = true;
				consumer.pause(List.of(work.partition));
			}
			else if (work.boundPaused && work.hasRoom()) {
				work.boundPaused = false;
				if (!held && work.mayFetch()) {
					consumer.resume(List.of(work.partition));
				}
			}
		}
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
