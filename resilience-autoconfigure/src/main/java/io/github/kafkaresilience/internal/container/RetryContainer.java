package io.github.kafkaresilience.internal.container;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.container.FairShareSettings;
import io.github.kafkaresilience.container.RateLimitSettings;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.listener.TenantResolver;
import io.github.kafkaresilience.ladder.AsyncBatchHandler;
import io.github.kafkaresilience.ladder.AsyncRecordHandler;
import io.github.kafkaresilience.ladder.BatchHandler;
import io.github.kafkaresilience.internal.ladder.StageRouter;
import io.github.kafkaresilience.internal.lock.LockReaper;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.outage.OutageBreaker;
import io.github.kafkaresilience.internal.support.Callbacks;
import io.github.kafkaresilience.container.OrderedRetryContainer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;

/**
 * Runs one {@code @OrderedRetryListener}: a consumer of its main topics and one of their
 * retry topics, each in the listener's group with a poll loop of its own
 * ({@link PollLoop}) that never sleeps or blocks on a record, and workers that run
 * records concurrently across keys and in order within a key of a partition.
 * <p>
 * A record that waits (for its due time, for its predecessor, or for the lock tailer)
 * holds up only its own key in its partition, and no thread. Offsets are committed at the
 * contiguous boundary: the lowest offset not yet done. A partition with too many records
 * in flight is paused until they drain.
 * <p>
 * What an application sees of it is {@link OrderedRetryContainer}.
 */
public class RetryContainer implements OrderedRetryContainer {

	private static final Log logger = LogFactory.getLog(RetryContainer.class);

	/** The ladder of one main topic as this container runs it. */
	public record Route(StageRouter router, LockRegistry registry) {
	}

	/**
	 * Zombie lock reaping for the container's main topics: every {@code interval},
	 * through the reapers {@code open} makes at each start (their admin client is closed
	 * at stop).
	 */
	public record Reaping(Duration interval, Supplier<Reapers> open) {
	}

	/**
	 * The reapers of one run of the container, one per main topic, and their admin
	 * client.
	 */
	public record Reapers(List<LockReaper> reapers, AutoCloseable admin) {
	}

	/**
	 * Creates the container's consumers, both in the listener's group: one for its main
	 * topics, one for their retry topics.
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

	private final RecordIntake intake;

	private final Housekeeping housekeeping;

	private final PauseRequest pauseRequest;

	private final AtomicBoolean running = new AtomicBoolean();

	private final Callbacks assignmentCallbacks;

	/**
	 * The poll loops of the current run: the main topics' and, with retry stages, the
	 * stages'.
	 */
	private volatile List<PollLoop> loops = List.of();

	private ContainerEvents events = ContainerEvents.NONE;

	private volatile @Nullable OutageHold outage;

	/** How tenants share and the rate is limited, or {@code null}. */
	private volatile @Nullable FairShare fairShare;

	/**
	 * @param writes how the listener's steps write and its offsets commit: by the
	 * consumer, or in transactions that also carry the writes of steps
	 */
	public RetryContainer(String id, Map<String, Route> routesByTopic, Consumers consumerFactory, SyncBarrier barrier,
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
		this.runner = new RecordRunner(id, settings, clock, this.committer, this.offsets,
				(work) -> loopOf(work.partition).backpressure().recordDone(work));
		this.intake = new RecordIntake(this.runner, this.partitions);
		this.pauseRequest = new PauseRequest(this.runner.workers(), (partition) -> isMainTopic(partition.topic()));
		this.intake.listenTo(this.routesByTopic.values());
	}

	@Override
	public String id() {
		return this.id;
	}

	/**
	 * Lets the container park retries that are due later than
	 * {@link ContainerSettings#parkAfter()}: instead of holding them, it reads them again
	 * with a consumer of its own (assigned, never in the group, never committing) shortly
	 * before they are due. Without it, a partition whose in-flight records all wait stays
	 * paused until they are due.
	 * @param rereaders creates that consumer
	 */
	public synchronized void parkWith(Supplier<Consumer<byte[], byte[]>> rereaders) {
		this.runner.waits().parkWith(rereaders);
	}

