package io.github.kafkaresilience.container;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.ReplayAdmission;
import io.github.kafkaresilience.ladder.StageRouter;
import io.github.kafkaresilience.ladder.Step;
import io.github.kafkaresilience.lock.Lock;
import io.github.kafkaresilience.lock.LockReaper;
import io.github.kafkaresilience.lock.LockRegistry;
import io.github.kafkaresilience.support.Backoff;
import io.github.kafkaresilience.support.Callbacks;
import io.github.kafkaresilience.support.Futures;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;

/**
 * Runs one {@code @OrderedRetryListener}: a consumer of its main and retry topics, a poll loop
 * that never sleeps or blocks on a record, and workers that run records concurrently across
 * keys and in order within a key of a partition.
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

	private static final Duration FIRST_BACKOFF = Duration.ofMillis(500);

	private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

	/** The first pause of the poll loop after a failed poll. */
	private static final Duration FIRST_POLL_BACKOFF = Duration.ofMillis(100);

	/** The longest pause of the poll loop after polls that failed in a row. */
	private static final Duration MAX_POLL_BACKOFF = Duration.ofSeconds(5);

	/** The poll timeout while some partitions are paused at their bound and may soon resume. */
	private static final Duration BRIEF_POLL = Duration.ofMillis(10);

	/**
	 * How the container consumes.
	 * @param concurrency worker threads
	 * @param maxInFlightPerPartition records of one partition in flight before it is paused
	 * @param pollTimeout how long one poll waits for records
	 * @param commitInterval how often done offsets are committed
	 * @param shutdownTimeout how long stopping waits for running handlers
	 * @param recheckInterval how often a record waiting for its key looks again, in case a
	 * change went unnoticed
	 * @param parkAfter a retry due later than this is parked: dropped from memory and read
	 * again from its stage shortly before it is due
	 */
	public record Settings(int concurrency, int maxInFlightPerPartition, Duration pollTimeout, Duration commitInterval,
			Duration shutdownTimeout, Duration recheckInterval, Duration parkAfter) {

		public Settings {
			if (concurrency < 1) {
				throw new IllegalArgumentException("concurrency must be at least 1, was " + concurrency);
			}
			if (maxInFlightPerPartition < 1) {
				throw new IllegalArgumentException(
						"max-in-flight-per-partition must be at least 1, was " + maxInFlightPerPartition);
			}
			if (parkAfter.compareTo(Duration.ofSeconds(1)) < 0) {
				throw new IllegalArgumentException("park-after must be at least 1s, was " + parkAfter);
			}
		}

		/** How long before its due time a parked record is read again. */
		long rereadLeadMillis() {
			return Math.min(this.parkAfter.toMillis() / 2, 2000);
		}

	}

	/** The ladder of one main topic as this container runs it. */
	public record Route(StageRouter router, LockRegistry registry) {
	}

	/**
	 * Zombie lock reaping for the container's main topics.
	 * @param reapers one reaper per main topic
	 * @param interval how often they look
	 * @param admin the admin client they share, closed with the container
	 */
	public record Reaping(List<LockReaper> reapers, Duration interval, AutoCloseable admin) {
	}

	private final String id;

	private final Map<String, Route> routesByTopic;

	private final Supplier<Consumer<byte[], byte[]>> consumerFactory;

	private final SyncBarrier barrier;

	private final @Nullable ConsumerAwareRebalanceListener userListener;

	private final Settings settings;

	private final Clock clock;

	private final @Nullable Reaping reaping;

	private final ResilienceObserver observer;

	private final OffsetCommitter committer;

	private final Offsets offsets = new Offsets();

	private final Map<TopicPartition, PartitionWork> partitions = new ConcurrentHashMap<>();

	private final Map<Bytes, Set<Task>> waitingForKey = new ConcurrentHashMap<>();

	private final Map<TopicPartition, Long> droppedAt = new HashMap<>();

	private final Queue<Runnable> pollThreadActions = new ConcurrentLinkedQueue<>();

	/** The writes of records whose steps returned without waiting for them, with each record's partition. */
	private final Map<CompletableFuture<?>, TopicPartition> settling = new ConcurrentHashMap<>();

	/** Tasks ready to run, drained by the workers. */
	private final Queue<Task> ready = new ConcurrentLinkedQueue<>();

	/** How many workers are draining {@link #ready}: at most {@code concurrency}. */
	private final AtomicInteger draining = new AtomicInteger();

	private final AtomicBoolean running = new AtomicBoolean();

	/** Signalled by a worker when a partition paused at its bound has drained to half of it. */
	private final Object room = new Object();

	private volatile boolean roomMade;

	private volatile long lastPollNanos;

	private final Callbacks assignmentCallbacks;

	private volatile boolean stopping;

	private ExecutorService workers;

	private ScheduledExecutorService timers;

	private Thread pollThread;

	private @Nullable ScheduledExecutorService housekeeping;

	private volatile Consumer<byte[], byte[]> consumer;

	private volatile @Nullable ConsumerGroupMetadata groupMetadata;

	private long lastCommit;

	/** Polls that failed in a row; poll thread only. */
	private int failedPolls;

	private @Nullable Supplier<Consumer<byte[], byte[]>> rereaderFactory;

	private volatile @Nullable Rereader rereader;

	public OrderedRetryContainer(String id, Map<String, Route> routesByTopic,
			Supplier<Consumer<byte[], byte[]>> consumerFactory, SyncBarrier barrier,
			@Nullable ConsumerAwareRebalanceListener userListener, Settings settings, Clock clock,
			@Nullable Reaping reaping, ResilienceObserver observer) {
		this(id, routesByTopic, consumerFactory, barrier, userListener, settings, clock, reaping, observer, null);
	}

	/**
	 * @param transactions the listener's transactions in {@code transaction} dual-write mode:
	 * every step that writes commits in one, and so does every offset commit
	 */
	public OrderedRetryContainer(String id, Map<String, Route> routesByTopic,
			Supplier<Consumer<byte[], byte[]>> consumerFactory, SyncBarrier barrier,
			@Nullable ConsumerAwareRebalanceListener userListener, Settings settings, Clock clock,
			@Nullable Reaping reaping, ResilienceObserver observer, @Nullable TransactionalWrites transactions) {
		this.committer = OffsetCommitter.of(transactions);
		this.id = id;
		this.assignmentCallbacks = new Callbacks("an assignment change of listener '" + id + "'");
		this.reaping = reaping;
		this.observer = observer;
		this.routesByTopic = Map.copyOf(routesByTopic);
		this.consumerFactory = consumerFactory;
		this.barrier = barrier;
		this.userListener = userListener;
		this.settings = settings;
		this.clock = clock;
		Map<LockRegistry, Route> registries = new HashMap<>();
		this.routesByTopic.values().forEach((route) -> registries.putIfAbsent(route.registry(), route));
		registries.forEach((registry, route) -> {
			registry.table().addListener(this::keyChanged);
			registry.table().addPendingListener((lock) -> admissionNeeded(route, lock));
		});
	}

	public String id() {
		return this.id;
	}

	/**
	 * Lets the container park retries that are due later than
	 * {@link Settings#parkAfter()}: instead of holding them, it reads them again with a
	 * consumer of its own (assigned, never in the group, never committing) shortly before
	 * they are due. Without it, a partition whose in-flight records all wait stays paused
	 * until they are due.
	 * @param rereaders creates that consumer
	 */
	public synchronized void parkWith(Supplier<Consumer<byte[], byte[]>> rereaders) {
		this.rereaderFactory = rereaders;
	}

	public boolean isRunning() {
		return this.running.get();
	}

	/** The topics this container consumes: main topics and their retry topics. */
	public Set<String> topics() {
		return this.routesByTopic.keySet();
	}

	public synchronized void start() {
		if (!this.running.compareAndSet(false, true)) {
			return;
		}
		this.stopping = false;
		this.workers = Executors.newFixedThreadPool(this.settings.concurrency(), threads("kafka-resilience-" + this.id + "-worker-"));
		this.timers = Executors.newSingleThreadScheduledExecutor(threads("kafka-resilience-" + this.id + "-timer-"));
		this.consumer = this.consumerFactory.get();
		if (this.rereaderFactory != null) {
			this.rereader = new Rereader(this.rereaderFactory.get());
			this.rereader.start();
		}
		this.pollThread = new Thread(this::pollLoop, "kafka-resilience-" + this.id + "-consumer");
		this.pollThread.start();
		if (this.reaping != null) {
			this.housekeeping = Executors.newSingleThreadScheduledExecutor(threads("kafka-resilience-" + this.id + "-reaper-"));
			long interval = this.reaping.interval().toMillis();
			this.housekeeping.scheduleWithFixedDelay(this::reap, interval, interval, TimeUnit.MILLISECONDS);
		}
	}

	/**
	 * Stops dispatching, waits for running handlers (up to the shutdown timeout), commits what
	 * is done and closes the consumer.
	 */
	public void stop() {
		Thread thread;
		synchronized (this) {
			if (!this.running.compareAndSet(true, false)) {
				return;
			}
			thread = this.pollThread;
		}
		this.stopping = true;
		if (this.housekeeping != null) {
			this.housekeeping.shutdownNow();
		}
		synchronized (this.room) {
			this.room.notifyAll();
		}
		this.consumer.wakeup();
		try {
			thread.join(this.settings.shutdownTimeout().plusSeconds(10).toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void pollLoop() {
		Consumer<byte[], byte[]> consumer = this.consumer;
		try {
			consumer.subscribe(this.routesByTopic.keySet(), new Rebalance(consumer));
			while (this.running.get()) {
				try {
					runPollThreadActions();
					Duration timeout = awaitRoom();
					applyBounds(consumer);
					long now = System.nanoTime();
					if (this.lastPollNanos != 0) {
						this.observer.polling(this.id, Duration.ofNanos(now - this.lastPollNanos));
					}
					ConsumerRecords<byte[], byte[]> records = consumer.poll(timeout);
					this.lastPollNanos = System.nanoTime();
					this.groupMetadata = consumer.groupMetadata();
					for (TopicPartition tp : records.partitions()) {
						dispatch(consumer, tp, records.records(tp));
					}
					if (this.clock.millis() - this.lastCommit >= this.settings.commitInterval().toMillis()) {
						noteEndOffsets(consumer);
						commit(consumer, this.partitions.keySet());
					}
					this.failedPolls = 0;
				}
				catch (WakeupException ex) {
					// stopping
				}
				catch (RuntimeException ex) {
					// a lasting failure (a missing ACL, rejected credentials) fails every poll at
					// once: pause, or the loop would spin and flood the log
					long pause = Backoff.after(++this.failedPolls, FIRST_POLL_BACKOFF, MAX_POLL_BACKOFF).toMillis();
					logger.error("Listener '" + this.id + "' failed to poll; polling again in " + pause + " ms", ex);
					pauseAfterFailure(pause);
				}
			}
		}
		finally {
			shutdown(consumer);
		}
	}

	private void pauseAfterFailure(long millis) {
		synchronized (this.room) {
			if (this.running.get()) {
				try {
					this.room.wait(millis);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		}
	}

	private void shutdown(Consumer<byte[], byte[]> consumer) {
		if (this.rereader != null) {
			this.rereader.stop();
		}
		this.timers.shutdownNow();
		this.workers.shutdown();
		try {
			if (!this.workers.awaitTermination(this.settings.shutdownTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
				logger.warn("Listener '" + this.id + "' stopped before its running handlers finished; their records "
						+ "will be delivered again");
				this.workers.shutdownNow();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		awaitSettling(null);
		try {
			commit(consumer, this.partitions.keySet());
		}
		catch (RuntimeException ex) {
			logger.warn("Listener '" + this.id + "' could not commit on shutdown", ex);
		}
		this.committer.close();
		this.partitions.values().forEach((work) -> work.revoked = true);
		this.partitions.clear();
		this.waitingForKey.clear();
		consumer.close(Duration.ofSeconds(10));
		if (this.reaping != null) {
			try {
				this.reaping.admin().close();
			}
			catch (Exception ex) {
				logger.debug("Could not close the reaper's admin client", ex);
			}
		}
	}

	/**
	 * Lets the writes under way of some partitions (all when {@code null}) finish before their
	 * last commit: a clean stop or a revocation then does not deliver their records again, and
	 * a move of this instance never lands after the partition's next owner has started (it
	 * would find the lock unknown, or moving on). Bounded by the shutdown timeout; the writes
	 * themselves are bounded by the write timeouts.
	 */
	private void awaitSettling(@Nullable Collection<TopicPartition> which) {
		CompletableFuture<?>[] pending = this.settling.entrySet().stream()
			.filter((entry) -> which == null || which.contains(entry.getValue()))
			.map(Map.Entry::getKey)
			.toArray(CompletableFuture<?>[]::new);
		if (pending.length == 0) {
			return;
		}
		try {
			CompletableFuture.allOf(pending).get(this.settings.shutdownTimeout().toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.warn("Listener '" + this.id + "' let go of " + ((which != null) ? which : "its partitions")
					+ " before all writes under way completed; their records are delivered again", ex);
		}
	}

	private void reap() {
		try {
			for (LockReaper reaper : this.reaping.reapers()) {
				reaper.reap();
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Listener '" + this.id + "' could not look for zombie locks; will try again", ex);
		}
	}

	private void runPollThreadActions() {
		for (Runnable action; (action = this.pollThreadActions.poll()) != null;) {
			action.run();
		}
	}

	/**
	 * Hands a partition's polled records to the workers, up to its in-flight bound: at the
	 * bound the consumer is moved back to the first record not taken and the partition is
	 * paused, so it never holds more than the bound.
	 */
	private void dispatch(Consumer<byte[], byte[]> consumer, TopicPartition tp, List<ConsumerRecord<byte[], byte[]>> records) {
		PartitionWork work = this.partitions.get(tp);
		if (work == null) {
			return; // revoked meanwhile: the new owner reads them
		}
		for (ConsumerRecord<byte[], byte[]> record : records) {
			if (!dispatch(work, record)) {
				consumer.seek(tp, record.offset());
				if (!work.boundPaused) {
					work.boundPaused = true;
					consumer.pause(List.of(tp));
				}
				return;
			}
		}
	}

	private boolean dispatch(PartitionWork work, ConsumerRecord<byte[], byte[]> record) {
		Task task = new Task(work, delivery(record));
		boolean runNow;
		synchronized (work) {
			if (work.offsets.inFlight() >= this.settings.maxInFlightPerPartition()) {
				return false;
			}
			work.offsets.add(record.offset());
			work.lastTaken = Math.max(work.lastTaken, record.offset());
			if (task.key != null && work.parkedKeys.containsKey(task.key)) {
				// an earlier record of its key is parked: this one parks behind it, in order
				work.offsets.park(record.offset());
				work.parkedKeys.merge(task.key, 1, Integer::sum);
				runNow = false;
			}
			else {
				runNow = enqueue(work, task);
			}
		}
		if (runNow) {
			submit(task);
		}
		return true;
	}

	/** Queues a task behind the earlier records of its key; returns whether it runs now. */
	private static boolean enqueue(PartitionWork work, Task task) {
		if (task.key == null) {
			return true;
		}
		ArrayDeque<Task> queue = work.keyQueues.computeIfAbsent(task.key, (k) -> new ArrayDeque<>(4)); // most keys queue one or two
		queue.add(task);
		return queue.size() == 1;
	}

	private static Delivery delivery(ConsumerRecord<byte[], byte[]> record) {
		return new Delivery(record.topic(), record.partition(), record.offset(), record.timestamp(), record.key(),
				record.value(), record.headers());
	}

	/**
	 * Parks the head of a key that waits for a due time far ahead, with every record of its
	 * key queued behind it: their offsets stay pending (the commit does not pass them) but
	 * their payloads are let go. Returns false when parking is off or its own bound is reached;
	 * the task then waits in memory.
	 */
	private boolean park(Task task, long dueAt) {
		Rereader rereader = this.rereader;
		if (rereader == null || dueAt - this.clock.millis() <= this.settings.parkAfter().toMillis()) {
			return false;
		}
		PartitionWork work = task.work;
		synchronized (work) {
			if (work.revoked) {
				return true;
			}
			if (work.offsets.parkedRuns() >= this.settings.maxInFlightPerPartition()) {
				return false;
			}
			int parked = 0;
			ArrayDeque<Task> queue = (task.key != null) ? work.keyQueues.remove(task.key) : null;
			if (queue != null) {
				for (Task queued : queue) {
					work.offsets.park(queued.delivery.offset());
					parked++;
				}
			}
			else {
				work.offsets.park(task.delivery.offset());
				parked = 1;
			}
			if (task.key != null) {
				work.parkedKeys.merge(task.key, parked, Integer::sum);
			}
			work.lookAt = Math.min(work.lookAt, dueAt - this.settings.rereadLeadMillis());
		}
		rereader.wake();
		return true;
	}

	/**
	 * Hands a parked record read again to the workers, behind the records of its key that
	 * were read again before it. Returns false when the partition has no room in its bound
	 * (or is gone): the record stays parked.
	 */
	private boolean unpark(PartitionWork work, Delivery record) {
		Task task = new Task(work, record);
		boolean runNow;
		synchronized (work) {
			if (work.revoked || work.offsets.inFlight() >= this.settings.maxInFlightPerPartition()
					|| !work.offsets.unpark(record.offset())) {
				return false;
			}
			if (task.key != null) {
				work.parkedKeys.computeIfPresent(task.key, (k, count) -> (count > 1) ? count - 1 : null);
			}
			work.forgetParkedKeysIfNoneParked();
			runNow = enqueue(work, task);
		}
		if (runNow) {
			submit(task);
		}
		return true;
	}

	/**
	 * When every partition is paused at its bound, a poll could only wait out its timeout while
	 * the workers drain them: wait for the first one to drain to half the bound instead, so it
	 * is resumed and fetched from at once. When only some are paused, poll briefly, for the same
	 * reason. Returns the timeout for the next poll.
	 */
	private Duration awaitRoom() {
		Duration timeout = this.settings.pollTimeout();
		boolean anyFull = false;
		boolean allFull = !this.partitions.isEmpty();
		for (PartitionWork work : this.partitions.values()) {
			anyFull |= work.boundPaused;
			allFull &= work.boundPaused;
		}
		if (allFull) {
			long deadline = System.nanoTime() + timeout.toNanos();
			synchronized (this.room) {
				long left;
				while (!this.roomMade && this.running.get() && (left = deadline - System.nanoTime()) > 0) {
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

	/** Called under the partition's monitor when one of its records is done. */
	private void madeRoom(PartitionWork work) {
		if (work.boundPaused && !this.roomMade
				&& work.offsets.inFlight() <= this.settings.maxInFlightPerPartition() / 2) {
			synchronized (this.room) {
				this.roomMade = true;
				this.room.notifyAll();
			}
		}
	}

	private void applyBounds(Consumer<byte[], byte[]> consumer) {
		for (PartitionWork work : this.partitions.values()) {
			int inFlight;
			synchronized (work) {
				inFlight = work.offsets.inFlight();
			}
			if (!work.boundPaused && inFlight >= this.settings.maxInFlightPerPartition()) {
				work.boundPaused = true;
				consumer.pause(List.of(work.partition));
			}
			else if (work.boundPaused && inFlight <= this.settings.maxInFlightPerPartition() / 2) {
				work.boundPaused = false;
				if (work.barrierOpen && work.stopped == null) {
					consumer.resume(List.of(work.partition));
				}
			}
		}
	}

	/**
	 * Notes each partition's end offset as of the last fetch (no request: the fetch responses
	 * carry it), for {@link #lag}.
	 */
	private void noteEndOffsets(Consumer<byte[], byte[]> consumer) {
		for (PartitionWork work : this.partitions.values()) {
			try {
				OptionalLong behind = consumer.currentLag(work.partition);
				if (behind.isPresent()) {
					work.endOffset = consumer.position(work.partition, Duration.ZERO) + behind.getAsLong();
					work.fetchLag = behind.getAsLong();
				}
			}
			catch (RuntimeException ex) {
				// no position yet: the partition has not been fetched from
			}
		}
	}

	/**
	 * The records of an assigned partition not done yet: from the first one pending to the end
	 * of the partition as of the last fetch. For a stage topic this is its depth: retries
	 * waiting or running. Empty for a partition not assigned here or not fetched from yet.
	 */
	public OptionalLong lag(TopicPartition partition) {
		PartitionWork work = this.partitions.get(partition);
		if (work == null || work.endOffset < 0) {
			return OptionalLong.empty();
		}
		long from;
		synchronized (work) {
			from = work.offsets.committable();
		}
		// nothing read since the assignment: the consumer's own lag is the partition's
		return OptionalLong.of((from < 0) ? work.fetchLag : Math.max(0, work.endOffset - from));
	}

	/**
	 * Registers a callback run on the poll thread after every change of the assignment, for
	 * meters per partition.
	 */
	public void onAssignmentChanged(Runnable callback) {
		this.assignmentCallbacks.add(callback);
	}

	/** Tells the observer and the assignment callbacks that partitions were {@code kind}. */
	private void rebalanced(String kind, Collection<TopicPartition> partitions) {
		this.observer.rebalanced(this.id, kind, partitions);
		this.assignmentCallbacks.run();
	}

	/** The partitions assigned to this container's consumer now. */
	public Set<TopicPartition> assignment() {
		return Set.copyOf(this.partitions.keySet());
	}

	/**
	 * The assigned partitions whose sync barrier is still closed, with how long each has
	 * waited for the lock view so far.
	 */
	public Map<TopicPartition, Duration> closedBarriers() {
		long now = System.nanoTime();
		Map<TopicPartition, Duration> closed = new HashMap<>();
		this.partitions.forEach((tp, work) -> {
			if (!work.barrierOpen) {
				closed.put(tp, Duration.ofNanos(now - work.assignedNanos));
			}
		});
		return closed;
	}

	/**
	 * How long ago the consumer's last poll returned: what {@code max.poll.interval.ms} bounds.
	 * Zero before the first poll.
	 */
	public Duration sinceLastPoll() {
		long last = this.lastPollNanos;
		return (last != 0) ? Duration.ofNanos(System.nanoTime() - last) : Duration.ZERO;
	}

	private void commit(Consumer<byte[], byte[]> consumer, Collection<TopicPartition> which) {
		this.lastCommit = this.clock.millis();
		try {
			this.committer.commit(consumer, this.offsets.of(which));
		}
		catch (WakeupException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			logger.warn("Listener '" + this.id + "' could not commit the offsets of " + which + "; will try again", ex);
		}
	}

	/**
	 * Makes a task ready to run. Ready tasks wait in one queue that at most {@code concurrency}
	 * workers drain; a worker is started only when fewer are draining. While records arrive
	 * faster than the workers finish them, no worker sleeps and no record costs a thread
	 * hand-off.
	 */
	private void submit(Task task) {
		if (this.stopping || task.work.revoked) {
			return;
		}
		this.ready.add(task);
		if (claimDrainer()) {
			try {
				this.workers.execute(this::drain);
			}
			catch (java.util.concurrent.RejectedExecutionException ex) {
				// stopping: the records are delivered again after the restart
				this.draining.decrementAndGet();
			}
		}
	}

	private boolean claimDrainer() {
		int now;
		do {
			now = this.draining.get();
			if (now >= this.settings.concurrency()) {
				return false;
			}
		}
		while (!this.draining.compareAndSet(now, now + 1));
		return true;
	}

	private void drain() {
		do {
			try {
				Task task;
				while ((task = this.ready.poll()) != null) {
					try {
						run(task);
					}
					catch (RuntimeException ex) {
						// a bug: the record stays pending, so it is delivered again after a restart
						logger.error("Listener '" + this.id + "' failed to run " + task.delivery, ex);
					}
				}
			}
			finally {
				this.draining.decrementAndGet();
			}
			// a task added after the queue looked empty, while every drainer was still counted
		}
		while (!this.ready.isEmpty() && claimDrainer());
	}

	private void run(Task task) {
		if (this.stopping || task.work.revoked) {
			return;
		}
		if (task.admission != null) {
			admit(task);
			return;
		}
		Route route = task.work.route;
		List<Lock> before = (task.key != null) ? route.registry().locksOf(task.key) : List.of();
		Step step;
		try {
			step = this.committer.route(task.delivery, () -> route.router().route(task.delivery, task.tailerSynced),
					this.offsets);
			if (step.kind() != Step.Kind.SETTLING) {
				task.failures = 0; // writes under way count as a success only once they complete
			}
		}
		catch (RuntimeException ex) {
			routeFailed(task, ex);
			return;
		}
		switch (step.kind()) {
			case DONE -> complete(task);
			case SETTLING -> settle(task, step.writes());
			case WAIT_UNTIL -> {
				if (!park(task, step.dueAt())) {
					schedule(task, step.dueAt() - this.clock.millis());
				}
			}
			case WAIT_FOR_TAILER -> catchUpThenSubmit(task);
			case WAIT_FOR_KEY -> waitForKey(task, route, before);
		}
	}

	/**
	 * A step failed, or its writes did: the record is routed again after a backoff, unless it
	 * can go nowhere. A write that reported a failure may have landed (its acknowledgement was
	 * lost), and the undo of it may have failed too; this instance's table has not seen it. So the
	 * record is routed again only once the tailer has caught up with its lock partition, as a
	 * redelivery after a crash is behind the sync barrier: it then finds the lock its failed step
	 * wrote and finishes that move (PROTOCOL §5.0, §6.1), or finds it released, instead of writing
	 * a second lock beside it or bringing a released one back.
	 */
	private void routeFailed(Task task, Throwable ex) {
		if (ex instanceof StageRouter.UnpublishableRecordException unpublishable) {
			stop(task, unpublishable);
			return;
		}
		Duration backoff = backoff(++task.failures);
		logger.warn("Listener '" + this.id + "' could not route " + task.delivery + " (attempt " + task.failures
				+ "); trying again in " + backoff.toMillis() + " ms", ex);
		task.tailerSynced = false;
		scheduleAction(() -> catchUpThenSubmit(task), backoff.toMillis());
	}

	/**
	 * Runs a task (a record, or an admission) once the tailer has caught up with its lock
	 * partition, which has the number of the task's partition.
	 */
	private void catchUpThenSubmit(Task task) {
		task.work.route.registry().catchUp(task.work.partition.partition()).whenComplete((ignored, ex) -> {
			task.tailerSynced = (ex == null);
			if (ex != null) {
				schedule(task, backoff(++task.failures).toMillis());
			}
			else {
				submit(task);
			}
		});
	}

	/**
	 * A record whose writes are under way frees its worker at once (PROTOCOL §8): it stays at
	 * the head of its key's queue, so the key's later records wait, and its offset stays
	 * pending, so no commit passes it, until the writes complete.
	 */
	private void settle(Task task, CompletableFuture<?> writes) {
		this.settling.put(writes, task.work.partition);
		writes.whenComplete((ignored, ex) -> {
			this.settling.remove(writes);
			if (ex == null) {
				task.failures = 0;
				complete(task);
			}
			else if (!this.stopping && !task.work.revoked) {
				routeFailed(task, Futures.cause(ex));
			}
		});
	}

	/**
	 * Stops a partition at a record that can go nowhere (neither its next topic nor the
	 * dead-letter topic takes it): trying again cannot help until a setting is raised, and
	 * going on would only pile up records that are done but cannot be committed past it. The
	 * record stays pending, so the committed offset stays below it and it is delivered again
	 * after a restart or a rebalance; the partition is paused, and the records already handed
	 * out finish.
	 */
	private void stop(Task task, StageRouter.UnpublishableRecordException ex) {
		PartitionWork work = task.work;
		String reason = ex.getMessage();
		synchronized (work) {
			if (work.revoked) {
				return;
			}
			if (work.stopped == null) {
				work.stopped = reason;
			}
		}
		logger.error("Listener '" + this.id + "' stopped consuming " + work.partition + " at offset "
				+ task.delivery.offset() + ", which stays uncommitted: " + reason, ex);
		this.pollThreadActions.add(() -> {
			if (this.partitions.get(work.partition) == work) {
				this.consumer.pause(List.of(work.partition));
			}
		});
	}

	/**
	 * The partitions this container stopped consuming because a record in them can be neither
	 * moved on nor dead-lettered, each with the reason: the record, the topic that refused it
	 * and the setting to raise. A partition stays stopped until it is assigned again (after a
	 * restart or a rebalance), which delivers the record again.
	 */
	public Map<TopicPartition, String> stoppedPartitions() {
		Map<TopicPartition, String> stopped = new HashMap<>();
		this.partitions.forEach((tp, work) -> {
			String reason = work.stopped;
			if (reason != null) {
				stopped.put(tp, reason);
			}
		});
		return stopped;
	}

	private void waitForKey(Task task, Route route, List<Lock> before) {
		this.waitingForKey.computeIfAbsent(task.key, (k) -> ConcurrentHashMap.newKeySet()).add(task);
		if (!route.registry().locksOf(task.key).equals(before)) {
			wake(task); // changed while we were looking
			return;
		}
		scheduleAction(() -> wake(task), this.settings.recheckInterval().toMillis());
	}

	/**
	 * A replayed dead letter's lock is pending (docs/PROTOCOL.md, rule 2.0): if its main-topic partition is
	 * assigned here and open, its admission takes its turn in its key's queue, behind the
	 * records of its key taken from the partition so far.
	 */
	private void admissionNeeded(Route route, Lock lock) {
		PartitionWork work = this.partitions.get(new TopicPartition(route.router().plan().mainTopic(), lock.originPartition()));
		if (work == null || !work.barrierOpen) {
			return; // the partition's owner admits it, or this instance once its barrier opens
		}
		Task task;
		boolean runNow;
		synchronized (work) {
			if (work.revoked || !work.admissions.add(lock.id())) {
				return;
			}
			task = new Task(work, lock, work.lastTaken);
			runNow = enqueue(work, task);
		}
		if (runNow) {
			submit(task);
		}
	}

	/**
	 * Admits a replay in its key's turn, on a lock view caught up with its lock partition, so
	 * that a lock another owner admitted meanwhile (and that may have moved on) is not written
	 * back.
	 */
	private void admit(Task task) {
		LockRegistry registry = task.work.route.registry();
		if (!task.tailerSynced) {
			catchUpThenSubmit(task);
			return;
		}
		try {
			ReplayAdmission.admit(registry, task.admission, task.lastTaken, this.clock.instant());
		}
		catch (RuntimeException ex) {
			task.tailerSynced = false;
			Duration backoff = backoff(++task.failures);
			logger.warn("Listener '" + this.id + "' could not admit replayed lock " + task.admission + " of "
					+ task.work.partition + " (attempt " + task.failures + "); trying again in " + backoff.toMillis() + " ms",
					ex);
			schedule(task, backoff.toMillis());
			return;
		}
		PartitionWork work = task.work;
		Task next;
		synchronized (work) {
			if (work.revoked) {
				return;
			}
			work.admissions.remove(task.admission);
			next = nextOfKey(work, task.key);
		}
		if (next != null) {
			submit(next);
		}
	}

	private void keyChanged(Bytes key) {
		Set<Task> waiting = this.waitingForKey.get(key);
		if (waiting != null) {
			for (Task task : List.copyOf(waiting)) {
				wake(task);
			}
		}
	}

	private void wake(Task task) {
		Set<Task> waiting = this.waitingForKey.get(task.key);
		if (waiting != null && waiting.remove(task)) {
			this.waitingForKey.computeIfPresent(task.key, (k, set) -> set.isEmpty() ? null : set);
			submit(task);
		}
	}

	private void complete(Task task) {
		PartitionWork work = task.work;
		Task next = null;
		synchronized (work) {
			if (work.revoked) {
				return;
			}
			work.offsets.done(task.delivery.offset());
			madeRoom(work);
			next = nextOfKey(work, task.key);
		}
		if (next != null) {
			submit(next);
		}
	}

	/** Takes the head off a key's queue (under the partition's monitor); returns the next one. */
	private static @Nullable Task nextOfKey(PartitionWork work, @Nullable Bytes key) {
		if (key == null) {
			return null;
		}
		ArrayDeque<Task> queue = work.keyQueues.get(key);
		if (queue == null) {
			return null;
		}
		queue.poll();
		Task next = queue.peek();
		if (next == null) {
			work.keyQueues.remove(key);
		}
		return next;
	}

	private void schedule(Task task, long delayMillis) {
		scheduleAction(() -> submit(task), delayMillis);
	}

	private void scheduleAction(Runnable action, long delayMillis) {
		if (this.stopping) {
			return;
		}
		try {
			this.timers.schedule(action, Math.max(0, delayMillis), TimeUnit.MILLISECONDS);
		}
		catch (java.util.concurrent.RejectedExecutionException ex) {
			// stopping
		}
	}

	private static Duration backoff(int failures) {
		return Backoff.after(failures, FIRST_BACKOFF, MAX_BACKOFF);
	}

	private static ThreadFactory threads(String prefix) {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
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
		long inFlight = 0;
		long parked = 0;
		int busiestPartition = 0;
		int busiest = 0;
		for (PartitionWork work : this.partitions.values()) {
			synchronized (work) {
				inFlight += work.offsets.inFlight();
				busiestPartition = Math.max(busiestPartition, work.offsets.inFlight());
				parked += work.offsets.parkedCount();
				for (ArrayDeque<Task> queue : work.keyQueues.values()) {
					busiest = Math.max(busiest, queue.size());
				}
				for (Map.Entry<Bytes, Integer> entry : work.parkedKeys.entrySet()) {
					ArrayDeque<Task> queue = work.keyQueues.get(entry.getKey());
					busiest = Math.max(busiest, entry.getValue() + ((queue != null) ? queue.size() : 0));
				}
			}
		}
		return new Load(inFlight, parked, busiestPartition, busiest);
	}

	/**
	 * Reads parked records again, with a consumer of its own, when they are nearly due and
	 * their partition has room in its in-flight bound. It reads a partition's parked records
	 * in offset order and stops at the first one not nearly due (a later retry of the same
	 * stage is due later still), unless an earlier record of its key was read again in the
	 * same pass. A parked offset the log no longer holds (deleted by retention) is done: there
	 * is nothing left to run, and the reaper releases its lock.
	 */
	private final class Rereader {

		private static final long IDLE_MILLIS = 200;

		private static final int MAX_EMPTY_POLLS = 20;

		private final Consumer<byte[], byte[]> consumer;

		private final Thread thread;

		private final Object signal = new Object();

		private volatile boolean done;

		private boolean woken;

		Rereader(Consumer<byte[], byte[]> consumer) {
			this.consumer = consumer;
			this.thread = new Thread(this::loop, "kafka-resilience-" + OrderedRetryContainer.this.id + "-rereader");
			this.thread.setDaemon(true);
		}

		void start() {
			this.thread.start();
		}

		void wake() {
			synchronized (this.signal) {
				this.woken = true;
				this.signal.notifyAll();
			}
		}

		void stop() {
			this.done = true;
			this.consumer.wakeup();
			wake();
			try {
				this.thread.join(OrderedRetryContainer.this.settings.shutdownTimeout().toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		private void loop() {
			try {
				while (!this.done) {
					long next = OrderedRetryContainer.this.clock.millis() + IDLE_MILLIS;
					for (PartitionWork work : OrderedRetryContainer.this.partitions.values()) {
						if (!this.done) {
							next = Math.min(next, visit(work));
						}
					}
					await(next - OrderedRetryContainer.this.clock.millis());
				}
			}
			catch (WakeupException ex) {
				// stopping
			}
			catch (RuntimeException ex) {
				logger.error("Listener '" + OrderedRetryContainer.this.id + "' stopped reading parked records again; "
						+ "they are read again after a restart", ex);
			}
			finally {
				this.consumer.close(Duration.ofSeconds(5));
			}
		}

		/** Reads a partition's parked records again if it is time; returns when to look next. */
		private long visit(PartitionWork work) {
			long now = OrderedRetryContainer.this.clock.millis();
			long from;
			synchronized (work) {
				if (work.revoked || work.offsets.parkedCount() == 0 || work.lookAt > now) {
					return work.lookAt;
				}
				if (work.offsets.inFlight() >= OrderedRetryContainer.this.settings.maxInFlightPerPartition()) {
					return now + IDLE_MILLIS;
				}
				from = work.offsets.nextParked(0);
				work.lookAt = Long.MAX_VALUE;
			}
			try {
				long lookAt = pass(work, from);
				synchronized (work) {
					work.lookAt = Math.min(work.lookAt, lookAt);
					return work.lookAt;
				}
			}
			catch (WakeupException ex) {
				throw ex;
			}
			catch (RuntimeException ex) {
				logger.warn("Listener '" + OrderedRetryContainer.this.id + "' could not read parked records of "
						+ work.partition + " again; will try again", ex);
				synchronized (work) {
					work.lookAt = Math.min(work.lookAt, now + 1000);
					return work.lookAt;
				}
			}
		}

		/** One pass over a partition's parked records; returns when the next pass is due. */
		private long pass(PartitionWork work, long from) {
			TopicPartition tp = work.partition;
			StageRouter router = work.route.router();
			long lead = OrderedRetryContainer.this.settings.rereadLeadMillis();
			this.consumer.assign(List.of(tp));
			this.consumer.seek(tp, from);
			Set<Bytes> sentOn = new HashSet<>();
			long expected = from;
			int emptyPolls = 0;
			while (!this.done && !work.revoked) {
				ConsumerRecords<byte[], byte[]> records = this.consumer.poll(OrderedRetryContainer.this.settings.pollTimeout());
				if (records.isEmpty()) {
					if (++emptyPolls >= MAX_EMPTY_POLLS) {
						return OrderedRetryContainer.this.clock.millis() + IDLE_MILLIS;
					}
					continue;
				}
				emptyPolls = 0;
				for (ConsumerRecord<byte[], byte[]> record : records) {
					doneIfGone(work, expected, record.offset());
					expected = record.offset() + 1;
					synchronized (work) {
						if (!work.offsets.isParked(record.offset())) {
							if (work.offsets.nextParked(record.offset()) < 0) {
								return Long.MAX_VALUE; // nothing parked beyond: the pass is over
							}
							continue;
						}
					}
					Delivery parked = delivery(record);
					Bytes key = parked.businessKey();
					long due = router.earliestRun(parked);
					boolean behindSentOn = key != null && sentOn.contains(key);
					if (due - lead > OrderedRetryContainer.this.clock.millis() && !behindSentOn) {
						return due - lead;
					}
					if (!unpark(work, parked)) {
						return OrderedRetryContainer.this.clock.millis() + IDLE_MILLIS; // no room
					}
					if (key != null) {
						sentOn.add(key);
					}
				}
			}
			return Long.MAX_VALUE;
		}

		/** Parked offsets in [from, to) that a read from {@code from} skipped are gone from the log. */
		private void doneIfGone(PartitionWork work, long from, long to) {
			synchronized (work) {
				for (long offset = work.offsets.nextParked(from); offset >= 0 && offset < to; offset = work.offsets
					.nextParked(offset + 1)) {
					logger.warn("Listener '" + OrderedRetryContainer.this.id + "': parked record " + work.partition + "@"
							+ offset + " is no longer in the log (retention shorter than the delay?); nothing is left "
							+ "to run, and the reaper releases its lock");
					work.offsets.done(offset);
				}
				work.forgetParkedKeysIfNoneParked();
			}
		}

		private void await(long millis) {
			if (millis <= 0) {
				return;
			}
			synchronized (this.signal) {
				if (!this.woken) {
					try {
						this.signal.wait(millis);
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
						this.done = true;
					}
				}
				this.woken = false;
			}
		}

	}

	private final class Rebalance implements ConsumerRebalanceListener {

		private final Consumer<byte[], byte[]> consumer;

		Rebalance(Consumer<byte[], byte[]> consumer) {
			this.consumer = consumer;
		}

		@Override
		public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
			logger.info("Listener '" + OrderedRetryContainer.this.id + "' revoked " + revoked);
			callUser("onPartitionsRevokedBeforeCommit",
					(user) -> user.onPartitionsRevokedBeforeCommit(this.consumer, revoked));
			awaitSettling(revoked);
			try {
				commit(this.consumer, revoked);
			}
			catch (RuntimeException ex) {
				logger.warn("Listener '" + OrderedRetryContainer.this.id + "' could not commit revoked partitions", ex);
			}
			drop(revoked);
			rebalanced("revoked", revoked);
			callUser("onPartitionsRevokedAfterCommit", (user) -> user.onPartitionsRevokedAfterCommit(this.consumer, revoked));
		}

		@Override
		public void onPartitionsLost(Collection<TopicPartition> lost) {
			drop(lost);
			rebalanced("lost", lost);
			callUser("onPartitionsLost", (user) -> user.onPartitionsLost(this.consumer, lost));
		}

		/**
		 * Calls the application's rebalance listener; its failure is logged and does not keep
		 * the library from committing, dropping or pausing partitions.
		 */
		private void callUser(String callback, java.util.function.Consumer<ConsumerAwareRebalanceListener> call) {
			ConsumerAwareRebalanceListener user = OrderedRetryContainer.this.userListener;
			if (user == null) {
				return;
			}
			try {
				call.accept(user);
			}
			catch (RuntimeException ex) {
				logger.warn("Listener '" + OrderedRetryContainer.this.id + "': the application's rebalance listener failed in "
						+ callback, ex);
			}
		}

		@Override
		public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
			logger.info("Listener '" + OrderedRetryContainer.this.id + "' assigned " + assigned);
			OrderedRetryContainer.this.groupMetadata = this.consumer.groupMetadata();
			for (TopicPartition tp : assigned) {
				Route route = OrderedRetryContainer.this.routesByTopic.get(tp.topic());
				PartitionWork work = new PartitionWork(tp, route);
				OrderedRetryContainer.this.partitions.put(tp, work);
				OrderedRetryContainer.this.barrier.close(this.consumer, tp, route.registry())
					.whenComplete((waited, ex) -> OrderedRetryContainer.this.pollThreadActions.add(() -> open(work, waited, ex)));
			}
			seekToCommitted(assigned);
			rebalanced("assigned", assigned);
			callUser("onPartitionsAssigned", (user) -> user.onPartitionsAssigned(this.consumer, assigned));
		}

		/**
		 * Starts every assigned partition at its committed offset. A consumer keeps its fetch
		 * position for a partition it gets back in a rebalance, but the records it had fetched
		 * past the commit were dropped with the revoked partition and must be read again.
		 * Retry topics are the library's own: a group that has never committed on one reads it
		 * from the beginning whatever the application's auto.offset.reset, or a record moved
		 * there before the first fetch would be skipped.
		 */
		private void seekToCommitted(Collection<TopicPartition> assigned) {
			if (assigned.isEmpty()) {
				return;
			}
			Map<TopicPartition, OffsetAndMetadata> committed = this.consumer.committed(new HashSet<>(assigned));
			List<TopicPartition> fromBeginning = new ArrayList<>();
			for (TopicPartition tp : assigned) {
				OffsetAndMetadata offset = committed.get(tp);
				Long dropped = OrderedRetryContainer.this.droppedAt.remove(tp);
				if (offset != null) {
					this.consumer.seek(tp, offset);
					PartitionWork work = OrderedRetryContainer.this.partitions.get(tp);
					if (work != null) {
						synchronized (work) {
							work.lastTaken = Math.max(work.lastTaken, offset.offset() - 1);
						}
					}
				}
				else if (dropped != null && dropped >= 0) {
					this.consumer.seek(tp, dropped);
				}
				else if (OrderedRetryContainer.this.routesByTopic.get(tp.topic()).router().plan().stageOf(tp.topic()) > 0) {
					fromBeginning.add(tp);
				}
			}
			if (!fromBeginning.isEmpty()) {
				this.consumer.seekToBeginning(fromBeginning);
			}
		}

		private void open(PartitionWork work, @Nullable Duration waited, @Nullable Throwable ex) {
			if (work.revoked || OrderedRetryContainer.this.partitions.get(work.partition) != work) {
				return;
			}
			if (ex != null) {
				logger.warn("Listener '" + OrderedRetryContainer.this.id + "' could not sync the lock table for "
						+ work.partition + "; trying again", ex);
				OrderedRetryContainer.this.barrier.close(this.consumer, work.partition, work.route.registry())
					.whenComplete((w, e) -> OrderedRetryContainer.this.pollThreadActions.add(() -> open(work, w, e)));
				return;
			}
			work.barrierOpen = true;
			OrderedRetryContainer.this.observer.barrierOpened(OrderedRetryContainer.this.id,
					work.route.registry().ownership().group(), work.partition, waited);
			if (logger.isDebugEnabled()) {
				logger.debug("Listener '" + OrderedRetryContainer.this.id + "' opened " + work.partition + " after "
						+ waited.toMillis() + " ms");
			}
			if (!work.boundPaused && work.stopped == null) {
				this.consumer.resume(List.of(work.partition));
			}
			if (work.route.router().plan().stageOf(work.partition.topic()) == 0) {
				work.route.registry().table().pending(work.partition.partition())
					.forEach((lock) -> admissionNeeded(work.route, lock));
			}
		}

		private void drop(Collection<TopicPartition> partitions) {
			for (TopicPartition tp : partitions) {
				PartitionWork work = OrderedRetryContainer.this.partitions.remove(tp);
				if (work != null) {
					synchronized (work) {
						work.revoked = true;
						OrderedRetryContainer.this.droppedAt.put(tp, work.offsets.committable());
					}
				}
			}
			OrderedRetryContainer.this.waitingForKey.values().forEach((set) -> set.removeIf((task) -> task.work.revoked));
		}

	}

	/**
	 * The offsets of the assigned partitions: what may be committed (never below what was
	 * committed in this assignment) and what was.
	 */
	private final class Offsets implements TransactionalWrites.OffsetBook {

		private Collection<TopicPartition> scope = List.of();

		Offsets of(Collection<TopicPartition> which) {
			Offsets view = new Offsets();
			view.scope = which;
			return view;
		}

		Map<TopicPartition, OffsetAndMetadata> committable(Collection<TopicPartition> which) {
			Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
			for (TopicPartition tp : which) {
				PartitionWork work = OrderedRetryContainer.this.partitions.get(tp);
				if (work != null) {
					synchronized (work) {
						long committable = work.offsets.committable();
						if (committable > work.committed) {
							offsets.put(tp, new OffsetAndMetadata(committable));
						}
					}
				}
			}
			return offsets;
		}

		@Override
		public Map<TopicPartition, OffsetAndMetadata> committable() {
			return committable(this.scope);
		}

		@Override
		public Map<TopicPartition, OffsetAndMetadata> afterDone(Collection<Delivery> records) {
			Map<TopicPartition, Set<Long>> byPartition = new HashMap<>();
			for (Delivery record : records) {
				byPartition.computeIfAbsent(new TopicPartition(record.topic(), record.partition()), (tp) -> new HashSet<>())
					.add(record.offset());
			}
			Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
			byPartition.forEach((tp, done) -> {
				PartitionWork work = OrderedRetryContainer.this.partitions.get(tp);
				if (work != null) {
					synchronized (work) {
						long committable = work.offsets.committableOnceDone(done);
						if (committable > work.committed) {
							offsets.put(tp, new OffsetAndMetadata(committable));
						}
					}
				}
			});
			return offsets;
		}

		@Override
		public void committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
			offsets.forEach((tp, offset) -> {
				PartitionWork work = OrderedRetryContainer.this.partitions.get(tp);
				if (work != null) {
					synchronized (work) {
						work.committed = Math.max(work.committed, offset.offset());
					}
				}
			});
		}

		@Override
		public ConsumerGroupMetadata group() {
			ConsumerGroupMetadata group = OrderedRetryContainer.this.groupMetadata;
			if (group == null) {
				throw new IllegalStateException("Listener '" + OrderedRetryContainer.this.id + "' has not joined its group yet");
			}
			return group;
		}

	}

	private static final class PartitionWork {

		final TopicPartition partition;

		final Route route;

		final OffsetTracker offsets = new OffsetTracker();

		final Map<Bytes, ArrayDeque<Task>> keyQueues = new HashMap<>();

		/** Keys with parked records here, and how many: later records of such a key park too. */
		final Map<Bytes, Integer> parkedKeys = new HashMap<>();

		/** The replays whose admission waits in a key queue here, by lock id. */
		final Set<String> admissions = new HashSet<>();

		/**
		 * The offset of the last record taken from this partition (or the one before its
		 * committed offset): a replay admitted now goes behind it.
		 */
		long lastTaken = -1;

		/** When the re-reader should next look at the parked records: epoch millis. */
		long lookAt = Long.MAX_VALUE;

		volatile boolean revoked;

		volatile boolean barrierOpen;

		final long assignedNanos = System.nanoTime();

		/** Written by the poll thread only; read by workers to tell it when there is room. */
		volatile boolean boundPaused;

		/** Why the partition was stopped at a record that can go nowhere, or {@code null}. */
		volatile @Nullable String stopped;

		long committed = -1;

		/** The end of the partition as of the last fetch, or -1: see {@link #lag}. */
		volatile long endOffset = -1;

		/** The consumer's lag as of the last fetch: the end offset minus its position. */
		volatile long fetchLag;

		PartitionWork(TopicPartition partition, Route route) {
			this.partition = partition;
			this.route = route;
		}

		/**
		 * A parked record the log no longer holds leaves its key counted; once nothing is
		 * parked, no key is.
		 */
		void forgetParkedKeysIfNoneParked() {
			if (this.offsets.parkedCount() == 0) {
				this.parkedKeys.clear();
			}
		}

	}

	/**
	 * A record to route, or the admission of a replay ({@link #admission} set, no record): both
	 * take their turn in their key's queue.
	 */
	private static final class Task {

		final PartitionWork work;

		final Delivery delivery;

		final @Nullable Bytes key;

		/** The pending lock this task admits, or {@code null} for a record. */
		final @Nullable String admission;

		/** For an admission: the last record taken from the partition when its turn was queued. */
		final long lastTaken;

		volatile boolean tailerSynced;

		volatile int failures;

		Task(PartitionWork work, Delivery delivery) {
			this.work = work;
			this.delivery = delivery;
			this.key = delivery.businessKey();
			this.admission = null;
			this.lastTaken = -1;
		}

		Task(PartitionWork work, Lock pending, long lastTaken) {
			this.work = work;
			this.delivery = null;
			this.key = pending.key();
			this.admission = pending.id();
			this.lastTaken = lastTaken;
		}

	}

}
