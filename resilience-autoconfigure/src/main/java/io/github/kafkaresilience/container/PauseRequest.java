package io.github.kafkaresilience.container;

import java.util.Collection;
import java.util.List;
import java.util.Set;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * The application's request to pause a listener, or the listener's hold during an outage, and
 * how the container carries either out: the
 * workers hold the tasks that become ready, and the poll thread pauses every assigned
 * partition (one a rebalance keeps or brings too) and lets nothing resume one until the
 * application resumes the listener; the partitions free to run are then resumed. The consumer
 * keeps polling meanwhile, so it stays in its group.
 */
final class PauseRequest {

	private final Workers workers;

	/** Whether the application asked the container to pause; the poll thread applies it. */
	private volatile boolean requested;

	/** Whether the listener holds for an outage; the poll thread applies it as a pause. */
	private volatile boolean outage;

	/** Whether the consumer's partitions are paused for {@link #requested}; poll thread only. */
	private boolean applied;

	PauseRequest(Workers workers) {
		this.workers = workers;
	}

	/**
	 * Asks for a pause: the workers hold the tasks that become ready from now on (the running
	 * ones finish) and the poll thread pauses the partitions at its next {@link #apply}.
	 */
	void pause() {
		this.requested = true;
		this.workers.hold(Workers.APPLICATION);
	}

	/** Withdraws the request: the workers run the held tasks, and the partitions are resumed. */
	void resume() {
		this.requested = false;
		this.workers.release(Workers.APPLICATION);
	}

	/**
	 * Holds the listener for an outage: as a pause, but the application's own pause and resume
	 * neither end nor outlast it.
	 */
	void holdForOutage() {
		this.outage = true;
		this.workers.hold(Workers.OUTAGE);
	}

	/** Ends the hold for an outage: the listener runs again unless the application paused it. */
	void endOutageHold() {
		this.outage = false;
		this.workers.release(Workers.OUTAGE);
	}

	/** Whether the listener holds for an outage. */
	boolean isHoldingForOutage() {
		return this.outage;
	}

	/** Whether {@link #pause()} was called and {@link #resume()} not since. */
	boolean isRequested() {
		return this.requested;
	}

	/**
	 * Whether the consumer's partitions are paused for the request: nothing may resume one
	 * meanwhile. Poll thread only.
	 */
	boolean held() {
		return this.applied;
	}

	/** Forgets the request and its pause, as the container starts a new consumer. */
	void clear() {
		this.requested = false;
		this.outage = false;
		this.applied = false;
	}

	/**
	 * Pauses every assigned partition while the application asks for it (nothing resumes a
	 * partition meanwhile; a partition a rebalance kept or brought is paused here too), and
	 * resumes those free to run once it no longer does. Poll thread only.
	 * @param consumer the container's consumer
	 * @param partitions the assigned partitions
	 * @param events publishes the paused and resumed events
	 */
	void apply(Consumer<?, ?> consumer, Collection<PartitionWork> partitions, ContainerEvents events) {
		if (this.requested || this.outage) {
			Set<TopicPartition> assigned = consumer.assignment();
			if (!this.applied || !consumer.paused().containsAll(assigned)) {
				consumer.pause(assigned);
				if (!this.applied) {
					this.applied = true;
					events.paused(assigned);
				}
			}
		}
		else if (this.applied) {
			this.applied = false;
			List<TopicPartition> free = partitions.stream()
				.filter(PartitionWork::mayFetch)
				.map((work) -> work.partition)
				.toList();
			consumer.resume(free);
			events.resumed(free);
		}
	}

}
