package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;

/**
 * The rebalance callbacks of a container's consumer, behind the {@link SyncBarrier}: an
 * assigned partition starts at its committed offset, paused until the lock view is
 * current; a revoked one lets its writes under way finish and commits before it is
 * dropped. The application's own rebalance listener runs in the same callbacks, and its
 * failure does not keep the library from committing, dropping or pausing partitions.
 */
final class BarrierRebalanceListener implements ConsumerRebalanceListener {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(BarrierRebalanceListener.class);

	/** What the callbacks do to the container. Called on the poll thread. */
	interface Assignments {

		/** Creates the work of a newly assigned partition. */
		PartitionWork assign(TopicPartition partition);

		/**
		 * Whether a partition the group never committed on is read from its beginning: a
		 * retry topic is the library's own, and a record moved there before the first
		 * fetch must not be skipped, whatever the application's
		 * {@code auto.offset.reset}.
		 */
		boolean readFromBeginning(TopicPartition partition);

		/** Lets the writes under way of revoked partitions finish, and commits them. */
		void revoking(Collection<TopicPartition> partitions);

		/**
		 * The assignment changed: partitions were {@code kind} ("assigned", "revoked",
		 * "lost").
		 */
		void changed(String kind, Collection<TopicPartition> partitions);

		/** A partition's barrier opened after {@code waited}: it may be resumed. */
		void opened(PartitionWork work, Duration waited);

		/**
		 * Pauses the consumer's assigned partitions that have a reason to be paused, and
		 * resumes the others, now. Poll thread only.
		 */
		void settlePauses();

		/** Runs an action on the poll thread, before its next poll. */
		void onPollThread(Runnable action);

	}

	private final String id;

	private final Consumer<?, ?> consumer;

	private final SyncBarrier barrier;

	private final Partitions partitions;

	private final Assignments assignments;

	private final @Nullable ConsumerAwareRebalanceListener userListener;

	BarrierRebalanceListener(String id, Consumer<?, ?> consumer, SyncBarrier barrier, Partitions partitions,
			Assignments assignments, @Nullable ConsumerAwareRebalanceListener userListener) {
		this.id = id;
		this.consumer = consumer;
		this.barrier = barrier;
		this.partitions = partitions;
		this.assignments = assignments;
		this.userListener = userListener;
	}

	@Override
	public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
		logger.info("Listener '" + this.id + "' revoked " + revoked);
		callUser("onPartitionsRevokedBeforeCommit",
				(user) -> user.onPartitionsRevokedBeforeCommit(this.consumer, revoked));
		try {
			this.assignments.revoking(revoked);
		}
		catch (RuntimeException ex) {
			logger.warn("Listener '" + this.id + "' could not commit revoked partitions", ex);
		}
		drop(revoked, "revoked");
		callUser("onPartitionsRevokedAfterCommit",
				(user) -> user.onPartitionsRevokedAfterCommit(this.consumer, revoked));
	}

	@Override
	public void onPartitionsLost(Collection<TopicPartition> lost) {
		drop(lost, "lost");
		callUser("onPartitionsLost", (user) -> user.onPartitionsLost(this.consumer, lost));
	}

	@Override
	public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
		logger.info("Listener '" + this.id + "' assigned " + assigned);
		for (TopicPartition tp : assigned) {
			PartitionWork work = this.assignments.assign(tp);
			this.partitions.add(work);
			closeBarrier(work);
		}
		// behind their barriers before the poll under way returns any of their records
		this.assignments.settlePauses();
		seekToCommitted(assigned);
		this.assignments.changed("assigned", assigned);
		callUser("onPartitionsAssigned", (user) -> user.onPartitionsAssigned(this.consumer, assigned));
	}

	private void closeBarrier(PartitionWork work) {
		this.barrier.close(work.partition, work.route.registry())
			.whenComplete((waited, ex) -> this.assignments.onPollThread(() -> open(work, waited, ex)));
	}

	/**
	 * Starts every assigned partition at its committed offset. A consumer keeps its fetch
	 * position for a partition it gets back in a rebalance, but the records it had
	 * fetched past the commit were dropped with the revoked partition and must be read
	 * again. Retry topics are the library's own: a group that has never committed on one
	 * reads it from the beginning whatever the application's auto.offset.reset, or a
	 * record moved there before the first fetch would be skipped.
	 */
	private void seekToCommitted(Collection<TopicPartition> assigned) {
		if (assigned.isEmpty()) {
			return;
		}
		Map<TopicPartition, OffsetAndMetadata> committed = this.consumer.committed(new HashSet<>(assigned));
		List<TopicPartition> fromBeginning = new ArrayList<>();
		for (TopicPartition tp : assigned) {
			OffsetAndMetadata offset = committed.get(tp);
			long dropped = this.partitions.takeDroppedAt(tp);
			if (offset != null) {
				this.consumer.seek(tp, offset);
				PartitionWork work = this.partitions.get(tp);
				if (work != null) {
					work.startsAt(offset.offset());
				}
			}
			else if (dropped >= 0) {
				this.consumer.seek(tp, dropped);
			}
			else if (this.assignments.readFromBeginning(tp)) {
				fromBeginning.add(tp);
			}
		}
		if (!fromBeginning.isEmpty()) {
			this.consumer.seekToBeginning(fromBeginning);
		}
	}

	private void open(PartitionWork work, @Nullable Duration waited, @Nullable Throwable ex) {
		if (work.isRevoked() || !this.partitions.isCurrent(work)) {
			return;
		}
		if (ex != null || waited == null) {
			logger.warn(
					"Listener '" + this.id + "' could not sync the lock table for " + work.partition + "; trying again",
					ex);
			closeBarrier(work);
			return;
		}
		work.barrierOpen = true; // resumed by the settling before the next poll
		if (logger.isDebugEnabled()) {
			logger.debug("Listener '" + this.id + "' opened " + work.partition + " after " + waited.toMillis() + " ms");
		}
		this.assignments.opened(work, waited);
	}

	private void drop(Collection<TopicPartition> dropped, String kind) {
		this.partitions.drop(dropped);
		this.assignments.changed(kind, dropped);
	}

	/**
	 * Calls the application's rebalance listener; its failure is logged and does not keep
	 * the library from committing, dropping or pausing partitions.
	 */
	private void callUser(String callback, java.util.function.Consumer<ConsumerAwareRebalanceListener> call) {
		ConsumerAwareRebalanceListener user = this.userListener;
		if (user == null) {
			return;
		}
		try {
			call.accept(user);
		}
		catch (RuntimeException ex) {
			logger.warn("Listener '" + this.id + "': the application's rebalance listener failed in " + callback, ex);
		}
	}

}
