package io.github.kafkaresilience.container;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.FaultInjection;
import io.github.kafkaresilience.lock.Lock;
import io.github.kafkaresilience.lock.LockRegistry;
import io.github.kafkaresilience.support.KafkaFutures;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The transactions of {@link TransactionalWrites}, gathered and committed. Every step that
 * writes while a transaction is open joins it (the first step begins it, on a producer of the
 * pool); a committer thread lets it gather steps for a few milliseconds, takes it (later
 * steps open the next), waits until every step in it has made its writes, and commits it with
 * the offsets of the records it finishes, or aborts it when a step in it failed or did not
 * make its writes in time.
 * <p>
 * Commits take turns (the offsets of a transaction's records are chosen and the transaction
 * committed under one lock, as are the offsets committed in a transaction of their own), so
 * committed offsets only grow. The lock writes of a transaction are applied to the lock table
 * once it is committed.
 */
final class TransactionBatches {

	/** Logs under the name of {@link TransactionalWrites}, as operators configure it. */
	private static final Log logger = LogFactory.getLog(TransactionalWrites.class);

	private final TransactionalProducers producers;

	private final String transactionalIdPrefix;

	private final Duration sendTimeout;

	private final FaultInjection faults;

	/**
	 * How long a transaction stays open for more moves to join it before it commits. A commit
	 * costs a few round trips to the transaction coordinator and a marker in every partition
	 * the transaction wrote; committed back to back during a storm (some 120 a second in P3L),
	 * they crowd the broker that the healthy records are fetched from. 20 ms cut the healthy
	 * keys' p99 in P3L's storm from 4.7 to 2.9 ms (docs/BENCHMARKS.md); a move is confirmed
	 * that much later at most, and its key held as long.
	 */
	static final Duration GATHER = Duration.ofMillis(20);

	private final Duration gather;

	/** Held while offsets are chosen and a transaction commits: commits take turns. */
	private final ReentrantLock commitLock = new ReentrantLock();

	/** The step the calling thread runs, or whose write's completion it runs. */
	private final ThreadLocal<Member> scope = new ThreadLocal<>();

	/** Guards {@link #open} and the counts of every batch. */
	private final Object batches = new Object();

	/** The transaction that steps join, or {@code null} until a step writes. */
	private @Nullable Batch open;

	/** Offsets to commit with the next transaction, or in one of their own when none is open. */
	private @Nullable OffsetBook offsetsDue;

	private volatile @Nullable Thread committer;

	private volatile boolean closed;

	/**
	 * @param producers the pool the transactions run on
	 * @param transactionalIdPrefix the prefix of the producers' transactional ids, naming the
	 * committer thread
	 * @param sendTimeout how long one send or commit may take
	 * @param faults the test hook, called before a transaction commits
	 * @param gather how long a transaction stays open for more steps to join it
	 */
	TransactionBatches(TransactionalProducers producers, String transactionalIdPrefix, Duration sendTimeout,
			FaultInjection faults, Duration gather) {
		this.gather = gather;
		this.producers = producers;
		this.transactionalIdPrefix = transactionalIdPrefix;
		this.sendTimeout = sendTimeout;
		this.faults = faults;
	}

	/** The step of a record, in no transaction until it writes. */
	Member member(Delivery record, OffsetBook offsets) {
		return new Member(record, offsets);
	}

	/** The step the calling thread runs, or whose write's completion it runs; {@code null} if none. */
	@Nullable Member current() {
		return this.scope.get();
	}

	/** The calling thread runs {@code step}, or the completion of one of its writes. */
	void enter(Member step) {
		this.scope.set(step);
	}

	/** The calling thread runs no step any more. */
	void leave() {
		this.scope.remove();
	}

	/** The step of the calling thread, in its transaction once it writes. */
	Member inTransaction() {
		Member current = this.scope.get();
		if (current == null) {
			throw new IllegalStateException("In transaction mode a lock write or publish runs in the step of a record");
		}
		join(current);
		return current;
	}

