package io.github.kafkaresilience.internal.container.transactions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import io.github.kafkaresilience.internal.container.offsets.CommittableOffsets;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.internal.ladder.FaultInjection;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.support.KafkaFutures;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The transactions of {@link TransactionalWrites}, gathered and committed. Every step
 * that writes while a transaction is open joins it (the first step begins it, on a
 * producer of the pool); a committer thread lets it gather steps for a few milliseconds,
 * takes it (later steps open the next), waits until every step in it has made its writes,
 * and commits it with the offsets of the records it finishes, or aborts it when a step in
 * it failed or did not make its writes in time.
 * <p>
 * Commits take turns (the offsets of a transaction's records are chosen and the
 * transaction committed under one lock, as are the offsets committed in a transaction of
 * their own), so committed offsets only grow. The lock writes of a transaction are
 * applied to the lock table once it is committed.
 */
final class Transactions {

	/** Logs under the name of {@link TransactionalWrites}, as operators configure it. */
	private static final Log logger = LogFactory.getLog(Transactions.class);

	private final TransactionalProducers producers;

	private final String transactionalIdPrefix;

	private final Duration sendTimeout;

	private final FaultInjection faults;

	/**
	 * How long a transaction stays open for more moves to join it before it commits. A
	 * commit costs a few round trips to the transaction coordinator and a marker in every
	 * partition the transaction wrote; committed back to back during a storm (some 120 a
	 * second in P3L), they crowd the broker that the healthy records are fetched from. 20
	 * ms cut the healthy keys' p99 in the benchmark suite's P3L storm from 4.7 to 2.9 ms
	 * when the value was chosen; a move is confirmed that much later at most, and its key
	 * held as long.
	 */
	static final Duration GATHER = Duration.ofMillis(20);

	private final Duration gather;

	/** Held while offsets are chosen and a transaction commits: commits take turns. */
	private final ReentrantLock commitLock = new ReentrantLock();

	/** Guards {@link #open} and the counts of every transaction. */
	private final Object monitor = new Object();

	/** The transaction that steps join, or {@code null} until a step writes. */
	private @Nullable Transaction open;

	/**
	 * Offsets to commit with the next transaction, or in one of their own when none is
	 * open.
	 */
	private @Nullable CommittableOffsets offsetsDue;

	private volatile @Nullable Thread committer;

	private volatile boolean closed;

	/**
	 * @param producers the pool the transactions run on
	 * @param transactionalIdPrefix the prefix of the producers' transactional ids, naming
	 * the committer thread
	 * @param sendTimeout how long one send or commit may take
	 * @param faults the test hook, called before a transaction commits
	 * @param gather how long a transaction stays open for more steps to join it
	 */
	Transactions(TransactionalProducers producers, String transactionalIdPrefix, Duration sendTimeout,
			FaultInjection faults, Duration gather) {
		this.gather = gather;
		this.producers = producers;
		this.transactionalIdPrefix = transactionalIdPrefix;
		this.sendTimeout = sendTimeout;
		this.faults = faults;
	}

	/** The step of a record, in no transaction until it writes. */
	TransactionStep step(Delivery record, CommittableOffsets offsets) {
		return new TransactionStep(this, record, offsets);
	}

	/** Every write of a step in {@code transaction} is made. */
	void settled(Transaction transaction) {
		synchronized (this.monitor) {
			transaction.unsettled--;
			this.monitor.notifyAll();
		}
	}

	/** A step in {@code transaction} failed: the transaction is doomed. */
	void failed(Transaction transaction, Throwable ex) {
		synchronized (this.monitor) {
			if (transaction.failure == null) {
				transaction.failure = ex;
			}
			transaction.unsettled--;
			this.monitor.notifyAll();
		}
	}

	/** The producer that carries {@code transaction}. */
	Producer<byte[], byte[]> producerOf(Transaction transaction) {
		return this.producers.producer(transaction.slot);
	}

	/**
	 * Puts a step in the open transaction (begun for the first step that joins it),
	 * unless it is in one already.
	 */
	Transaction join(TransactionStep step) {
		synchronized (this.monitor) {
			if (step.transaction != null) {
				return step.transaction;
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
				this.open = new Transaction(slot);
				startCommitter();
			}
			Transaction transaction = this.open;
			transaction.steps.add(step);
			transaction.unsettled++;
			step.transaction = transaction;
			this.monitor.notifyAll();
			return transaction;
		}
	}

	/**
	 * Has the committer thread commit the listener's committable offsets, and returns at
	 * once: with the next transaction that commits, or in one of their own when none is
	 * open. A failure is logged; the next request commits the same offsets or further
	 * ones.
	 * @param offsets where the listener's offsets are kept
	 */
	void commitOffsetsLater(CommittableOffsets offsets) {
		synchronized (this.monitor) {
			if (this.closed) {
				return;
			}
			this.offsetsDue = offsets;
			startCommitter();
			this.monitor.notifyAll();
		}
	}