	/**
	 * Shares the workers and the partitions' in-flight bound between the tenants of the
	 * listener's records, and limits the records a second handed to its handler. Records
	 * whose turn it is are taken in weighted round robin over their tenants; a tenant
	 * that holds its share of a partition's bound in memory has its later records there
	 * parked and read again once it has room, so the partition reads on. Parking must be
	 * on ({@link #parkWith}) when the records have tenants. Before {@link #start()}.
	 * @param resolver finds a record's tenant, or {@code null} when the records have none
	 * (only the rate limit then applies)
	 * @param fairShare how tenants share
	 * @param rateLimit the listener's limit
	 * @param partitions the partitions of the topics the listener consumes, of which a
	 * limit the group shares gives this instance its share
	 * @return what each tenant has, counted on its own for the first tagged ones
	 */
	public synchronized FairShare shareFairly(@Nullable TenantResolver resolver, FairShareSettings fairShare,
			RateLimitSettings rateLimit, int partitions) {
		TenantTally tally = new TenantTally((resolver != null) ? fairShare.taggedTenants() : 0);
		Tenants tenants = null;
		if (resolver != null) {
			if (this.runner.waits().parking() == null) {
				throw new IllegalStateException("Listener '" + this.id + "' shares its partitions between tenants, "
						+ "which parks records; parking is off");
			}
			tenants = new Tenants(this.id, resolver, fairShare, tally);
		}
		FairQueue queue = this.runner.workers()
			.shareFairly((wakeIn) -> new FairQueue(fairShare, rateLimit, tally, wakeIn));
		if (rateLimit.shared() && partitions > 0) {
			queue.share(0); // nothing is handed out before partitions are assigned
			onAssignmentChanged(() -> queue.share((double) this.partitions.topicPartitions().size() / partitions));
		}
		FairShare shared = new FairShare(tenants, queue, tally, rateLimit);
		this.fairShare = shared;
		return shared;
	}

	/**
	 * How the listener shares between tenants and limits its rate, or {@code null} when
	 * it does neither.
	 */
	public @Nullable FairShare fairShare() {
		return this.fairShare;
	}

	/**
	 * Holds this listener's records while {@code breaker} is open, instead of moving them
	 * into the ladder; the breaker must observe this listener's handler.
	 */
	public synchronized void holdOnOutage(OutageBreaker breaker) {
		OutageHold hold = new OutageHold(breaker, this.runner.workers(), this.pauseRequest, () -> load().inFlight());
		this.runner.holdOnOutage(hold);
		this.outage = hold;
	}

	/**
	 * Runs this listener's records in batches: the records its routes let run now are
	 * gathered per main topic and run through that topic's batch handler; each route's
	 * router must {@link StageRouter.Builder#batchRuns(boolean) run in batches}.
	 * @param settings how batches are gathered
	 * @param handlers the batch handler of each main topic's router
	 */
	public synchronized void runInBatches(BatchSettings settings, Map<StageRouter, BatchHandler> handlers) {
		Map<StageRouter, AsyncBatchHandler> inLine = new HashMap<>();
		handlers.forEach((router, handler) -> inLine.put(router, AsyncBatchHandler.of(handler)));
		this.runner.runInBatches(settings, inLine, false);
	}

	/**
	 * Runs this listener's records in batches, as {@link #runInBatches}, with batch
	 * handlers whose results complete later: a worker calls the handler and is let go;
	 * the batch's records wait until its result completes.
	 * @param settings how batches are gathered
	 * @param handlers the batch handler of each main topic's router
	 */
	public synchronized void runInBatchesLater(BatchSettings settings, Map<StageRouter, AsyncBatchHandler> handlers) {
		this.runner.runInBatches(settings, handlers, true);
	}

