package io.github.kafkaresilience.internal.container;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * The application's request to pause a listener, or the listener's hold during an outage,
 * and how the container carries either out: the workers hold the tasks that become ready,
 * and the poll thread of each of the container's consumers settles its partitions' pauses
 * in one place ({@link Consumption#settle}), against these requests and each partition's
 * own reasons. The consumers keep polling meanwhile, so they stay in their group.
 */
final class PauseRequest {

	private final Workers workers;

	/**
	 * Whether the application asked the container to pause; the poll thread applies it.
	 */
	private volatile boolean requested;

	/**
	 * Whether the listener holds for an outage; the poll thread applies it as a pause.
	 */
	private volatile boolean outage;

	/** Whether a partition is of a main topic, not of a stage. */
	private final Predicate<TopicPartition> mainTopic;

	/** A request of the application only: no partition is held for an outage. */
	PauseRequest(Workers workers) {
		this(workers, (partition) -> true);
	}

	/**
	 * @param workers the workers to hold
	 * @param mainTopic whether a partition is of a main topic: during an outage those
	 * stay paused, the stages' are read on
	 */
	PauseRequest(Workers workers, Predicate<TopicPartition> mainTopic) {
		this.workers = workers;
		this.mainTopic = mainTopic;
	}

	/**
	 * Asks for a pause: the workers hold the tasks that become ready from now on (the
	 * running ones finish) and the poll thread pauses the partitions at its next
	 * settling.
	 */
	void pause() {
		this.requested = true;
		this.workers.hold(Holds.APPLICATION);
	}

	/**
	 * Withdraws the request: the workers run the held tasks, and the partitions are
	 * resumed.
	 */
	void resume() {
		this.requested = false;
		this.workers.release(Holds.APPLICATION);
	}

	/**
	 * Holds the listener for an outage: as a pause, but the application's own pause and
	 * resume neither end nor outlast it.
	 */
	void holdForOutage() {
		this.outage = true;
		this.workers.hold(Holds.OUTAGE);
	}

	/**
	 * Ends the hold for an outage: the listener runs again unless the application paused
	 * it.
	 */
	void endOutageHold() {
		this.outage = false;
		this.workers.release(Holds.OUTAGE);
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

	/**
	 * How one consumer of the container carries out the request: it pauses its
	 * partitions.
	 */
	Consumption consumption() {
		return new Consumption();
	}

	/**
	 * The only place where the container pauses and resumes a consumer's partitions: once
	 * per poll, and in the assignment callback, it pauses each assigned partition that
	 * has a reason to be paused and resumes each paused one that has none. The reasons:
	 * the application's pause (every partition), the outage hold (main-topic partitions),
	 * and the partition's own ({@link PartitionWork#mayFetch()}: its barrier closed, its
	 * in-flight bound reached, or stopped at a record that can go nowhere). Poll thread
	 * only.
	 */
	final class Consumption {

		/** Whether the consumer's partitions are paused for {@link #requested}. */
		private boolean applied;

		/** Whether its main-topic partitions are paused for {@link #outage}. */
		private boolean outageApplied;

		private Consumption() {
		}

		/**
		 * Whether the consumer's partitions are paused for the request: nothing may
		 * resume one meanwhile.
		 */
		boolean held() {
			return this.applied;
		}

		/**
		 * Pauses the assigned partitions that have a reason to be paused and resumes the
		 * paused ones that have none, and publishes the paused and resumed events of the
		 * application's pause and of the outage hold.
		 * @param consumer the consumer
		 * @param partitions the partitions assigned to it
		 * @param events publishes the paused and resumed events
		 */
		void settle(Consumer<?, ?> consumer, Collection<PartitionWork> partitions, ContainerEvents events) {
			boolean requested = PauseRequest.this.requested;
			boolean outage = PauseRequest.this.outage;
			Map<TopicPartition, PartitionWork> works = new HashMap<>();
			partitions.forEach((work) -> works.put(work.partition, work));
			Set<TopicPartition> assigned = consumer.assignment();
			Set<TopicPartition> paused = consumer.paused();
			List<TopicPartition> pausing = new ArrayList<>();
			List<TopicPartition> resuming = new ArrayList<>();
			for (TopicPartition partition : assigned) {
				PartitionWork work = works.get(partition);
				boolean pause = requested || (outage && PauseRequest.this.mainTopic.test(partition)) || work == null
						|| !work.mayFetch();
				if (pause && !paused.contains(partition)) {
					pausing.add(partition);
				}
				else if (!pause && paused.contains(partition)) {
					resuming.add(partition);
				}
			}
			if (!pausing.isEmpty()) {
				consumer.pause(pausing);
			}
			if (!resuming.isEmpty()) {
				consumer.resume(resuming);
			}
			if (requested != this.applied) {
				this.applied = requested;
				if (requested) {
					events.paused(assigned);
				}
				else {
					events.resumed(resuming.stream()
						.filter((partition) -> !outage || !PauseRequest.this.mainTopic.test(partition))
						.toList());
				}
			}
			if (!requested && outage != this.outageApplied) {
				this.outageApplied = outage;
				if (outage) {
					events.paused(assigned.stream().filter(PauseRequest.this.mainTopic).toList());
				}
				else {
					events.resumed(resuming.stream().filter(PauseRequest.this.mainTopic).toList());
				}
			}
		}

	}

}
