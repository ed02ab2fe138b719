package io.github.kafkaresilience.container;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import io.github.kafkaresilience.ladder.BatchHandler;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.StageRouter;
import io.github.kafkaresilience.lock.LockReaper;
import io.github.kafkaresilience.lock.LockRegistry;
import io.github.kafkaresilience.outage.OutageBreaker;
import io.github.kafkaresilience.support.Callbacks;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;

/**
 * Runs one {@code @OrderedRetryListener}: a consumer of its main topics and one of their retry
 * topics, each in the listener's group with a poll loop of its own ({@link PollLoop}) that never
 * sleeps or blocks on a record, and workers that run records concurrently across keys and in
 * order within a key of a partition.
 * <p>
 * A record that waits (for its due time, for its predecessor, or for the lock tailer) holds
 * up only its own key in its partition, and no thread. Offsets are committed at the
 * contiguous boundary: the lowest offset not yet done. A partition with too many records in
 * flight is paused until they drain.
 *
 * @since 0.1.0
 */
public class OrderedRetryContainer {

	private static final Log logger = LogFactory.getLog(OrderedRetryContainer.class);

	/** The ladder of one main topic as this container runs it. */
	public record Route(StageRouter router, LockRegistry registry) {
	}

	/**
	 * Zombie lock reaping for the container's main topics: every {@code interval}, through the
	 * reapers {@code open} makes at each start (their admin client is closed at stop).
	 */
	public record Reaping(Duration interval, Supplier<Reapers> open) {
	}

	/** The reapers of one run of the container, one per main topic, and their admin client. */
	public record Reapers(List<LockReaper> reapers, AutoCloseable admin) {
	}

	/**
	 * Creates the container's consumers, both in the listener's group: one for its main topics,
	 * one for their retry topics.
	 */
	public record Consumers(Supplier<Consumer<byte[], byte[]>> main, Supplier<Consumer<byte[], byte[]>> retries) {
	}

	private final String id;

	private final Map<String, Route> routesByTopic;

	private final Consumers consumerFactory;

	private final SyncBarrier barrier;

	private final @Nullable ConsumerAwareRebalanceListener userListener;

	private final ContainerSettings settings;

	private final Clock clock;

	private final ResilienceObserver observer;

	private final OffsetCommitter committer;

	private final Partitions partitions = new Partitions();

	private final ContainerOffsets offsets;

	private final ContainerStats stats = new ContainerStats(this.partitions);

	private final RecordRunner runner;

	private final Housekeeping housekeeping;

	private final PauseRequest pauseRequest;

	private final AtomicBoolean running = new AtomicBoolean();

	private final Callbacks assignmentCallbacks;

	/** The poll loops of the current run: the main topics' and, with retry stages, the stages'. */
	private volatile List<PollLoop> loops = List.of();

	private volatile @Nullable ContainerRun run;

	private @Nullable Supplier<Consumer<byte[], byte[]>> rereaderFactory;

	private ContainerEvents events = ContainerEvents.NONE;

	private volatile @Nullable Rereader rereader;

	private volatile @Nullable OutageHold outage;

	/**
	 * @param writes how the listener's steps write and its offsets commit: by the consumer,
	 * or in transactions that also carry the writes of steps
	 */
	public OrderedRetryContainer(String id, Map<String, Route> routesByTopic,
			Consumers consumerFactory, SyncBarrier barrier,
			@Nullable ConsumerAwareRebalanceListener userListener, ContainerSettings settings, Clock clock,
			@Nullable Reaping reaping, ResilienceObserver observer, DualWriteStrategy.Writes writes) {
		this.committer = writes.committer();
		this.id = id;
		this.assignmentCallbacks = new Callbacks("an assignment change of listener '" + id + "'");
		this.housekeeping = new Housekeeping(id, reaping);
		this.observer = observer;
		this.routesByTopic = Map.copyOf(routesByTopic);
		this.consumerFactory = consumerFactory;
		this.barrier = barrier;
		this.userListener = userListener;
		this.settings = settings;
		this.clock = clock;
		this.offsets = new ContainerOffsets(id, this.partitions);
		this.runner = new RecordRunner(id, settings, clock, this.committer, this.offsets, this.partitions,
				(work) -> loopOf(work.partition).backpressure().recordDone(work));
		this.pauseRequest = new PauseRequest(this.runner.workers(), (partition) -> isMainTopic(partition.topic()));
		Map<LockRegistry, Route> registries = new HashMap<>();
		this.routesByTopic.values().forEach((route) -> registries.putIfAbsent(route.registry(), route));
		registries.forEach((registry, route) -> {
			registry.addListener(this.runner.keyWaiters()::keyChanged);
			registry.addPendingListener((lock) -> this.runner.admissionNeeded(route, lock));
			registry.addCommandListener((command) -> this.runner.commandArrived(route, command));
		});
	}