	/**
	 * Runs this listener's records with handlers whose results complete later: a worker
	 * calls the handler and is let go; the record's key waits until its result completes.
	 * Each route's router must {@link StageRouter.Builder#batchRuns(boolean) leave the
	 * runs} to the container.
	 * @param handlers the handler of each main topic's router
	 * @param repliesInTransactions whether the listener sends replies ({@code @SendTo})
	 * in {@code transaction} mode: the step after a record's attempt then waits until the
	 * records before it in its partition are done, so that its transaction commits the
	 * reply with an offset past the record, which no owner runs again
	 */
	public synchronized void runAsync(Map<StageRouter, AsyncRecordHandler> handlers, boolean repliesInTransactions) {
		this.runner.runAsync(handlers, repliesInTransactions);
	}

	/**
	 * How many of this listener's records wait for their handler's result now, or
	 * {@code null} when its handler returns once done.
	 */
	@Override
	public @Nullable Integer pendingResults() {
		PendingResults pending = this.runner.pendingResults();
		return (pending != null) ? pending.records() : null;
	}

	/**
	 * How this listener's batches are gathered, or {@code null} when it runs records one
	 * at a time.
	 */
	@Override
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
	 * Whether the listener runs on half its workers after an outage, its breaker having
	 * closed less than {@code kafka.resilience.outage.ramp-up} ago.
	 */
	@Override
	public boolean isRampingUp() {
		OutageHold hold = this.outage;
		return hold != null && hold.rampingUp();
	}

	/** Records held while the listener holds for an outage or is paused. */
	@Override
	public int heldRecords() {
		return this.runner.workers().holds().count();
	}

