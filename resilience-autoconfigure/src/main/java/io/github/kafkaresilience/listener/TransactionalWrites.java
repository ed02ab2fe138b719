package io.github.kafkaresilience.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
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
 * others. Steps of different keys run their transactions at once, each on a transactional
 * producer of a small pool (one per worker, and one for the periodic offset commits); only
 * the commits themselves take turns, so that committed offsets only grow. Offsets are
 * committed with the consumer's group metadata: an instance whose partitions were given to
 * another cannot commit (the broker fences its generation). The pool's transactional ids
 * ({@code <prefix>-0}, {@code <prefix>-1}, ...) are the same across restarts, and all of
 * them are initialised before the first transaction: a restarted instance fences its
 * predecessor and aborts what that one left open.
 * <p>
 * The lock writes of a transaction are applied to this instance's lock table once the
 * transaction is committed; until then only the step that made them sees them.
 *
 * @since 0.1.0
 */
public class TransactionalWrites implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(TransactionalWrites.class);

	/**
	 * The offsets a listener commits, asked for while commits take turns so that a commit
	 * never goes below one made before it.
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

	private final String transactionalIdPrefix;

	private final Duration sendTimeout;

	private final FaultInjection faults;

	private final List<Slot> slots;

	private final BlockingQueue<Slot> idle;

	/** Held while offsets are chosen and a transaction commits: commits take turns. */
	private final ReentrantLock commitLock = new ReentrantLock();

	private final ThreadLocal<Scope> scope = new ThreadLocal<>();

	private volatile boolean initialised;

	/**
	 * Transactions on one producer, one at a time: for tests, and for listeners with one
	 * worker.
	 * @see #TransactionalWrites(Map, String, int, Duration, FaultInjection)
	 */
	public TransactionalWrites(Map<String, Object> producerConfig, String transactionalIdPrefix, Duration sendTimeout,
			FaultInjection faults) {
		this(producerConfig, transactionalIdPrefix, 1, sendTimeout, faults);
	}

	/**
	 * @param producerConfig the client settings of the producers
	 * @param transactionalIdPrefix the prefix of the producers' transactional ids: stable
	 * across restarts of this instance and unique among live instances
	 * @param concurrency how many steps may run transactions at once (the listener's
	 * workers); the pool has one producer more, for the periodic offset commits
	 * @param sendTimeout how long one send may take
	 * @param faults the test hook, called before a transaction commits
	 */
	public TransactionalWrites(Map<String, Object> producerConfig, String transactionalIdPrefix, int concurrency,
			Duration sendTimeout, FaultInjection faults) {
		if (concurrency < 1) {
			throw new IllegalArgumentException("Transactions need a concurrency of at least 1, not " + concurrency);
		}
		this.producerConfig = new HashMap<>(producerConfig);
		this.transactionalIdPrefix = transactionalIdPrefix;
		this.sendTimeout = sendTimeout;
		this.faults = faults;
		List<Slot> slots = new ArrayList<>();
		for (int i = 0; i <= concurrency; i++) {
			slots.add(new Slot(transactionalIdPrefix + "-" + i));
		}
		this.slots = List.copyOf(slots);
		this.idle = new ArrayBlockingQueue<>(slots.size(), false, slots);
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
			if (current.slot != null) {
				commit(current, current.slot, record, result.kind() == Step.Kind.DONE, offsets);
			}
			return result;
		}
		catch (RuntimeException ex) {
			if (current.slot != null) {
				abort(current.slot, ex);
			}
			throw ex;
		}
		finally {
			this.scope.remove();
			if (current.slot != null) {
				this.idle.add(current.slot);
			}
		}
	}

	/**
	 * Commits the listener's committable offsets in a transaction of their own.
	 * @param offsets where the listener's offsets are kept
	 */
	public void commitOffsets(OffsetBook offsets) {
		Slot slot = take();
		try {
			this.commitLock.lock();
			try {
				Map<TopicPartition, OffsetAndMetadata> committable = offsets.committable();
				if (committable.isEmpty()) {
					return;
				}
				Producer<byte[], byte[]> producer = producer(slot);
				producer.beginTransaction();
				try {
					producer.sendOffsetsToTransaction(committable, offsets.group());
					producer.commitTransaction();
				}
				catch (RuntimeException ex) {
					abort(slot, ex);
					throw ex;
				}
				offsets.committed(committable);
			}
			finally {
				this.commitLock.unlock();
			}
		}
		finally {
			this.idle.add(slot);
		}
	}

	@Override
	public void close() {
		for (Slot slot : this.slots) {
			synchronized (slot) {
				closeProducer(slot);
			}
		}
	}

	private void commit(Scope current, Slot slot, Delivery record, boolean done, OffsetBook offsets) {
		Producer<byte[], byte[]> producer = producer(slot);
		// a transaction commits only writes the broker has acknowledged: a write that failed or
		// is still unanswered fails the step (and the transaction is aborted) instead of
		// leaving the lock table with a write whose fate is unknown
		List<Long> lockOffsets = new ArrayList<>(current.writes.size());
		for (PendingWrite write : current.writes) {
			lockOffsets.add(KafkaFutures.await(write.result(), this.sendTimeout,
					"write lock " + write.lock().id() + " in a transaction").offset());
		}
		this.commitLock.lock();
		try {
			Map<TopicPartition, OffsetAndMetadata> doneOffsets = done ? offsets.afterDone(record) : Map.of();
			if (!doneOffsets.isEmpty()) {
				producer.sendOffsetsToTransaction(doneOffsets, offsets.group());
			}
			this.faults.at(FaultInjection.Point.COMMITTING, record);
			producer.commitTransaction();
			if (!doneOffsets.isEmpty()) {
				offsets.committed(doneOffsets);
			}
		}
		finally {
			this.commitLock.unlock();
		}
		for (int i = 0; i < current.writes.size(); i++) {
			PendingWrite write = current.writes.get(i);
			write.registry().written(write.lock(), write.release(), lockOffsets.get(i));
		}
	}

	private void abort(Slot slot, RuntimeException cause) {
		if (cause instanceof ProducerFencedException) {
			logger.error("The transactional producer '" + slot.transactionalId + "' was fenced: another live instance "
					+ "uses the same kafka.resilience.instance-id, or this one was replaced after a pause. Its writes "
					+ "are discarded", cause);
		}
		synchronized (slot) {
			try {
				if (slot.producer != null && !(cause instanceof ProducerFencedException)) {
					slot.producer.abortTransaction();
					return;
				}
			}
			catch (RuntimeException ex) {
				cause.addSuppressed(ex);
			}
			// a producer that cannot abort is replaced: its successor's initialisation aborts
			// whatever the old one left open
			closeProducer(slot);
		}
	}

	/** A free producer of the pool; every worker finds one, as the pool has one per worker. */
	private Slot take() {
		try {
			Slot slot = this.idle.poll(this.sendTimeout.toMillis(), TimeUnit.MILLISECONDS);
			if (slot == null) {
				throw new KafkaException("No transactional producer of '" + this.transactionalIdPrefix + "' came free within "
						+ this.sendTimeout.toMillis() + " ms");
			}
			return slot;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new KafkaException("Interrupted while waiting for a transactional producer", ex);
		}
	}

	private Producer<byte[], byte[]> producer(Slot slot) {
		if (!this.initialised) {
			initialiseAll();
		}
		synchronized (slot) {
			if (slot.producer == null) {
				slot.producer = create(slot);
			}
			return slot.producer;
		}
	}

	/**
	 * Initialises every producer of the pool before the first transaction, so that each
	 * transactional id of a predecessor (the same instance before a restart) is fenced and
	 * its open transactions aborted, not only the ids this run happens to use.
	 */
	private synchronized void initialiseAll() {
		if (this.initialised) {
			return;
		}
		for (Slot slot : this.slots) {
			synchronized (slot) {
				if (slot.producer == null) {
					slot.producer = create(slot);
				}
			}
		}
		this.initialised = true;
	}

	private Producer<byte[], byte[]> create(Slot slot) {
		KafkaProducer<byte[], byte[]> created = new KafkaProducer<>(
				ProducerSettings.forAwaitedWrites(this.producerConfig, slot.transactionalId, slot.transactionalId),
				new ByteArraySerializer(), new ByteArraySerializer());
		try {
			created.initTransactions();
		}
		catch (RuntimeException ex) {
			created.close(Duration.ZERO);
			throw ex;
		}
		return created;
	}

	private static void closeProducer(Slot slot) {
		Producer<byte[], byte[]> current = slot.producer;
		slot.producer = null;
		if (current != null) {
			try {
				current.close(Duration.ofSeconds(5));
			}
			catch (RuntimeException ex) {
				logger.debug("Could not close the transactional producer '" + slot.transactionalId + "'", ex);
			}
		}
	}

	/** The open transaction of the calling thread's step, begun on its first write. */
	private Scope inTransaction() {
		Scope current = this.scope.get();
		if (current == null) {
			throw new IllegalStateException("In transaction mode a lock write or publish runs in the step of a record");
		}
		if (current.slot == null) {
			Slot slot = take();
			try {
				producer(slot).beginTransaction();
			}
			catch (RuntimeException ex) {
				abort(slot, ex);
				this.idle.add(slot);
				throw ex;
			}
			current.slot = slot;
		}
		return current;
	}

	private long publish(String topic, int partition, byte @Nullable [] key, byte @Nullable [] value, Headers headers) {
		Scope current = inTransaction();
		Future<RecordMetadata> result = producer(current.slot).send(new ProducerRecord<>(topic, partition, null, key, value, headers));
		return KafkaFutures.await(result, this.sendTimeout, "publish to '" + topic + "' partition " + partition).offset();
	}

	/** One producer of the pool, created when first needed and replaced when it fails. */
	private static final class Slot {

		final String transactionalId;

		@Nullable Producer<byte[], byte[]> producer;

		Slot(String transactionalId) {
			this.transactionalId = transactionalId;
		}

	}

	private static final class Scope {

		/** The producer of the step's transaction, once begun. */
		@Nullable Slot slot;

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
			Future<RecordMetadata> result = producer(current.slot).send(this.registry.recordOf(lock, release));
			current.writes.add(new PendingWrite(this.registry, lock, release, result));
			current.written.put(lock.id(), release ? Optional.empty() : Optional.of(lock));
		}

	}

}