	public String id() {
		return this.id;
	}

	/**
	 * Lets the container park retries that are due later than
	 * {@link ContainerSettings#parkAfter()}: instead of holding them, it reads them again with a
	 * consumer of its own (assigned, never in the group, never committing) shortly before
	 * they are due. Without it, a partition whose in-flight records all wait stays paused
	 * until they are due.
	 * @param rereaders creates that consumer
	 */
	public synchronized void parkWith(Supplier<Consumer<byte[], byte[]>> rereaders) {
		this.rereaderFactory = rereaders;
	}

	/**
	 * Holds this listener's records while {@code breaker} is open, instead of moving them into
	 * the ladder; the breaker must observe this listener's handler.
	 */
	public synchronized void holdOnOutage(OutageBreaker breaker) {
		OutageHold hold = new OutageHold(breaker, this.runner.workers(), this.pauseRequest, () -> load().inFlight());
		this.runner.holdOnOutage(hold);
		this.outage = hold;
	}

	/**
	 * Runs this listener's records in batches: the records its routes let run now are gathered
	 * per main topic and run through that topic's batch handler; each route's router must
	 * {@link StageRouter.Builder#batchRuns(boolean) run in batches}.
	 * @param settings how batches are gathered
	 * @param handlers the batch handler of each main topic's router
	 */
	public synchronized void runInBatches(BatchSettings settings, Map<StageRouter, BatchHandler> handlers) {
		this.runner.runInBatches(settings, handlers);
	}

	/** How this listener's batches are gathered, or {@code null} when it runs records one at a time. */
	public @Nullable BatchSettings batchSettings() {
		BatchRuns batches = this.runner.batchRuns();
		return (batches != null) ? batches.settings() : null;
	}

	/** The breaker this listener holds on, or {@code null} when it never holds. */
	public @Nullable OutageBreaker outageBreaker() {
		OutageHold hold = this.outage;
		return (hold != null) ? hold.breaker() : null;
	}

	/**
	 * Whether the listener runs on half its workers after an outage, its breaker having closed
	 * less than {@code kafka.resilience.outage.ramp-up} ago.
	 */
	public boolean isRampingUp() {
		OutageHold hold = this.outage;
		return hold != null && hold.rampingUp();
	}

	/** Records held while the listener holds for an outage or is paused. */
	public int heldRecords() {
		return this.runner.workers().heldCount();
	}

	public boolean isRunning() {
		return this.running.get();
	}

	/**
	 * Publishes spring-kafka's container events for this container: consumer started and
	 * stopped, container stopped, partitions paused and resumed, and idle events.
	 * @param publisher where to publish them
	 * @param idleEventInterval how long without records before an idle event (and between
	 * two), or {@code null} for none
	 */
	public synchronized void publishEvents(ApplicationEventPublisher publisher, @Nullable Duration idleEventInterval) {
		this.events = new ContainerEvents(this, publisher, idleEventInterval);
	}

	/**
	 * Stops handing out new records: the consumer's partitions are paused, records already
	 * running finish, and records waiting (for a due time, their key or the tailer) wait on
	 * until {@link #resume()}. Locks stay as they are, so every key keeps its order; the
	 * consumer keeps polling, so it stays in its group.
	 */
	public void pause() {
		this.pauseRequest.pause();
	}

	/** Hands out records again after {@link #pause()}. */
	public void resume() {
		this.pauseRequest.resume();
	}

	/** Whether {@link #pause()} was called and {@link #resume()} not since. */
	public boolean isPauseRequested() {
		return this.pauseRequest.isRequested();
	}

	/** The topics this container consumes: main topics and their retry topics. */
	public Set<String> topics() {
		return this.routesByTopic.keySet();
	}

	public synchronized void start() {
		if (!this.running.compareAndSet(false, true)) {
			return;
		}
		this.pauseRequest.clear();
		this.runner.workers().start();
		Supplier<Consumer<byte[], byte[]>> rereaders = this.rereaderFactory;
		if (rereaders != null) {
			Rereader rereader = new Rereader(this.id, rereaders.get(), this.partitions, this.settings, this.clock,
					(work, record) -> work.route.router().earliestRun(record), this.runner::unpark);
			this.rereader = rereader;
			this.runner.parkWith(rereader);
			rereader.start();
		}
		Set<String> mainTopics = new java.util.TreeSet<>();
		Set<String> stageTopics = new java.util.TreeSet<>();
		this.routesByTopic.keySet().forEach((topic) -> (isMainTopic(topic) ? mainTopics : stageTopics).add(topic));
		List<PollLoop> loops = new ArrayList<>();
		loops.add(loop("main", mainTopics, this.consumerFactory.main()));
		if (!stageTopics.isEmpty()) {
			loops.add(loop("retries", stageTopics, this.consumerFactory.retries()));
		}
		this.run = new ContainerRun(loops.size());
		this.loops = List.copyOf(loops);
		for (PollLoop loop : loops) {
			loop.start(this.barrier.rebalanceListener(this.id, loop.consumer(), this.partitions,
					new ContainerAssignments(loop), this.userListener));
		}
		this.housekeeping.start();
	}

