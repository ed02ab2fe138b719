package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.Map;

import io.github.kafkaresilience.internal.container.transactions.TransactionalWrites;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.internal.ladder.FaultInjection;
import io.github.kafkaresilience.internal.ladder.RecordPublisher;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.LockStore;
import io.github.kafkaresilience.internal.support.ProducerClients;
import org.apache.kafka.clients.consumer.ConsumerConfig;

/**
 * How a listener keeps the writes of a move consistent: the lock, the published record
 * and the source offset (docs/PROTOCOL.md, rule 9). The one place that knows the two
 * modes: it supplies each listener's lock store, publisher and offset committer, and the
 * settings its consumer needs.
 *
 * @since 0.1.0
 */
public abstract class DualWriteStrategy {

	private DualWriteStrategy() {
	}

	/**
	 * Lock first, publish second, undone when the publish fails; offsets are committed by
	 * the consumer.
	 * @param publisher publishes to the ladder's topics
	 * @return the strategy
	 */
	public static DualWriteStrategy compensate(RecordPublisher publisher) {
		return new Compensate(publisher);
	}

	/**
	 * The lock writes, publishes and offset commits of steps go in Kafka transactions of
	 * each listener's own, and its consumer reads committed records only.
	 * @param producers creates the transactional producers
	 * @param instanceId this instance's id: the transactional ids are
	 * {@code kafka-resilience-<instance id>-<listener id>-<n>}, stable across restarts
	 * @param sendTimeout how long one send or commit may take
	 * @return the strategy
	 */
	public static DualWriteStrategy transaction(ProducerClients producers, String instanceId, Duration sendTimeout) {
		return new Transaction(producers, instanceId, sendTimeout);
	}

	/** The mode, as {@code kafka.resilience.dual-write} names it. */
	public abstract DualWrite mode();

	/** Settings the listener's consumer needs on top of the application's. */
	public abstract Map<String, Object> consumerSettings();

	/**
	 * The writes of one listener, created when its container is.
	 * @param listenerId the listener id
	 * @param concurrency its workers
	 * @param faults the test hook called between the steps of a move
	 * @return its writes
	 */
	public abstract Writes writes(String listenerId, int concurrency, FaultInjection faults);

	/** The lock store, publisher and committer of one listener. */
	public abstract static class Writes {

		private Writes() {
		}

		/** The mode these writes are made in. */
		public abstract DualWrite mode();

		/** The locks of {@code registry} as this listener's steps see and write them. */
		public abstract LockStore locks(LockRegistry registry);

		/** Publishes to the ladder's topics. */
		public abstract RecordPublisher publisher();

		/** Commits the steps' writes and the offsets of the records they finished. */
		abstract OffsetCommitter committer();

	}

	private static final class Compensate extends DualWriteStrategy {

		private final RecordPublisher publisher;

		Compensate(RecordPublisher publisher) {
			this.publisher = publisher;
		}

		@Override
		public DualWrite mode() {
			return DualWrite.COMPENSATE;
		}

		@Override
		public Map<String, Object> consumerSettings() {
			return Map.of();
		}

		@Override
		public Writes writes(String listenerId, int concurrency, FaultInjection faults) {
			RecordPublisher publisher = this.publisher;
			return new Writes() {

				@Override
				public DualWrite mode() {
					return DualWrite.COMPENSATE;
				}

				@Override
				public LockStore locks(LockRegistry registry) {
					return registry;
				}

				@Override
				public RecordPublisher publisher() {
					return publisher;
				}

				@Override
				OffsetCommitter committer() {
					return new OffsetCommitter.WithConsumer();
				}

			};
		}

	}

	private static final class Transaction extends DualWriteStrategy {

		private final ProducerClients producers;

		private final String instanceId;

		private final Duration sendTimeout;

		Transaction(ProducerClients producers, String instanceId, Duration sendTimeout) {
			this.producers = producers;
			this.instanceId = instanceId;
			this.sendTimeout = sendTimeout;
		}

		@Override
		public DualWrite mode() {
			return DualWrite.TRANSACTION;
		}

		/**
		 * An aborted move must never be seen: its stage record, or the offsets it
		 * skipped.
		 */
		@Override
		public Map<String, Object> consumerSettings() {
			return Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		}

		@Override
		public Writes writes(String listenerId, int concurrency, FaultInjection faults) {
			TransactionalWrites transactions = new TransactionalWrites(this.producers,
					"kafka-resilience-" + this.instanceId + "-" + listenerId, concurrency, this.sendTimeout, faults);
			return new Writes() {

				@Override
				public DualWrite mode() {
					return DualWrite.TRANSACTION;
				}

				@Override
				public LockStore locks(LockRegistry registry) {
					return transactions.locks(registry);
				}

				@Override
				public RecordPublisher publisher() {
					return transactions.publisher();
				}

				@Override
				OffsetCommitter committer() {
					return new OffsetCommitter.Transactional(transactions);
				}

			};
		}

	}

}
