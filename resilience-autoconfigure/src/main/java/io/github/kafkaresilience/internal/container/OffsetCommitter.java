package io.github.kafkaresilience.internal.container;

import java.util.Map;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.container.offsets.CommittableOffsets;
import io.github.kafkaresilience.internal.container.transactions.TransactionalWrites;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.internal.ladder.Step;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * How a listener commits: the writes of a record's step and the offsets of the records it
 * has finished. With the consumer ({@code compensate} mode) a step's writes are its own
 * and offsets are committed by the consumer; with transactions ({@code transaction} mode)
 * the writes of steps and the offsets of their records commit together.
 *
 * @since 0.1.0
 */
interface OffsetCommitter extends AutoCloseable {

	/**
	 * Called on the poll thread before the consumer subscribes: a committer that commits
	 * in transactions initialises its producers (or logs why it cannot yet).
	 */
	default void start() {
	}

	/**
	 * Runs one step of a record.
	 * @param record the record
	 * @param step the step
	 * @param offsets the listener's offsets
	 * @return what to do with the record next
	 */
	Step runStep(Delivery record, Supplier<Step> step, CommittableOffsets offsets);

	/**
	 * Commits the offsets that can be committed now.
	 * @param consumer the listener's consumer, on its poll thread
	 * @param offsets the listener's offsets, of the partitions to commit
	 */
	void commit(Consumer<byte[], byte[]> consumer, CommittableOffsets offsets);

	/**
	 * Commits the offsets that can be committed now, or has them committed soon without
	 * waiting: the regular commit of every interval. A failure may then only be logged.
	 * @param consumer the listener's consumer, on its poll thread
	 * @param offsets the listener's offsets, of the partitions to commit
	 */
	default void commitSoon(Consumer<byte[], byte[]> consumer, CommittableOffsets offsets) {
		commit(consumer, offsets);
	}

	/**
	 * Called on the poll thread after each poll and assignment, while the consumer may be
	 * used: a committer that commits in transactions notes the consumer's group metadata.
	 */
	default void polled(Consumer<byte[], byte[]> consumer, ContainerOffsets offsets) {
	}

	@Override
	void close();

	/** Steps write on their own; the consumer commits offsets. */
	final class WithConsumer implements OffsetCommitter {

		@Override
		public Step runStep(Delivery record, Supplier<Step> step, CommittableOffsets offsets) {
			return step.get();
		}

		@Override
		public void commit(Consumer<byte[], byte[]> consumer, CommittableOffsets offsets) {
			Map<TopicPartition, OffsetAndMetadata> committable = offsets.committable();
			if (committable.isEmpty()) {
				return;
			}
			consumer.commitSync(committable);
			offsets.committed(committable);
		}

		@Override
		public void close() {
		}

	}

	/**
	 * Steps that write join transactions, which commit their offsets; other offsets
	 * commit in one of their own.
	 */
	final class Transactional implements OffsetCommitter {

		private final TransactionalWrites transactions;

		Transactional(TransactionalWrites transactions) {
			this.transactions = transactions;
		}

		@Override
		public void start() {
			this.transactions.start();
		}

		@Override
		public Step runStep(Delivery record, Supplier<Step> step, CommittableOffsets offsets) {
			return this.transactions.runStep(record, step, offsets);
		}

		@Override
		public void commit(Consumer<byte[], byte[]> consumer, CommittableOffsets offsets) {
			this.transactions.commitOffsets(offsets);
		}

		/**
		 * The committer thread commits them, with the next transaction if one is open:
		 * the poll thread goes on.
		 */
		@Override
		public void commitSoon(Consumer<byte[], byte[]> consumer, CommittableOffsets offsets) {
			this.transactions.commitOffsetsLater(offsets);
		}

		@Override
		public void polled(Consumer<byte[], byte[]> consumer, ContainerOffsets offsets) {
			offsets.noteGroup(consumer.groupMetadata(), consumer.subscription());
		}

		@Override
		public void close() {
			this.transactions.close();
		}

	}

}
