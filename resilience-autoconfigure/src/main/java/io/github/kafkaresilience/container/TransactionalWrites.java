package io.github.kafkaresilience.container;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
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
import io.github.kafkaresilience.support.Futures;
import io.github.kafkaresilience.support.KafkaFutures;
import io.github.kafkaresilience.support.ProducerClients;
import io.github.kafkaresilience.support.Sends;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * The {@code transaction} dual write of one listener (PROTOCOL §8): the lock writes and the
 * publishes of records' steps, and the commit of their offsets, go in Kafka transactions. A
 * crash or a failure before a commit leaves none of its writes visible to the read-committed
 * consumers and tailers, so there is nothing to compensate.
 * <p>
 * One transaction carries the steps of many records: every step that writes while a
 * transaction is open joins it, and the transaction commits, with the offsets of its records,
 * once the steps in it have made all their writes (a move's confirmation waits for its
 * publish's offset). A committer thread commits one transaction after another; while one
 * commits, the next gathers the steps that start meanwhile, so under load a transaction
 * carries many moves and when idle a move commits at once. When any step of a transaction
 * fails, the whole transaction is aborted and every record in it is routed again. A step that
 * writes nothing (the common case) joins no transaction; its offset is committed later with
 * the others, in a transaction of their own.
 * <p>
 * Commits take turns, so committed offsets only grow, and offsets are committed with the
 * consumer's group metadata: an instance whose partitions were given to another cannot commit
 * (the broker fences its generation). The producers' transactional ids ({@code <prefix>-0},
 * {@code <prefix>-1}, ...) are the same across restarts, and all of them are initialised
 * before the first transaction: a restarted instance fences its predecessor and aborts what
 * that one left open.
 * <p>
 * The lock writes of a transaction are applied to this instance's lock table once the
 * transaction is committed; until then only the steps in it see them.
 *
 * @since 0.1.0
 */
public class TransactionalWrites implements AutoCloseable {

	/**
	 * The offsets a listener commits, asked for while commits take turns so that a commit
	 * never goes below one made before it.
	 */
	public interface OffsetBook {

		/** The offsets to commit once {@code records} are done: only those above the committed ones. */
		Map<TopicPartition, OffsetAndMetadata> afterDone(Collection<Delivery> records);

		/** The offsets that can be committed now: only those above the committed ones. */
		Map<TopicPartition, OffsetAndMetadata> committable();

		/** Notes offsets as committed. */
		void committed(Map<TopicPartition, OffsetAndMetadata> offsets);

		/** The consumer's group metadata as of its last poll. */
		ConsumerGroupMetadata group();

	}

	private final String transactionalIdPrefix;

	private final Duration sendTimeout;

	private final FaultInjection faults;

	private final TransactionalProducers pool;

	/** Held while offsets are chosen and a transaction commits: commits take turns. */
	private final ReentrantLock commitLock = new ReentrantLock();

	/** The step the calling thread runs, or whose write's completion it runs. */
	private final ThreadLocal<Member> scope = new ThreadLocal<>();

	/** Guards {@link #open} and the counts of every batch. */
	private final Object batches = new Object();

	/** The transaction that steps join, or {@code null} until a step writes. */
	private @Nullable Batch open;

	private final Sends sends;

	private volatile @Nullable Thread committer;

	private volatile boolean closed;

	/**
	 * Transactions on one producer at a time and one for offsets: for tests.
	 * @see #TransactionalWrites(ProducerClients, String, int, Duration, FaultInjection)
	 */
	public TransactionalWrites(ProducerClients producers, String transactionalIdPrefix, Duration sendTimeout,
			FaultInjection faults) {
		this(producers, transactionalIdPrefix, 1, sendTimeout, faults);
	}

	/**
	 * @param producers creates the producers
	 * @param transactionalIdPrefix the prefix of the producers' transactional ids: stable
	 * across restarts of this instance and unique among live instances
	 * @param concurrency the listener's workers; the pool has one producer more (at least
	 * three: one transaction gathering steps, one committing, one for offsets alone)
	 * @param sendTimeout how long one send or commit may take
	 * @param faults the test hook, called before a transaction commits
	 */
	public TransactionalWrites(ProducerClients producers, String transactionalIdPrefix, int concurrency,
			Duration sendTimeout, FaultInjection faults) {
		if (concurrency < 1) {
			throw new IllegalArgumentException("Transactions need a concurrency of at least 1, not " + concurrency);
		}
		this.transactionalIdPrefix = transactionalIdPrefix;
		this.sendTimeout = sendTimeout;
		this.faults = faults;
		this.pool = new TransactionalProducers(producers, transactionalIdPrefix, Math.max(concurrency, 2) + 1, sendTimeout);
		this.sends = new Sends("kafka-resilience-tx-" + transactionalIdPrefix);
	}

