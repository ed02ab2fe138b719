package io.github.kafkaresilience.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.FaultInjection;
import io.github.kafkaresilience.ladder.RecordPublisher;
import io.github.kafkaresilience.ladder.Step;
import io.github.kafkaresilience.lock.Lock;
import io.github.kafkaresilience.lock.LockRegistry;
import io.github.kafkaresilience.lock.LockStore;
import io.github.kafkaresilience.support.KafkaFutures;
import io.github.kafkaresilience.support.ProducerSettings;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * The {@code transaction} dual write of one listener (PROTOCOL §8): the lock writes and the
 * publishes of one record's step, and the commit of the record's offset, go in one Kafka
 * transaction. A crash or a failure before the commit leaves none of them visible to the
 * read-committed consumers and tailers, so there is nothing to compensate.
 * <p>
 * A transaction begins with the step's first write, so a record handled without writing
 * anything (the common case) costs no transaction; its offset is committed later with the
 * others. Transactions of one listener run one at a time on a single transactional producer,
 * and every offset commit of the listener goes through it as well, so committed offsets only
 * grow. Offsets are committed with the consumer's group metadata: an instance whose
 * partitions were given to another cannot commit (the broker fences its generation), and a
 * restarted instance with the same transactional id fences its predecessor and aborts what
 * that one left open.
 * <p>
 * The lock writes of a transaction are applied to this instance's lock table once the
 * transaction is committed; until then only the step that made them sees them.
 *
 * @since 0.1.0
 */
