package io.github.kafkaresilience.internal.dlq;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import io.github.kafkaresilience.dlq.DeadLetter;
import io.github.kafkaresilience.dlq.DlqHandler;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.internal.support.Backoff;
import io.github.kafkaresilience.internal.support.Callbacks;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * Reads the dead-letter topics and calls the {@link DlqHandler} for every dead letter of
 * the listener's group: one consumer and thread per listener, in a group of its own
 * ({@code <listener group>.dlq-handler}), committing after each batch it handled. A
 * record of another group is skipped and counted in
 * {@code kafka.resilience.foreign.records}. It starts after the listeners and stops
 * before them.
 *
 * @since 0.1.0
 */
public class DlqDispatcher implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(DlqDispatcher.class);

	/** The first pause after a failed poll. */
	private static final Duration FIRST_BACKOFF = Duration.ofMillis(500);

	/** The longest pause after failed polls in a row. */
	private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

	/**
	 * Dead-letter topics of one listener, read by one consumer.
	 *
	 * @param listenerId the listener
	 * @param dlqTopics its dead-letter topics, each with the check of which dead letters
	 * its group owns: those of another group are skipped and counted, never handed to the
	 * handler
	 * @param consumers creates the consumer
	 */
	public record Source(String listenerId, Map<String, Ownership> dlqTopics,
			Supplier<Consumer<byte[], byte[]>> consumers) {

		public Source {
			dlqTopics = Map.copyOf(dlqTopics);
		}

	}

	private final Supplier<List<Source>> sources;

	private final DlqHandler handler;

	private final Duration pollTimeout;

	private final List<Reader> readers = new ArrayList<>();

	private final AtomicLong failures = new AtomicLong();

	private final Map<TopicPartition, Long> endOffsets = new ConcurrentHashMap<>();

	private final Callbacks assignmentCallbacks = new Callbacks("a dead-letter assignment change");

	private volatile boolean running;

	/**
	 * @param sources the dead-letter topics to read, asked for when starting (the
	 * listeners' topics are known once they run)
	 * @param handler the handler to call
	 * @param pollTimeout how long one poll waits
	 */
	public DlqDispatcher(Supplier<List<Source>> sources, DlqHandler handler, Duration pollTimeout) {
		this.sources = sources;
		this.handler = handler;
		this.pollTimeout = pollTimeout;
	}

	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		for (Source source : this.sources.get()) {
			Reader reader = new Reader(source);
			this.readers.add(reader);
			reader.thread.start();
		}
		this.running = true;
	}

	@Override
	public synchronized void stop() {
		this.running = false;
		this.readers.forEach(Reader::stop);
		this.readers.clear();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/** After the listeners' containers: their topics exist by then. */
	@Override
	public int getPhase() {
		return ListenerRegistry.PHASE + 1;
	}

	/** Dead letters the handler threw on. */
	public long handlerFailures() {
		return this.failures.get();
	}

	/**
	 * The end offset of each dead-letter partition read here, as of the last fetch (-1
	 * before the first): the number of dead letters ever written to it.
	 */
	public Map<TopicPartition, Long> endOffsets() {
		return Map.copyOf(this.endOffsets);
	}

	/**
	 * Registers a callback run after the dead-letter partitions read here changed, for
	 * meters.
	 */
	public void onAssignmentChanged(Runnable callback) {
		this.assignmentCallbacks.add(callback);
	}

	private void assignmentChanged() {
		this.assignmentCallbacks.run();
	}

	private final class Reader {

		private final Source source;

		private final Consumer<byte[], byte[]> consumer;

		private final Thread thread;

		private volatile boolean stopped;

		/** Counted down on stop: ends a pause after a failed poll at once. */
		private final CountDownLatch stopping = new CountDownLatch(1);

		private int failedPolls;

		Reader(Source source) {
			this.source = source;
			this.consumer = source.consumers().get();
			this.thread = new Thread(this::loop, "kafka-resilience-" + source.listenerId() + "-dlq-handler");
			this.thread.setDaemon(true);
		}

		void stop() {
			this.stopped = true;
			this.stopping.countDown();
			this.consumer.wakeup();
			try {
				this.thread.join(Duration.ofSeconds(30).toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		private void loop() {
			try {
				this.consumer.subscribe(this.source.dlqTopics().keySet(), new ConsumerRebalanceListener() {

					@Override
					public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
						partitions.forEach(DlqDispatcher.this.endOffsets::remove);
						assignmentChanged();
					}

					@Override
					public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
						noteEndOffsets(partitions);
						assignmentChanged();
					}

				});
				while (!this.stopped) {
					try {
						ConsumerRecords<byte[], byte[]> records = this.consumer.poll(DlqDispatcher.this.pollTimeout);
						for (ConsumerRecord<byte[], byte[]> record : records) {
							handle(record);
						}
						if (!records.isEmpty()) {
							this.consumer.commitSync();
						}
						noteEndOffsets(this.consumer.assignment());
						this.failedPolls = 0;
					}
					catch (WakeupException ex) {
						// stopping
					}
					catch (RuntimeException ex) {
						// a failure that lasts (a missing ACL, rejected credentials)
						// fails every poll at
						// once: pause, or the loop would spin and flood the log
						Duration pause = Backoff.after(++this.failedPolls, FIRST_BACKOFF, MAX_BACKOFF);
						logger.error("Dead-letter handler of listener '" + this.source.listenerId()
								+ "' failed to poll or commit (" + this.failedPolls + " in a row); polling again in "
								+ pause.toMillis() + " ms", ex);
						pause(pause);
					}
				}
			}
			finally {
				try {
					this.consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
				}
				catch (RuntimeException ex) {
					logger.warn(
							"Dead-letter handler of listener '" + this.source.listenerId() + "' did not close cleanly",
							ex);
				}
			}
		}

		private void pause(Duration pause) {
			try {
				this.stopping.await(pause.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				this.stopped = true;
			}
		}

		private void handle(ConsumerRecord<byte[], byte[]> record) {
			Ownership ownership = this.source.dlqTopics().get(record.topic());
			if (ownership != null
					&& !ownership.owns(record.topic(), record.partition(), record.offset(), record.headers())) {
				return; // another group's dead letter: its own handler reports it
			}
			DeadLetter deadLetter = DeadLetter.of(record);
			try {
				DlqDispatcher.this.handler.handle(deadLetter);
			}
			catch (Exception ex) {
				DlqDispatcher.this.failures.incrementAndGet();
				logger.error("Dead-letter handler failed on " + deadLetter + "; going on with the next dead letter",
						ex);
			}
		}

		private void noteEndOffsets(Collection<TopicPartition> assignment) {
			for (TopicPartition partition : assignment) {
				OptionalLong lag = this.consumer.currentLag(partition);
				Long position = lag.isPresent() ? knownPosition(partition) : null;
				if (position != null) {
					DlqDispatcher.this.endOffsets.put(partition, position + lag.getAsLong());
				}
				else {
					DlqDispatcher.this.endOffsets.putIfAbsent(partition, -1L);
				}
			}
		}

		/**
		 * The position of a partition if the consumer knows it without asking the broker.
		 * After a broker restart or a leader change the consumer validates its positions
		 * again before it fetches, and until then {@code position} with no time to wait
		 * throws.
		 */
		private @Nullable Long knownPosition(TopicPartition partition) {
			try {
				return this.consumer.position(partition, Duration.ZERO);
			}
			catch (TimeoutException ex) {
				return null;
			}
		}

	}

}
