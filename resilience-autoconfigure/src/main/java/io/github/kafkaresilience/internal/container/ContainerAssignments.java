package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.internal.support.Callbacks;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * What the rebalance callbacks of one poll loop's consumer do to its container, on its
 * poll thread: the partitions assigned get their work, those revoked let their handler
 * runs end and commit, and the container's observers and waiting records hear of the
 * change.
 */
final class ContainerAssignments implements BarrierRebalanceListener.Assignments {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(ContainerAssignments.class);

	private final String id;

	private final Map<String, RetryContainer.Route> routes;

	private final ContainerSettings settings;

	private final Partitions partitions;

	private final PollLoop loop;

	private final OffsetCommitter committer;

	private final ContainerOffsets offsets;

	private final RecordIntake intake;

	private final KeyWaiters keyWaiters;

	private final ResilienceObserver observer;

	private final Callbacks assignmentCallbacks;

	private final @Nullable Tenants tenants;

	/** Whether a partition paused at its bound resumes near it, not at half of it. */
	private final boolean resumeNearBound;

	/**
	 * @param resumeNearBound whether a partition paused at its bound resumes once an
	 * eighth of it is free, not half: for a listener whose results complete later, whose
	 * records in flight wait on something else than the workers, so that the wait is
	 * spent full
	 */
	ContainerAssignments(String id, Map<String, RetryContainer.Route> routes, ContainerSettings settings,
			Partitions partitions, PollLoop loop, OffsetCommitter committer, ContainerOffsets offsets,
			RecordIntake intake, KeyWaiters keyWaiters, ResilienceObserver observer, Callbacks assignmentCallbacks,
			boolean resumeNearBound, @Nullable Tenants tenants) {
		this.resumeNearBound = resumeNearBound;
		this.tenants = tenants;
		this.id = id;
		this.routes = routes;
		this.settings = settings;
		this.partitions = partitions;
		this.loop = loop;
		this.committer = committer;
		this.offsets = offsets;
		this.intake = intake;
		this.keyWaiters = keyWaiters;
		this.observer = observer;
		this.assignmentCallbacks = assignmentCallbacks;
	}

	@Override
	public PartitionWork assign(TopicPartition partition) {
		int bound = this.settings.maxInFlightPerPartition();
		return new PartitionWork(partition, route(partition), bound,
				this.resumeNearBound ? bound - bound / 8 : bound / 2, this.tenants);
	}

	@Override
	public boolean readFromBeginning(TopicPartition partition) {
		return route(partition).router().plan().stageOf(partition.topic()) > 0;
	}

	/**
	 * The route of an assigned partition: the container subscribes to its routes' topics
	 * only.
	 */
	private RetryContainer.Route route(TopicPartition partition) {
		return Objects.requireNonNull(this.routes.get(partition.topic()), partition.topic());
	}

	/**
	 * Lets the handler runs under way on the revoked partitions end (up to the shutdown
	 * timeout; no new one starts), then commits them: a record running when its partition
	 * moved is not handled again by the next owner.
	 */
	@Override
	public void revoking(Collection<TopicPartition> partitions) {
		List<HandlerRuns> runs = new ArrayList<>();
		for (TopicPartition partition : partitions) {
			PartitionWork work = this.partitions.get(partition);
			if (work != null) {
				runs.add(work.runs);
			}
		}
		if (!HandlerRuns.closeAndAwait(runs, this.settings.shutdownTimeout())) {
			logger.warn("Listener '" + this.id + "' gives up " + partitions + " with handlers " + "still running after "
					+ this.settings.shutdownTimeout() + ": their records run again on the next owner");
		}
		this.loop.commits().revoking(this.loop.consumer(), partitions);
	}

	@Override
	public void changed(String kind, Collection<TopicPartition> partitions) {
		if ("assigned".equals(kind)) {
			this.committer.polled(this.loop.consumer(), this.offsets);
		}
		else {
			this.keyWaiters.forgetRevoked();
		}
		this.observer.rebalanced(this.id, kind, partitions);
		this.assignmentCallbacks.run();
	}

	@Override
	public void opened(PartitionWork work, Duration waited) {
		this.observer.barrierOpened(this.id, work.route.registry().ownership().group(), work.partition, waited);
		if (work.route.router().plan().stageOf(work.partition.topic()) == 0) {
			work.route.registry()
				.pending(work.partition.partition())
				.forEach((lock) -> this.intake.admissionNeeded(work.route, lock));
		}
	}

	@Override
	public void settlePauses() {
		this.loop.settlePauses();
	}

	@Override
	public void onPollThread(Runnable action) {
		this.loop.onPollThread(action);
	}

}