public class TransactionalWrites implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(TransactionalWrites.class);

	/**
	 * The offsets a listener commits, asked for while the transaction lock is held so that a
	 * commit never goes below one made before it.
	 */
	public interface OffsetBook {

		/** The offsets to commit once {@code record} is done: only those above the committed ones. */
		Map<TopicPartition, OffsetAndMetadata> afterDone(Delivery record);

		/** The offsets that can be committed now: only those above the committed ones. */
		Map<TopicPartition, OffsetAndMetadata> committable();

		/** Notes offsets as committed. */
		void committed(Map<TopicPartition, OffsetAndMetadata> offsets);

		/** The consumer's group metadata as of its last poll. */
		ConsumerGroupMetadata group();

	}

	private final Map<String, Object> producerConfig;

	private final String transactionalId;

	private final Duration sendTimeout;

	private final FaultInjection faults;

	private final ReentrantLock lock = new ReentrantLock();

	private final ThreadLocal<Scope> scope = new ThreadLocal<>();

	private @Nullable Producer<byte[], byte[]> producer;

	/**
	 * @param producerConfig the client settings of the producer
	 * @param transactionalId the transactional id: stable across restarts of this instance
	 * and unique among live instances
	 * @param sendTimeout how long one send may take
	 * @param faults the test hook, called before a transaction commits
	 */
	public TransactionalWrites(Map<String, Object> producerConfig, String transactionalId, Duration sendTimeout,
			FaultInjection faults) {
		this.producerConfig = ProducerSettings.forAwaitedWrites(producerConfig, transactionalId, transactionalId);
		this.transactionalId = transactionalId;
		this.sendTimeout = sendTimeout;
		this.faults = faults;
	}

	public String transactionalId() {
		return this.transactionalId;
	}

	/** The locks of {@code registry} as the steps run in transactions see and write them. */
	public LockStore locks(LockRegistry registry) {
		return new TransactionalLocks(registry);
	}

	/** Publishes in the transaction of the step that calls it. */
	public RecordPublisher publisher() {
		return this::publish;
	}

	/**
	 * Runs one step of a record. When the step writes, its writes and, if the record is done,
	 * its offset are committed in one transaction before this method returns; when the step
	 * fails they are aborted.
	 * @param record the record
	 * @param step the step, calling the stores of this object
	 * @param offsets where the listener's offsets are kept
	 * @return what the step returned
	 */
	public Step execute(Delivery record, Supplier<Step> step, OffsetBook offsets) {
		Scope current = new Scope();
		this.scope.set(current);
		try {
			Step result = step.get();
			if (current.begun) {
				commit(current, record, (result.kind() == Step.Kind.DONE) ? offsets.afterDone(record) : Map.of(), offsets);
			}
			return result;
		}
		catch (RuntimeException ex) {
			if (current.begun) {
				abort(ex);
			}
			throw ex;
		}
		finally {
			this.scope.remove();
			if (current.begun) {
				this.lock.unlock();
			}
		}
	}

	/**
	 * Commits the listener's committable offsets in a transaction of their own.
	 * @param offsets where the listener's offsets are kept
	 */
	public void commitOffsets(OffsetBook offsets) {
		this.lock.lock();
		try {
			Map<TopicPartition, OffsetAndMetadata> committable = offsets.committable();
			if (committable.isEmpty()) {
				return;
			}
			Producer<byte[], byte[]> producer = producer();
			producer.beginTransaction();
			try {
				producer.sendOffsetsToTransaction(committable, offsets.group());
				producer.commitTransaction();
			}
			catch (RuntimeException ex) {
				abort(ex);
				throw ex;
			}
			offsets.committed(committable);
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void close() {
		this.lock.lock();
		try {
			closeProducer();
		}
		finally {
			this.lock.unlock();
		}
	}

	private void commit(Scope current, Delivery record, Map<TopicPartition, OffsetAndMetadata> done, OffsetBook offsets) {
		Producer<byte[], byte[]> producer = producer();
		// a transaction commits only writes the broker has acknowledged: a write that failed or
		// is still unanswered fails the step (and the transaction is aborted) instead of
		// leaving the lock table with a write whose fate is unknown
		List<Long> lockOffsets = new ArrayList<>(current.writes.size());
		for (PendingWrite write : current.writes) {
			lockOffsets.add(KafkaFutures.await(write.result(), this.sendTimeout,
					"write lock " + write.lock().id() + " in a transaction").offset());
		}
		if (!done.isEmpty()) {
			producer.sendOffsetsToTransaction(done, offsets.group());
		}
		this.faults.at(FaultInjection.Point.COMMITTING, record);
		producer.commitTransaction();
		if (!done.isEmpty()) {
			offsets.committed(done);
		}
		for (int i = 0; i < current.writes.size(); i++) {
			PendingWrite write = current.writes.get(i);
			write.registry().written(write.lock(), write.release(), lockOffsets.get(i));
		}
	}

	private void abort(RuntimeException cause) {
		if (cause instanceof ProducerFencedException) {
			logger.error("The transactional producer '" + this.transactionalId + "' was fenced: another live instance "
					+ "uses the same kafka.resilience.instance-id, or this one was replaced after a pause. Its writes "
					+ "are discarded", cause);
		}
		try {
			if (this.producer != null && !(cause instanceof ProducerFencedException)) {
				this.producer.abortTransaction();
				return;
			}
		}
		catch (RuntimeException ex) {
			cause.addSuppressed(ex);
		}
		// a producer that cannot abort is replaced: its successor's initialisation aborts
		// whatever the old one left open
		closeProducer();
	}

	private Producer<byte[], byte[]> producer() {
		if (this.producer == null) {
			KafkaProducer<byte[], byte[]> created = new KafkaProducer<>(this.producerConfig, new ByteArraySerializer(),
					new ByteArraySerializer());
			try {
				created.initTransactions();
			}
			catch (RuntimeException ex) {
				created.close(Duration.ZERO);
				throw ex;
			}
			this.producer = created;
		}
		return this.producer;
	}

	private void closeProducer() {
		Producer<byte[], byte[]> current = this.producer;
		this.producer = null;
		if (current != null) {
			try {
				current.close(Duration.ofSeconds(5));
			}
			catch (RuntimeException ex) {
				logger.debug("Could not close the transactional producer '" + this.transactionalId + "'", ex);
			}
		}
	}

	/** The open transaction of the calling thread's step, begun on its first write. */
	private Scope inTransaction() {
		Scope current = this.scope.get();
		if (current == null) {
			throw new IllegalStateException("In transaction mode a lock write or publish runs in the step of a record");
		}
		if (!current.begun) {
			this.lock.lock();
			try {
				producer().beginTransaction();
			}
			catch (RuntimeException ex) {
				abort(ex);
				this.lock.unlock();
				throw ex;
			}
			current.begun = true;
		}
		return current;
	}

	private long publish(String topic, int partition, byte @Nullable [] key, byte @Nullable [] value, Headers headers) {
		inTransaction();
		Future<RecordMetadata> result = producer().send(new ProducerRecord<>(topic, partition, null, key, value, headers));
		return KafkaFutures.await(result, this.sendTimeout, "publish to '" + topic + "' partition " + partition).offset();
	}

	private static final class Scope {

		boolean begun;

		final List<PendingWrite> writes = new ArrayList<>();

		/** The step's own lock writes by id; an empty value is a release. */
		final Map<String, Optional<Lock>> written = new HashMap<>();

	}

	private record PendingWrite(LockRegistry registry, Lock lock, boolean release, Future<RecordMetadata> result) {
	}

	/**
	 * Reads see the step's own writes first (a move confirms the lock it wrote a moment
	 * earlier); writes join the step's transaction.
	 */
	private final class TransactionalLocks implements LockStore {

		private final LockRegistry registry;

		TransactionalLocks(LockRegistry registry) {
			this.registry = registry;
		}

		@Override
		public @Nullable Lock find(String id) {
			Scope current = TransactionalWrites.this.scope.get();
			Optional<Lock> own = (current != null) ? current.written.get(id) : null;
			return (own != null) ? own.orElse(null) : this.registry.find(id);
		}

		@Override
		public List<Lock> locksOf(Bytes key) {
			return this.registry.locksOf(key);
		}

		@Override
		public @Nullable Lock byOrigin(Bytes key, long originOffset) {
			return this.registry.byOrigin(key, originOffset);
		}

		@Override
		public @Nullable Lock predecessor(Lock lock) {
			return this.registry.predecessor(lock);
		}

		@Override
		public void write(Lock lock) {
			send(lock, false);
		}

		@Override
		public void release(Lock lock) {
			send(lock, true);
		}

		private void send(Lock lock, boolean release) {
			Scope current = inTransaction();
			Future<RecordMetadata> result = producer().send(this.registry.recordOf(lock, release));
			current.writes.add(new PendingWrite(this.registry, lock, release, result));
			current.written.put(lock.id(), release ? Optional.empty() : Optional.of(lock));
		}

	}

}