	/**
	 * Puts a step in the open transaction (begun for the first step that joins it), unless
	 * it is in one already.
	 */
	Batch join(Member step) {
		synchronized (this.batches) {
			if (step.batch != null) {
				return step.batch;
			}
			if (this.closed) {
				throw new KafkaException("The transactions of '" + this.transactionalIdPrefix + "' are closed");
			}
			if (this.open == null) {
				TransactionalProducers.Slot slot = this.producers.take();
				try {
					this.producers.producer(slot).beginTransaction();
				}
				catch (RuntimeException ex) {
					this.producers.abort(slot, ex);
					this.producers.release(slot);
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

	/**
	 * Initialises the pool's producers before the first transaction needs them; a failure is
	 * logged, and the first transaction tries again.
	 */
	void start() {
		try {
			this.producers.initialiseAll();
		}
		catch (RuntimeException ex) {
			logger.warn("Could not initialise the transactional producers '" + this.transactionalIdPrefix
					+ "-*' yet; the first transaction tries again", ex);
		}
	}

	/**
	 * Has the committer thread commit the listener's committable offsets, and returns at once:
	 * with the next transaction that commits, or in one of their own when none is open. A
	 * failure is logged; the next request commits the same offsets or further ones.
	 * @param offsets where the listener's offsets are kept
	 */
	void commitOffsetsLater(OffsetBook offsets) {
		synchronized (this.batches) {
			if (this.closed) {
				return;
			}
			this.offsetsDue = offsets;
			startCommitter();
			this.batches.notifyAll();
		}
	}

	/**
	 * Commits the listener's committable offsets in a transaction of their own.
	 * @param offsets where the listener's offsets are kept
	 */
	void commitOffsets(OffsetBook offsets) {
		TransactionalProducers.Slot slot = this.producers.take();
		try {
			this.commitLock.lock();
			try {
				Map<TopicPartition, OffsetAndMetadata> committable = offsets.committable();
				if (committable.isEmpty()) {
					return;
				}
				Producer<byte[], byte[]> producer = this.producers.producer(slot);
				producer.beginTransaction();
				try {
					offsets.byGroup(committable).forEach((group, ofGroup) -> producer.sendOffsetsToTransaction(ofGroup, group));
					producer.commitTransaction();
				}
				catch (RuntimeException ex) {
					this.producers.abort(slot, ex);
					throw ex;
				}
				offsets.committed(committable);
			}
			finally {
				this.commitLock.unlock();
			}
		}
		finally {
			this.producers.release(slot);
		}
	}

	/**
	 * Refuses new transactions and waits up to the send timeout for the committer to end the
	 * open one: it aborts a transaction whose steps have not all made their writes.
	 */
	void close() {
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
	 * Commits one transaction after another: lets the open one gather moves (for
	 * {@link #GATHER} unless told otherwise), takes it (later steps open the next), waits
	 * until every step in it has made its writes, and commits it, with the offsets asked for
	 * meanwhile. Offsets asked for while no transaction is open commit in one of their own.
	 */
	private void commitLoop() {
		while (true) {
			Batch batch;
			OffsetBook due;
			synchronized (this.batches) {
				while (this.open == null && this.offsetsDue == null && !this.closed) {
					waitOn(this.batches);
				}
				gather();
				batch = this.open;
				due = this.offsetsDue;
				this.open = null;
				this.offsetsDue = null;
				if (batch == null && (due == null || this.closed)) {
					return;
				}
				long deadline = System.nanoTime() + this.sendTimeout.multipliedBy(2).toNanos();
				while (batch != null && batch.unsettled > 0 && !this.closed && System.nanoTime() < deadline) {
					waitOn(this.batches);
				}
			}
			if (batch != null) {
				commit(batch, due);
			}
			else {
				commitDue(due);
			}
		}
	}

	/**
	 * Lets the open transaction gather the moves under way until it has been open for the
	 * gathering time, or the transactions close: in a storm, each transaction then carries
	 * many moves, instead of the committer starting one after another, each with its round
	 * trips and markers. Under {@link #batches}.
	 */
	private void gather() {
		Batch batch = this.open;
		if (batch == null) {
			return;
		}
		long until = batch.begun + this.gather.toNanos();
		long left;
		while (this.open == batch && !this.closed && (left = until - System.nanoTime()) > 0) {
			try {
				TimeUnit.NANOSECONDS.timedWait(this.batches, left);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	private void commitDue(OffsetBook due) {
		try {
			commitOffsets(due);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not commit the offsets of the transactions '" + this.transactionalIdPrefix
					+ "-*'; will try again", ex);
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

	private void commit(Batch batch, @Nullable OffsetBook due) {
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
			commitWrites(batch, due);
		}
		catch (RuntimeException ex) {
			failure = ex;
			this.producers.abort(slot, ex);
		}
		finally {
			batch.ended = true;
			this.producers.release(slot);
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

	private void commitWrites(Batch batch, @Nullable OffsetBook due) {
		Producer<byte[], byte[]> producer = this.producers.producer(batch.slot);
		List<Delivery> finished = new ArrayList<>();
		OffsetBook offsets = due;
		for (Member step : batch.steps) {
			if (step.finishes) {
				finished.add(step.record);
				offsets = step.offsets;
			}
		}
		this.commitLock.lock();
		try {
			Map<TopicPartition, OffsetAndMetadata> doneOffsets = new HashMap<>();
			if (due != null) {
				doneOffsets.putAll(due.committable());
			}
			if (!finished.isEmpty()) {
				// the records the transaction finishes count as done: the furthest offset of each partition
				offsets.afterDone(finished).forEach((tp, offset) -> doneOffsets.merge(tp, offset,
						(a, b) -> (a.offset() >= b.offset()) ? a : b));
			}
			if (!doneOffsets.isEmpty()) {
				offsets.byGroup(doneOffsets).forEach((group, ofGroup) -> producer.sendOffsetsToTransaction(ofGroup, group));
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

	/** One transaction: the steps in it and their lock writes. Counts are guarded by {@link #batches}. */
	static final class Batch {

		final TransactionalProducers.Slot slot;

		/** When the first step joined it: {@link System#nanoTime()}. */
		final long begun = System.nanoTime();

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
	final class Member {

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
			synchronized (TransactionBatches.this.batches) {
				this.batch.unsettled--;
				TransactionBatches.this.batches.notifyAll();
			}
		}

		/** The step failed; when it wrote, its transaction is doomed. */
		void failed(Throwable ex) {
			Batch current = this.batch;
			if (current == null) {
				return;
			}
			synchronized (TransactionBatches.this.batches) {
				if (current.failure == null) {
					current.failure = ex;
				}
				current.unsettled--;
				TransactionBatches.this.batches.notifyAll();
			}
		}

		Producer<byte[], byte[]> producer() {
			Batch current = this.batch;
			if (current.ended) {
				throw new KafkaException("The transaction of the step for " + this.record + " has ended");
			}
			return TransactionBatches.this.producers.producer(current.slot);
		}

	}

	/** A lock write made in a transaction, applied to the lock table once the transaction is committed. */
	record PendingWrite(LockRegistry registry, Lock lock, boolean release, Future<RecordMetadata> result) {
	}

}
