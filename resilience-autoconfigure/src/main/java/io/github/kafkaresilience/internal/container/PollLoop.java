package io.github.kafkaresilience.internal.container;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;

import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.internal.container.offsets.WritesUnderWay;
import io.github.kafkaresilience.ladder.Delivery;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;

/**
 * One consumer of a container in its group, and the loop that polls it on a thread of its
 * own: it subscribes to some of the container's topics (its main topics, or their
 * stages), hands the records it polls to the container's workers within each partition's
 * in-flight bound, pauses and resumes its partitions (at their bound, for the
 * application's pause, during an outage hold) and commits their offsets. The loop never
 * sleeps or blocks on a record.
 * <p>
 * A container reads its main topics and their stages with consumers of their own, so that
 * the group's assignor balances each over the instances whatever it is: with one
 * subscription of all the topics, an assignor that balances the count of partitions per
 * member (the {@code consumer} protocol's {@code uniform}) may give one instance every
 * partition of the main topic and the others only stages.
 */
final class PollLoop {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(PollLoop.class);

	/** What the loop asks of its container. */
	interface Container {

		/** Whether the container runs: the loop polls until it stops. */
		boolean isRunning();

		/** Called on the loop's thread before its consumer subscribes. */
		void beforeSubscribing(PollLoop loop);

		/**
		 * Hands polled records of a partition to it, in order; returns how many it took.
		 */
		int take(PartitionWork work, List<Delivery> records);

		/**
		 * The loop stopped polling: the container's last work (draining its workers) may
		 * begin.
		 */
		void stoppedPolling(PollLoop loop);

		/**
		 * Waits until the container's workers are drained and their writes settled,
		 * before the last commit.
		 */
		void awaitDrained();

		/** The loop's consumer is closed. */
		void closed(PollLoop loop);

	}

	private final String id;

	private final String name;

	private final Set<String> topics;

	private final Consumer<byte[], byte[]> consumer;

	private final Partitions.Side partitions;

	private final ContainerSettings settings;

	private final OffsetCommitter committer;

	private final ContainerOffsets offsets;

	private final ContainerStats stats;

	private final ResilienceObserver observer;

	private final PauseRequest.Consumption pause;

	private final ContainerEvents events;

	private final Container container;

	private final Backpressure backpressure = new Backpressure();

	private final FailedPolls failedPolls;

	private final CommitSchedule commits;

	private final Queue<Runnable> actions = new ConcurrentLinkedQueue<>();

	private final Thread thread;

	private volatile long lastPollNanos;

	private @Nullable ConsumerRebalanceListener rebalanceListener;

	/**
	 * @param id the listener's id
	 * @param name what the consumer reads, for its thread's name: {@code main} or
	 * {@code retries}
	 * @param topics the topics it subscribes to
	 * @param consumer the consumer, closed when the loop ends
	 * @param partitions the partitions assigned to it, as the container keeps them
	 */
	PollLoop(String id, String name, Set<String> topics, Consumer<byte[], byte[]> consumer, Partitions.Side partitions,
			ContainerSettings settings, OffsetCommitter committer, ContainerOffsets offsets, WritesUnderWay settling,
			ContainerStats stats, ResilienceObserver observer, PauseRequest.Consumption pause, ContainerEvents events,
			Clock clock, Container container) {
		this.id = id;
		this.name = name;
		this.topics = Set.copyOf(topics);
		this.consumer = consumer;
		this.partitions = partitions;
		this.settings = settings;
		this.committer = committer;
		this.offsets = offsets;
		this.stats = stats;
		this.observer = observer;
		this.pause = pause;
		this.events = events;
		this.container = container;
		this.failedPolls = new FailedPolls(id, this.backpressure);
		this.commits = new CommitSchedule(id, committer, offsets, settling, settings, clock);
		this.thread = new Thread(this::run, "kafka-resilience-" + id + "-" + name);
	}

	/**
	 * Subscribes with {@code listener} (made for this loop's consumer) and starts
	 * polling.
	 */
	void start(ConsumerRebalanceListener listener) {
		this.rebalanceListener = listener;
		this.thread.start();
	}

	Consumer<byte[], byte[]> consumer() {
		return this.consumer;
	}

	Set<String> topics() {
		return this.topics;
	}

	Backpressure backpressure() {
		return this.backpressure;
	}

	CommitSchedule commits() {
		return this.commits;
	}

	PauseRequest.Consumption pause() {
		return this.pause;
	}