	@Override
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
	 * Stops handing out new records: the consumer's partitions are paused, records
	 * already running finish, and records waiting (for a due time, their key or the
	 * tailer) wait on until {@link #resume()}. Locks stay as they are, so every key keeps
	 * its order; the consumer keeps polling, so it stays in its group.
	 */
	@Override
	public void pause() {
		this.pauseRequest.pause();
	}

	/** Hands out records again after {@link #pause()}. */
	@Override
	public void resume() {
		this.pauseRequest.resume();
	}

	/** Whether {@link #pause()} was called and {@link #resume()} not since. */
	@Override
	public boolean isPauseRequested() {
		return this.pauseRequest.isRequested();
	}

	/** The topics this container consumes: main topics and their retry topics. */
	@Override
	public Set<String> topics() {
		return this.routesByTopic.keySet();
	}

	public synchronized void start() {
		if (!this.running.compareAndSet(false, true)) {
			return;
		}
		this.pauseRequest.clear();
		this.runner.workers().start();
		this.runner.waits().startParking(this.partitions, this.intake::unpark);
		Rereader rereader = this.runner.waits().rereader();
		Tenants tenants = tenants();
		if (tenants != null && rereader != null) {
			tenants.rereadWith(rereader::wake);
		}
		Set<String> mainTopics = new TreeSet<>();
		Set<String> stageTopics = new TreeSet<>();
		this.routesByTopic.keySet().forEach((topic) -> (isMainTopic(topic) ? mainTopics : stageTopics).add(topic));
		ContainerRun run = new ContainerRun(stageTopics.isEmpty() ? 1 : 2, this.running::get, this.committer::start,
				this.intake::takeAll, this::drain, this::finish, this.settings.shutdownTimeout().plusSeconds(10));
		List<PollLoop> loops = new ArrayList<>();
		loops.add(loop("main", mainTopics, this.consumerFactory.main(), run));
		if (!stageTopics.isEmpty()) {
			loops.add(loop("retries", stageTopics, this.consumerFactory.retries(), run));
		}
		this.loops = List.copyOf(loops);
		for (PollLoop loop : loops) {
			loop.start(this.barrier.rebalanceListener(this.id, loop.consumer(), this.partitions,
					new ContainerAssignments(this.id, this.routesByTopic, this.settings, this.partitions, loop,
							this.committer, this.offsets, this.intake, this.runner.waits().keyWaiters(), this.observer,
							this.assignmentCallbacks, this.runner.pendingResults() != null, tenants),
					this.userListener));
		}
		this.housekeeping.start();
	}

	private PollLoop loop(String name, Set<String> topics, Supplier<Consumer<byte[], byte[]>> consumers,
			ContainerRun run) {
		return new PollLoop(this.id, name, topics, consumers.get(), this.partitions.side(topics::contains),
				this.settings, this.committer, this.offsets, this.runner.settling(), this.stats, this.observer,
				this.pauseRequest.consumption(), this.events.forConsumer(), this.clock, run);
	}

	/**
	 * Stops dispatching, waits for running handlers (up to the shutdown timeout), commits
	 * what is done and closes the consumers.
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
		loops.forEach((loop) -> loop.join(this.settings.shutdownTimeout().plusSeconds(10)));
	}

	private @Nullable Tenants tenants() {
		FairShare shared = this.fairShare;
		return (shared != null) ? shared.tenants() : null;
	}

	/** The loop whose consumer reads {@code partition}. */
	private PollLoop loopOf(TopicPartition partition) {
		List<PollLoop> loops = this.loops;
		return (loops.size() > 1 && !isMainTopic(partition.topic())) ? loops.get(1) : loops.get(0);
	}

	private boolean isMainTopic(String topic) {
		return Objects.requireNonNull(this.routesByTopic.get(topic), topic).router().plan().mainTopic().equals(topic);
	}

	/**
	 * The records of an assigned partition not done yet: from the first one pending to
	 * the end of the partition as of the last fetch. For a stage topic this is its depth:
	 * retries waiting or running. Empty for a partition not assigned here or not fetched
	 * from yet.
	 */
	@Override
	public OptionalLong lag(TopicPartition partition) {
		return this.stats.lag(partition);
	}

	/**
	 * Registers a callback run on the poll thread after every change of the assignment,
	 * for meters per partition.
	 */
	public void onAssignmentChanged(Runnable callback) {
		this.assignmentCallbacks.add(callback);
	}

	/** The partitions assigned to this container's consumer now. */
	@Override
	public Set<TopicPartition> assignment() {
		return Set.copyOf(this.partitions.topicPartitions());
	}

	/**
	 * The assigned partitions whose sync barrier is still closed, with how long each has
	 * waited for the lock view so far.
	 */
	@Override
	public Map<TopicPartition, Duration> closedBarriers() {
		return this.stats.closedBarriers();
	}

	/**
	 * How long ago the last poll of the consumer that polled least recently returned:
	 * what {@code max.poll.interval.ms} bounds. Zero before the first poll.
	 */
	@Override
	public Duration sinceLastPoll() {
		Duration longest = Duration.ZERO;
		for (PollLoop loop : this.loops) {
			Duration since = loop.sinceLastPoll();
			longest = (since.compareTo(longest) > 0) ? since : longest;
		}
		return longest;
	}

	/**
	 * The partitions this container stopped consuming because a record in them can be
	 * neither moved on nor dead-lettered, each with the reason: the record, the topic
	 * that refused it and the setting to raise. A partition stays stopped until it is
	 * assigned again (after a restart or a rebalance), which delivers the record again.
	 */
	@Override
	public Map<TopicPartition, String> stoppedPartitions() {
		return this.stats.stoppedPartitions();
	}

	/** What the container holds now; computed on each call. */
	@Override
	public Load load() {
		return this.stats.load();
	}

	/**
	 * The container's part of stopping, once every loop stopped polling: the re-reader
	 * stops and the workers finish what runs (up to the shutdown timeout); each loop then
	 * commits its partitions and closes its consumer.
	 */
	private void drain() {
		this.runner.waits().stopParking();
		PendingResults pending = this.runner.pendingResults();
		if (pending != null && !pending.await(this.settings.shutdownTimeout())) {
			logger.warn("Listener '" + this.id + "' stopped before the results of " + pending.records() + " of its "
					+ "records completed; they will be delivered again");
		}
		if (!this.runner.workers().stop(this.settings.shutdownTimeout())) {
			logger.warn("Listener '" + this.id + "' stopped before its running handlers finished; their records "
					+ "will be delivered again");
		}
		if (pending != null) {
			pending.giveUpAll();
		}
	}

	/** The container's last part of stopping, once every consumer is closed. */
	private void finish() {
		this.committer.close();
		this.partitions.clear();
		this.runner.waits().clear();
		this.housekeeping.closeAdmin();
		this.events.containerStopped();
	}

}