	/**
	 * Commits the listener's committable offsets in a transaction of their own.
	 * @param offsets where the listener's offsets are kept
	 */
	void commitOffsets(CommittableOffsets offsets) {
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
					offsets.byGroup(committable)
						.forEach((group, ofGroup) -> producer.sendOffsetsToTransaction(ofGroup, group));
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
	 * Refuses new transactions and waits up to the send timeout for the committer to end
	 * the open one: it aborts a transaction whose steps have not all made their writes.
	 */
	void close() {
		this.closed = true;
		synchronized (this.monitor) {
			this.monitor.notifyAll();
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
			Thread thread = new Thread(this::commitLoop,
					"kafka-resilience-tx-" + this.transactionalIdPrefix + "-committer");
			thread.setDaemon(true);
			this.committer = thread;
			thread.start();
		}
	}

	/**
	 * Commits one transaction after another: lets the open one gather moves (for
	 * {@link #GATHER} unless told otherwise), takes it (later steps open the next), waits
	 * until every step in it has made its writes, and commits it, with the offsets asked
	 * for meanwhile. Offsets asked for while no transaction is open commit in one of
	 * their own.
	 */
	private void commitLoop() {
		while (true) {
			Transaction transaction;
			CommittableOffsets due;
			synchronized (this.monitor) {
				while (this.open == null && this.offsetsDue == null && !this.closed) {
					waitOn(this.monitor);
				}
				gather();
				transaction = this.open;
				due = this.offsetsDue;
				this.open = null;
				this.offsetsDue = null;
				if (transaction == null && (due == null || this.closed)) {
					return;
				}
				long deadline = System.nanoTime() + this.sendTimeout.multipliedBy(2).toNanos();
				while (transaction != null && transaction.unsettled > 0 && !this.closed
						&& System.nanoTime() < deadline) {
					waitOn(this.monitor);
				}
			}
			if (transaction != null) {
				commit(transaction, due);
			}
			else if (due != null) {
				commitDue(due);
			}
		}
	}

	/**
	 * Lets the open transaction gather the moves under way until it has been open for the
	 * gathering time, or the transactions close: in a storm, each transaction then
	 * carries many moves, instead of the committer starting one after another, each with
	 * its round trips and markers. Under {@link #monitor}.
	 */
	private void gather() {
		Transaction transaction = this.open;
		if (transaction == null) {
			return;
		}
		long until = transaction.begun + this.gather.toNanos();
		long left;
		while (this.open == transaction && !this.closed && (left = until - System.nanoTime()) > 0) {
			try {
				TimeUnit.NANOSECONDS.timedWait(this.monitor, left);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	private void commitDue(CommittableOffsets due) {
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

	private void commit(Transaction transaction, @Nullable CommittableOffsets due) {
		TransactionalProducers.Slot slot = transaction.slot;
		RuntimeException failure = null;
		try {
			if (transaction.failure != null) {
				throw new KafkaException("A step in the transaction failed; aborting it", transaction.failure);
			}
			if (transaction.unsettled > 0) {
				throw new KafkaException(transaction.unsettled
						+ " steps in the transaction did not make their writes within "
						+ this.sendTimeout.multipliedBy(2).toMillis() + " ms" + (this.closed ? " (closing)" : ""));
			}
			commitWrites(transaction, due);
		}
		catch (RuntimeException ex) {
			failure = ex;
			this.producers.abort(slot, ex);
		}
		finally {
			transaction.ended = true;
			this.producers.release(slot);
		}
		for (TransactionStep step : transaction.steps) {
			if (failure != null) {
				step.committed.completeExceptionally(failure);
			}
			else {
				step.committed.complete(null);
			}
		}
	}

	private void commitWrites(Transaction transaction, @Nullable CommittableOffsets due) {
		Producer<byte[], byte[]> producer = this.producers.producer(transaction.slot);
		List<Delivery> finished = new ArrayList<>();
		CommittableOffsets offsets = due;
		for (TransactionStep step : transaction.steps) {
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
				// the records the transaction finishes count as done: the furthest offset
				// of each partition
				Objects.requireNonNull(offsets)
					.afterDone(finished)
					.forEach((tp, offset) -> doneOffsets.merge(tp, offset,
							(a, b) -> (a.offset() >= b.offset()) ? a : b));
			}
			if (!doneOffsets.isEmpty()) {
				Objects.requireNonNull(offsets)
					.byGroup(doneOffsets)
					.forEach((group, ofGroup) -> producer.sendOffsetsToTransaction(ofGroup, group));
			}
			for (TransactionStep step : transaction.steps) {
				this.faults.at(FaultInjection.Point.COMMITTING, step.record);
			}
			// a commit fails when any write of the transaction failed: nothing of it is
			// then visible
			producer.commitTransaction();
			if (!doneOffsets.isEmpty()) {
				Objects.requireNonNull(offsets).committed(doneOffsets);
			}
		}
		finally {
			this.commitLock.unlock();
		}
		for (Transaction.LockWrite write : transaction.writes) {
			long offset = KafkaFutures
				.await(write.result(), this.sendTimeout, "write lock " + write.lock().id() + " in a transaction")
				.offset();
			write.registry().written(write.lock(), write.release(), offset);
		}
	}

}
