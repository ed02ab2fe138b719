package io.github.kafkaresilience.container;

import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * The application's request to pause a listener, or the listener's hold during an outage, and
 * how the container carries either out: the
 * workers hold the tasks that become ready, and the poll thread of each of the container's
 * consumers pauses every partition assigned to it (one a rebalance keeps or brings too) and
 * lets nothing resume one until the application resumes the listener; the partitions free to
 * run are then resumed. The consumers keep polling meanwhile, so they stay in their group.
 */
final class PauseRequest {

	private final Workers workers;

	/** Whether the application asked the container to pause; the poll thread applies it. */
	private volatile boolean requested;

	/** Whether the listener holds for an outage; the poll thread applies it as a pause. */
	private volatile boolean outage;

	/** Whether a partition is of a main topic, not of a stage. */
	private final Predicate<TopicPartition> mainTopic;

	/** A request of the application only: no partition is held for an outage. */
	PauseRequest(Workers workers) {
		this(workers, (partition) -> true);
	}

	/**
	 * @param workers the workers to hold
	 * @param mainTopic whether a partition is of a main topic: during an outage those stay
	 * paused, the stages' are read on
	 */
	PauseRequest(Workers workers, Predicate<TopicPartition> mainTopic) {
		this.workers = workers;
		this.mainTopic = mainTopic;
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

	/** Forgets the request, as the container starts new consumers. */
	void clear() {
		this.requested = false;
		this.outage = false;
	}

	/** How one consumer of the container carries out the request: it pauses its partitions. */
	Consumption consumption() {
		return new Consumption();
	}

	/** The request as one consumer has carried it out. Poll thread only. */
	final class Consumption {

		/** Whether the consumer's partitions are paused for {@link #requested}. */
		private boolean applied;

		/** Whether its main-topic partitions are paused for {@link #outage}. */
		private boolean outageApplied;

		private Consumption() {
		}

		/**
		 * Whether the consumer's partitions are paused for the request: nothing may resume one
		 * meanwhile.
		 */
		boolean held() {
			return this.applied;
		}

		/**
		 * Pauses every partition assigned to the consumer while the application asks for it
		 * (nothing resumes a partition meanwhile; a partition a rebalance kept or brought is
		 * paused here too), and resumes those free to run once it no longer does.
		 * @param consumer the consumer
		 * @param partitions the partitions assigned to it
		 * @param events publishes the paused and resumed events
		 */
		void apply(Consumer<?, ?> consumer, Collection<PartitionWork> partitions, ContainerEvents events) {
			if (PauseRequest.this.requested) {
				Set<TopicPartition> assigned = consumer.assignment();
				if (!this.applied || !consumer.paused().containsAll(assigned)) {
					consumer.pause(assigned);
					if (!this.applied) {
						this.applied = true;
						events.paused(assigned);
					}
				}
				return;
			}
			if (this.applied) {
				this.applied = false;
				List<TopicPartition> free = partitions.stream()
					.filter(PartitionWork::mayFetch)
					.map((work) -> work.partition)
					.filter((partition) -> !PauseRequest.this.outage || !PauseRequest.this.mainTopic.test(partition))
					.toList();
				consumer.resume(free);
				events.resumed(free);
			}
			applyOutage(consumer, partitions, events);
		}

		/**
		 * While the listener holds for an outage, keeps its main-topic partitions paused (a
		 * partition that backpressure resumed, or a rebalance brought, is paused again before
		 * the poll). Its stage partitions are read on: their records are held by the workers
		 * like any other, and are what a probe can run, since a record of the main topic whose
		 * key is held would only follow its key into the ladder.
		 */
		private void applyOutage(Consumer<?, ?> consumer, Collection<PartitionWork> partitions,
				ContainerEvents events) {
			if (PauseRequest.this.outage) {
				List<TopicPartition> main = consumer.assignment().stream().filter(PauseRequest.this.mainTopic).toList();
				if (!this.outageApplied || !consumer.paused().containsAll(main)) {
					consumer.pause(main);
					if (!this.outageApplied) {
						this.outageApplied = true;
						events.paused(main);
					}
				}
			}
			else if (this.outageApplied) {
				this.outageApplied = false;
				List<TopicPartition> free = partitions.stream()
					.filter(PartitionWork::mayFetch)
					.map((work) -> work.partition)
					.filter(PauseRequest.this.mainTopic)
					.toList();
				consumer.resume(free);
				events.resumed(free);
			}
		}

	}

}