	/** The locks of {@code registry} as the steps run in transactions see and write them. */
	public LockStore locks(LockRegistry registry) {
		return new TransactionalLocks(registry);
	}

	/** Publishes in the transaction of the step that calls it. */
	public RecordPublisher publisher() {
		return new TransactionalPublisher();
	}

	/**
	 * Runs one step of a record. A step that writes joins the open transaction: it returns
	 * {@link Step.Kind#SETTLING} with a future that completes once that transaction is
	 * committed (with the record's offset, if the step finished the record), or fails when it
	 * is aborted; the record is then routed again. A step that writes and still waits (a
	 * replay entering the ladder) returns once its transaction is committed. A step that
	 * writes nothing returns what it returned.
	 * @param record the record
	 * @param step the step, calling the stores of this object
	 * @param offsets where the listener's offsets are kept
	 * @return what to do with the record next
	 */
	public Step route(Delivery record, Supplier<Step> step, OffsetBook offsets) {
		Member current = new Member(record, offsets);
		Step result;
		this.scope.set(current);
		try {
			result = step.get();
		}
		catch (RuntimeException | Error ex) {
			current.failed(ex);
			throw ex;
		}
		finally {
			this.scope.remove();
		}
		if (current.batch == null) {
			if (result.kind() != Step.Kind.SETTLING) {
				return result;
			}
			// writes under way that have not joined a transaction yet join the open one now
			join(current);
		}
		switch (result.kind()) {
			case SETTLING -> {
				current.finishes = true;
				result.writes().whenComplete((ignored, ex) -> {
					if (ex != null) {
						current.failed(Futures.cause(ex));
					}
					else {
						current.settled();
					}
				});
				return Step.settling(current.committed);
			}
			case DONE -> {
				current.finishes = true;
				current.settled();
				return Step.settling(current.committed);
			}
			default -> {
				current.settled();
				KafkaFutures.await(current.committed, this.sendTimeout.multipliedBy(2), "commit the writes of " + record);
				return result;
			}
		}
	}

	/**
	 * Runs one step of a record and waits until its writes, if any, are committed; throws
	 * when they were aborted.
	 * @see #route(Delivery, Supplier, OffsetBook)
	 */
	public Step execute(Delivery record, Supplier<Step> step, OffsetBook offsets) {
		Step result = route(record, step, offsets);
		if (result.kind() == Step.Kind.SETTLING) {
			KafkaFutures.await(result.writes(), this.sendTimeout.multipliedBy(2), "commit the writes of " + record);
			return Step.done();
		}
		return result;
	}

	/**
	 * Commits the listener's committable offsets in a transaction of their own.
	 * @param offsets where the listener's offsets are kept
	 */
	public void commitOffsets(OffsetBook offsets) {
		TransactionalProducers.Slot slot = this.pool.take();
		try {
			this.commitLock.lock();
			try {
				Map<TopicPartition, OffsetAndMetadata> committable = offsets.committable();
				if (committable.isEmpty()) {
					return;
				}
				Producer<byte[], byte[]> producer = this.pool.producer(slot);
				producer.beginTransaction();
				try {
					producer.sendOffsetsToTransaction(committable, offsets.group());
					producer.commitTransaction();
				}
				catch (RuntimeException ex) {
					this.pool.abort(slot, ex);
					throw ex;
				}
				offsets.committed(committable);
			}
			finally {
				this.commitLock.unlock();
			}
		}
		finally {
			this.pool.release(slot);
		}
	}