	private PollLoop loop(String name, Set<String> topics, Supplier<Consumer<byte[], byte[]>> consumers) {
		return new PollLoop(this.id, name, topics, consumers.get(), this.partitions.side(topics::contains),
				this.settings, this.committer, this.offsets, this.runner.settling(), this.stats, this.observer,
				this.pauseRequest.consumption(), this.events.forConsumer(), this.clock, new LoopContainer());
	}

	/**
	 * Stops dispatching, waits for running handlers (up to the shutdown timeout), commits what
	 * is done and closes the consumers.
	 */
	public void stop() {
		List<PollLoop> loops;
		synchronized (this) {
			if (!this.running.compareAndSet(true, false)) {
				return;
			}
			loops = this.loops;
		}
		this.runner.workers().stopTaking();
		this.housekeeping.stop();
		loops.forEach(PollLoop::wakeup);
		for (PollLoop loop : loops) {
			try {
				loop.join(this.settings.shutdownTimeout().plusSeconds(10));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/** The loop whose consumer reads {@code partition}. */
	private PollLoop loopOf(TopicPartition partition) {
		List<PollLoop> loops = this.loops;
		return (loops.size() > 1 && !isMainTopic(partition.topic())) ? loops.get(1) : loops.get(0);
	}

	private boolean isMainTopic(String topic) {
		return this.routesByTopic.get(topic).router().plan().mainTopic().equals(topic);
	}

	static Delivery delivery(ConsumerRecord<byte[], byte[]> record) {
		return new Delivery(record.topic(), record.partition(), record.offset(), record.timestamp(), record.key(),
				record.value(), record.headers());
	}

	/**
	 * The records of an assigned partition not done yet: from the first one pending to the end
	 * of the partition as of the last fetch. For a stage topic this is its depth: retries
	 * waiting or running. Empty for a partition not assigned here or not fetched from yet.
	 */
	public OptionalLong lag(TopicPartition partition) {
		return this.stats.lag(partition);
	}

	/**
	 * Registers a callback run on the poll thread after every change of the assignment, for
	 * meters per partition.
	 */
	public void onAssignmentChanged(Runnable callback) {
		this.assignmentCallbacks.add(callback);
	}

	/** The partitions assigned to this container's consumer now. */
	public Set<TopicPartition> assignment() {
		return Set.copyOf(this.partitions.topicPartitions());
	}

	/**
	 * The assigned partitions whose sync barrier is still closed, with how long each has
	 * waited for the lock view so far.
	 */
	public Map<TopicPartition, Duration> closedBarriers() {
		return this.stats.closedBarriers();
	}

	/**
	 * How long ago the last poll of the consumer that polled least recently returned: what
	 * {@code max.poll.interval.ms} bounds. Zero before the first poll.
	 */
	public Duration sinceLastPoll() {
		Duration longest = Duration.ZERO;
		for (PollLoop loop : this.loops) {
			Duration since = loop.sinceLastPoll();
			longest = (since.compareTo(longest) > 0) ? since : longest;
		}
		return longest;
	}

	/**
	 * The partitions this container stopped consuming because a record in them can be neither
	 * moved on nor dead-lettered, each with the reason: the record, the topic that refused it
	 * and the setting to raise. A partition stays stopped until it is assigned again (after a
	 * restart or a rebalance), which delivers the record again.
	 */
	public Map<TopicPartition, String> stoppedPartitions() {
		return this.stats.stoppedPartitions();
	}

	/**
	 * What the container holds, for meters: records in memory, parked records and the deepest
	 * key (records of one key waiting in one partition, the sign of a hot key).
	 * @param inFlight records held in memory, running or waiting
	 * @param parked records parked: pending, not held, to be read again
	 * @param busiestPartitionInFlight records held by the partition that holds the most (what
	 * {@code max-in-flight-per-partition} bounds)
	 * @param busiestKeyDepth records of the busiest key of any partition, held or parked
	 */
	public record Load(long inFlight, long parked, int busiestPartitionInFlight, int busiestKeyDepth) {
	}

	/** What the container holds now; computed on each call. */
	public Load load() {
		return this.stats.load();
	}

	/** What a poll loop asks of this container. */
	private final class LoopContainer implements PollLoop.Container {

		@Override
		public boolean isRunning() {
			return OrderedRetryContainer.this.running.get();
		}

		@Override
		public void beforeSubscribing(PollLoop loop) {
			ContainerRun run = OrderedRetryContainer.this.run;
			if (run != null) {
				run.startOnce(OrderedRetryContainer.this.committer::start);
			}
		}

		@Override
		public int take(PartitionWork work, List<Delivery> records) {
			return OrderedRetryContainer.this.runner.takeAll(work, records);
		}

		@Override
		public void stoppedPolling(PollLoop loop) {
			ContainerRun run = OrderedRetryContainer.this.run;
			if (run != null && run.stoppedPolling()) {
				drain();
				run.drained();
			}
		}

		@Override
		public void awaitDrained() {
			ContainerRun run = OrderedRetryContainer.this.run;
			if (run != null) {
				run.awaitDrained(OrderedRetryContainer.this.settings.shutdownTimeout().plusSeconds(10));
			}
		}

		@Override
		public void closed(PollLoop loop) {
			ContainerRun run = OrderedRetryContainer.this.run;
			if (run != null && run.closed()) {
				finish();
			}
		}

	}

	/**
	 * The container's part of stopping, once every loop stopped polling: the re-reader stops and
	 * the workers finish what runs (up to the shutdown timeout); each loop then commits its
	 * partitions and closes its consumer.
	 */
	private void drain() {
		Rereader rereader = this.rereader;
		if (rereader != null) {
			rereader.stop();
		}
		if (!this.runner.workers().stop(this.settings.shutdownTimeout())) {
			logger.warn("Listener '" + this.id + "' stopped before its running handlers finished; their records "
					+ "will be delivered again");
		}
	}

	/** The container's last part of stopping, once every consumer is closed. */
	private void finish() {
		this.committer.close();
		this.partitions.clear();
		this.runner.keyWaiters().clear();
		this.runner.dueWaiters().clear();
		this.housekeeping.closeAdmin();
		this.events.containerStopped();
	}

	/** What the rebalance callbacks of a loop's consumer do to this container, on its poll thread. */
	private final class ContainerAssignments implements BarrierRebalanceListener.Assignments {

		private final PollLoop loop;

		ContainerAssignments(PollLoop loop) {
			this.loop = loop;
		}

		@Override
		public PartitionWork assign(TopicPartition partition) {
			return new PartitionWork(partition, OrderedRetryContainer.this.routesByTopic.get(partition.topic()),
					OrderedRetryContainer.this.settings.maxInFlightPerPartition());
		}

		@Override
		public boolean readFromBeginning(TopicPartition partition) {
			return OrderedRetryContainer.this.routesByTopic.get(partition.topic()).router().plan()
				.stageOf(partition.topic()) > 0;
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
				PartitionWork work = OrderedRetryContainer.this.partitions.get(partition);
				if (work != null) {
					runs.add(work.runs);
				}
			}
			if (!HandlerRuns.closeAndAwait(runs, OrderedRetryContainer.this.settings.shutdownTimeout())) {
				logger.warn("Listener '" + OrderedRetryContainer.this.id + "' gives up " + partitions + " with handlers "
						+ "still running after " + OrderedRetryContainer.this.settings.shutdownTimeout()
						+ ": their records run again on the next owner");
			}
			this.loop.commits().revoking(this.loop.consumer(), partitions);
		}

		@Override
		public void changed(String kind, Collection<TopicPartition> partitions) {
			if ("assigned".equals(kind)) {
				OrderedRetryContainer.this.committer.polled(this.loop.consumer(), OrderedRetryContainer.this.offsets);
			}
			else {
				OrderedRetryContainer.this.runner.keyWaiters().forgetRevoked();
			}
			OrderedRetryContainer.this.observer.rebalanced(OrderedRetryContainer.this.id, kind, partitions);
			OrderedRetryContainer.this.assignmentCallbacks.run();
		}

		@Override
		public void opened(PartitionWork work, Duration waited) {
			OrderedRetryContainer.this.observer.barrierOpened(OrderedRetryContainer.this.id,
					work.route.registry().ownership().group(), work.partition, waited);
			if (work.route.router().plan().stageOf(work.partition.topic()) == 0) {
				work.route.registry().pending(work.partition.partition())
					.forEach((lock) -> OrderedRetryContainer.this.runner.admissionNeeded(work.route, lock));
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

}