	/**
	 * Pauses the assigned partitions that have a reason to be paused and resumes the
	 * others: before every poll, and in the assignment callback. Poll thread only.
	 */
	void settlePauses() {
		this.pause.settle(this.consumer, this.partitions.all(), this.events);
	}

	/** Runs an action on the loop's thread, before its next poll. */
	void onPollThread(Runnable action) {
		this.actions.add(action);
	}

	/** How long ago the consumer's last poll returned; zero before the first. */
	Duration sinceLastPoll() {
		long last = this.lastPollNanos;
		return (last != 0) ? Duration.ofNanos(System.nanoTime() - last) : Duration.ZERO;
	}

	/** Ends the poll loop: a poll under way returns, a wait for room ends. */
	void wakeup() {
		this.backpressure.wakeAll();
		this.consumer.wakeup();
	}

	/**
	 * Waits for the loop's thread to end, up to {@code timeout}; an interrupt ends the
	 * wait.
	 */
	void join(Duration timeout) {
		try {
			this.thread.join(timeout.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void run() {
		try {
			this.container.beforeSubscribing(this);
			this.consumer.subscribe(this.topics, this.rebalanceListener);
			this.events.consumerStarted();
			BooleanSupplier running = this.container::isRunning;
			while (running.getAsBoolean()) {
				try {
					pollOnce(running);
					this.failedPolls.reset();
				}
				catch (WakeupException ex) {
					// stopping
				}
				catch (RuntimeException ex) {
					this.failedPolls.pauseAfter(ex, running);
				}
			}
		}
		finally {
			close();
		}
	}

	private void pollOnce(BooleanSupplier running) {
		runActions();
		Duration timeout = this.backpressure.awaitRoom(this.partitions.all(), this.settings.pollTimeout(),
				this::caughtUp, running);
		this.backpressure.takeHeldBack(this.partitions.all(), this.pause.held(), this.container::take);
		this.backpressure.mark(this.partitions.all());
		settlePauses();
		timeout = Backpressure.pollTimeout(this.partitions.all(), timeout);
		long now = System.nanoTime();
		if (this.lastPollNanos != 0) {
			this.observer.polling(this.id, Duration.ofNanos(now - this.lastPollNanos));
		}
		ConsumerRecords<byte[], byte[]> records = this.consumer.poll(timeout);
		this.lastPollNanos = System.nanoTime();
		this.committer.polled(this.consumer, this.offsets);
		this.events.polled(records.count(), this.consumer, this.pause.held());
		for (TopicPartition tp : records.partitions()) {
			dispatch(tp, records.records(tp));
		}
		if (this.commits.due()) {
			this.stats.noteEndOffsets(this.consumer, this.partitions.all());
			this.commits.commit(this.consumer, this.partitions.topicPartitions());
		}
	}

	/**
	 * The loop's end: once the container's workers are drained, commits what is done of
	 * its partitions and closes its consumer, on its own thread.
	 */
	private void close() {
		this.container.stoppedPolling(this);
		try {
			this.container.awaitDrained();
			this.commits.shutdown(this.consumer, this.partitions.topicPartitions());
		}
		finally {
			try {
				this.consumer.close(CloseOptions.timeout(Duration.ofSeconds(10)));
			}
			catch (RuntimeException ex) {
				logger.warn("Listener '" + this.id + "' could not close its " + this.name + " consumer", ex);
			}
			this.events.consumerStopped();
			this.container.closed(this);
		}
	}

	private void runActions() {
		for (Runnable action; (action = this.actions.poll()) != null;) {
			action.run();
		}
	}

	/**
	 * Hands a partition's polled records to the workers, up to its in-flight bound: at
	 * the bound the partition is paused and the rest are held back until it has room
	 * again, so it never holds more than the bound in flight.
	 */
	private void dispatch(TopicPartition tp, List<ConsumerRecord<byte[], byte[]>> records) {
		PartitionWork work = this.partitions.get(tp);
		if (work == null) {
			return; // revoked meanwhile: the new owner reads them
		}
		List<Delivery> deliveries = new ArrayList<>(records.size());
		for (ConsumerRecord<byte[], byte[]> record : records) {
			deliveries.add(Delivery.of(record));
		}
		this.backpressure.offer(work, deliveries, this.container::take);
	}

	/** Whether the consumer has fetched a partition to its end, as of its last fetch. */
	private boolean caughtUp(PartitionWork work) {
		OptionalLong lag = this.consumer.currentLag(work.partition);
		return lag.isPresent() && lag.getAsLong() == 0;
	}

	@Override
	public String toString() {
		return this.name + " consumer of listener '" + this.id + "'";
	}

}