	@Override
	public void close() {
		this.closed = true;
		synchronized (this.batches) {
			this.batches.notifyAll();
		}
		Thread thread = this.committer;
		if (thread != null) {
			try {
				thread.join(this.sendTimeout.toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		this.sends.close();
		this.pool.close();
	}

	/**
	 * Puts a step in the open transaction (begun for the first step that joins it), unless
	 * it is in one already.
	 */
	private Batch join(Member step) {
		synchronized (this.batches) {
			if (step.batch != null) {
				return step.batch;
			}
			if (this.closed) {
				throw new KafkaException("The transactions of '" + this.transactionalIdPrefix + "' are closed");
			}
			if (this.open == null) {
				TransactionalProducers.Slot slot = this.pool.take();
				try {
					this.pool.producer(slot).beginTransaction();
				}
				catch (RuntimeException ex) {
					this.pool.abort(slot, ex);
					this.pool.release(slot);
					throw ex;
				}
				this.open = new Batch(slot);
				startCommitter();
			}
			Batch batch = this.open;
			batch.steps.add(step);
			batch.unsettled++;
			step.batch = batch;
			this.batches.notifyAll();
			return batch;
		}
	}

	private void startCommitter() {
		if (this.committer == null) {
			Thread thread = new Thread(this::commitLoop, "kafka-resilience-tx-" + this.transactionalIdPrefix + "-committer");
			thread.setDaemon(true);
			this.committer = thread;
			thread.start();
		}
	}

	/**
	 * Commits one transaction after another: takes the open one (later steps open the next),
	 * waits until every step in it has made its writes, and commits it.
	 */
	private void commitLoop() {
		while (true) {
			Batch batch;
			synchronized (this.batches) {
				while (this.open == null && !this.closed) {
					waitOn(this.batches);
				}
				if (this.open == null) {
					return;
				}
				batch = this.open;
				this.open = null;
				long deadline = System.nanoTime() + this.sendTimeout.multipliedBy(2).toNanos();
				while (batch.unsettled > 0 && !this.closed && System.nanoTime() < deadline) {
					waitOn(this.batches);
				}
			}
			commit(batch);
		}
	}

	private static void waitOn(Object monitor) {
		try {
			monitor.wait(100);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void commit(Batch batch) {
		TransactionalProducers.Slot slot = batch.slot;
		RuntimeException failure = null;
		try {
			if (batch.failure != null) {
				throw new KafkaException("A step in the transaction failed; aborting it", batch.failure);
			}
			if (batch.unsettled > 0) {
				throw new KafkaException(batch.unsettled + " steps in the transaction did not make their writes within "
						+ this.sendTimeout.multipliedBy(2).toMillis() + " ms" + (this.closed ? " (closing)" : ""));
			}
			commitWrites(batch);
		}
		catch (RuntimeException ex) {
			failure = ex;
			this.pool.abort(slot, ex);
		}
		finally {
			batch.ended = true;
			this.pool.release(slot);
		}
		for (Member step : batch.steps) {
			if (failure != null) {
				step.committed.completeExceptionally(failure);
			}
			else {
				step.committed.complete(null);
			}
		}
	}

	private void commitWrites(Batch batch) {
		Producer<byte[], byte[]> producer = this.pool.producer(batch.slot);
		List<Delivery> finished = new ArrayList<>();
		OffsetBook offsets = null;
		for (Member step : batch.steps) {
			if (step.finishes) {
				finished.add(step.record);
				offsets = step.offsets;
			}
		}
		this.commitLock.lock();
		try {
			Map<TopicPartition, OffsetAndMetadata> doneOffsets = (offsets != null) ? offsets.afterDone(finished) : Map.of();
			if (!doneOffsets.isEmpty()) {
				producer.sendOffsetsToTransaction(doneOffsets, offsets.group());
			}
			for (Member step : batch.steps) {
				this.faults.at(FaultInjection.Point.COMMITTING, step.record);
			}
			// a commit fails when any write of the transaction failed: nothing of it is then visible
			producer.commitTransaction();
			if (!doneOffsets.isEmpty()) {
				offsets.committed(doneOffsets);
			}
		}
		finally {
			this.commitLock.unlock();
		}
		for (PendingWrite write : batch.writes) {
			long offset = KafkaFutures.await(write.result(), this.sendTimeout, "write lock " + write.lock().id()
					+ " in a transaction").offset();
			write.registry().written(write.lock(), write.release(), offset);
		}
	}

	/** The step of the calling thread, in its transaction once it writes. */
	private Member inTransaction() {
		Member current = this.scope.get();
		if (current == null) {
			throw new IllegalStateException("In transaction mode a lock write or publish runs in the step of a record");
		}
		join(current);
		return current;
	}

	/** One transaction: the steps in it and their lock writes. Counts are guarded by {@link #batches}. */
	private static final class Batch {

		final TransactionalProducers.Slot slot;

		final List<Member> steps = new ArrayList<>();

		/** Steps in it whose writes are not all made yet. */
		int unsettled;

		/** The failure of a step in it, which dooms it. */
		@Nullable Throwable failure;

		/** Committed or aborted: its producer may carry the next transaction, a late write must fail. */
		volatile boolean ended;

		final List<PendingWrite> writes = java.util.Collections.synchronizedList(new ArrayList<>());

		/** The lock writes made in it by id; an empty value is a release. */
		final Map<String, Optional<Lock>> written = new java.util.concurrent.ConcurrentHashMap<>();

		Batch(TransactionalProducers.Slot slot) {
			this.slot = slot;
		}

	}

	/** The step of one record, and the transaction it joined by writing. */
	private final class Member {

		final Delivery record;

		final OffsetBook offsets;

		/** Completes when the transaction is committed, fails when it is aborted. */
		final CompletableFuture<Void> committed = new CompletableFuture<>();

		volatile @Nullable Batch batch;

		/** Whether the step finishes the record, so that its offset is committed with its writes. */
		volatile boolean finishes;

		Member(Delivery record, OffsetBook offsets) {
			this.record = record;
			this.offsets = offsets;
		}

		/** Every write of the step is made. */
		void settled() {
			synchronized (TransactionalWrites.this.batches) {
				this.batch.unsettled--;
				TransactionalWrites.this.batches.notifyAll();
			}
		}

		/** The step failed; when it wrote, its transaction is doomed. */
		void failed(Throwable ex) {
			Batch current = this.batch;
			if (current == null) {
				return;
			}
			synchronized (TransactionalWrites.this.batches) {
				if (current.failure == null) {
					current.failure = ex;
				}
				current.unsettled--;
				TransactionalWrites.this.batches.notifyAll();
			}
		}

		Producer<byte[], byte[]> producer() {
			Batch current = this.batch;
			if (current.ended) {
				throw new KafkaException("The transaction of the step for " + this.record + " has ended");
			}
			return TransactionalWrites.this.pool.producer(current.slot);
		}

	}

	private record PendingWrite(LockRegistry registry, Lock lock, boolean release, Future<RecordMetadata> result) {
	}

	/**
	 * Sends in the transaction of the step that calls it. The offset comes once the broker has
	 * the record (before the commit), on a thread that runs the rest of the step's move in the
	 * same transaction.
	 */
	private final class TransactionalPublisher implements RecordPublisher {

		@Override
		public long publish(String topic, int partition, byte @Nullable [] key, byte @Nullable [] value, Headers headers) {
			return KafkaFutures.await(sending(topic, partition, key, value, headers), TransactionalWrites.this.sendTimeout,
					"publish to '" + topic + "' partition " + partition);
		}

		@Override
		public CompletableFuture<Long> sending(String topic, int partition, byte @Nullable [] key, byte @Nullable [] value,
				Headers headers) {
			Member current = inTransaction();
			CompletableFuture<Long> offset = new CompletableFuture<>();
			TransactionalWrites.this.sends
				.send(current.producer(), new ProducerRecord<>(topic, partition, null, key, value, headers),
						TransactionalWrites.this.sendTimeout, "publish to '" + topic + "' partition " + partition)
				.whenComplete((metadata, ex) -> {
					// the rest of the move runs here, in the step's transaction; when the send
					// completed at once this is the step's own thread, whose scope stays
					Member previous = TransactionalWrites.this.scope.get();
					TransactionalWrites.this.scope.set(current);
					try {
						if (ex != null) {
							offset.completeExceptionally(Futures.cause(ex));
						}
						else {
							offset.complete(metadata.offset());
						}
					}
					finally {
						if (previous != null) {
							TransactionalWrites.this.scope.set(previous);
						}
						else {
							TransactionalWrites.this.scope.remove();
						}
					}
				});
			return offset;
		}

	}

	/**
	 * Reads see the writes of the step's transaction first (a move confirms the lock it wrote a
	 * moment earlier); writes join the step's transaction.
	 */
	private final class TransactionalLocks implements LockStore {

		private final LockRegistry registry;

		TransactionalLocks(LockRegistry registry) {
			this.registry = registry;
		}

		@Override
		public @Nullable Lock find(String id) {
			Member current = TransactionalWrites.this.scope.get();
			Batch batch = (current != null) ? current.batch : null;
			Optional<Lock> own = (batch != null) ? batch.written.get(id) : null;
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
			Member current = inTransaction();
			Future<RecordMetadata> result = current.producer().send(this.registry.recordOf(lock, release));
			current.batch.writes.add(new PendingWrite(this.registry, lock, release, result));
			current.batch.written.put(lock.id(), release ? Optional.empty() : Optional.of(lock));
		}

	}

}
