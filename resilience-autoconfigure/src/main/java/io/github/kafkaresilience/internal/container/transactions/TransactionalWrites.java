package io.github.kafkaresilience.internal.container.transactions;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.container.offsets.CommittableOffsets;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.internal.ladder.FaultInjection;
import io.github.kafkaresilience.internal.ladder.RecordPublisher;
import io.github.kafkaresilience.internal.ladder.Step;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.LockStore;
import io.github.kafkaresilience.internal.support.Futures;
import io.github.kafkaresilience.internal.support.KafkaFutures;
import io.github.kafkaresilience.internal.support.ProducerClients;
import io.github.kafkaresilience.internal.support.Sends;

/**
 * The {@code transaction} dual write of one listener (docs/PROTOCOL.md, rule 9): the lock
 * writes and the publishes of records' steps, and the commit of their offsets, go in
 * Kafka transactions. A crash or a failure before a commit leaves none of its writes
 * visible to the read-committed consumers and tailers, so there is nothing to compensate.
 * <p>
 * One transaction carries the steps of many records: every step that writes while a
 * transaction is open joins it, and the transaction commits, with the offsets of its
 * records, once the steps in it have made all their writes (a move's confirmation waits
 * for its publish's offset). A committer thread commits one transaction after another;
 * while one commits, the next gathers the steps that start meanwhile, so under load a
 * transaction carries many moves and when idle a move commits at once. When any step of a
 * transaction fails, the whole transaction is aborted and every record in it is routed
 * again. A step that writes nothing (the common case) joins no transaction; its offset is
 * committed later with the others: every commit interval with the next transaction, or in
 * one of their own.
 * <p>
 * Commits take turns, so committed offsets only grow, and offsets are committed with the
 * consumer's group metadata: an instance whose partitions were given to another cannot
 * commit (the broker fences its generation). The producers' transactional ids
 * ({@code <prefix>-0}, {@code <prefix>-1}, ...) are the same across restarts, and all of
 * them are initialised before the first transaction: a restarted instance fences its
 * predecessor and aborts what that one left open.
 * <p>
 * The lock writes of a transaction are applied to this instance's lock table once the
 * transaction is committed; until then only the steps in it see them.
 *
 * @since 0.1.0
 */
public class TransactionalWrites implements AutoCloseable {

	/**
	 * The most producers a listener's pool has, whatever its concurrency. A transaction
	 * holds a producer, not a worker, and gathers the steps of every worker while it is
	 * open, so at most three producers are ever in use at once: the open transaction's,
	 * the committing one's, and one committing offsets alone. Below the cap the pool
	 * keeps one producer per worker and one more, so the transactional ids of a listener
	 * with a concurrency of up to 15 stay the ones it had; a listener with a concurrency
	 * in the thousands (on virtual threads) does not initialise thousands of producers.
	 */
	static final int MAX_PRODUCERS = 16;

	private final Duration sendTimeout;

	/** The transactional producers, one transaction at a time on each. */
	private final TransactionalProducers pool;

	/** The transactions the steps join, and their committer. */
	private final Transactions transactions;

	/** The step each thread runs. */
	private final TransactionScope scope;

	/** Sends the publishes of the steps, completing each on a thread of its own. */
	private final Sends sends;

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
	 * @param concurrency the listener's workers; the pool has one producer more, at least
	 * three (one transaction gathering steps, one committing, one for offsets alone) and
	 * at most {@value #MAX_PRODUCERS}
	 * @param sendTimeout how long one send or commit may take
	 * @param faults the test hook, called before a transaction commits
	 */
	public TransactionalWrites(ProducerClients producers, String transactionalIdPrefix, int concurrency,
			Duration sendTimeout, FaultInjection faults) {
		this(producers, transactionalIdPrefix, concurrency, sendTimeout, faults, Transactions.GATHER);
	}

	/**
	 * As above, with the time a transaction gathers steps before it commits: for tests.
	 */
	TransactionalWrites(ProducerClients producers, String transactionalIdPrefix, int concurrency, Duration sendTimeout,
			FaultInjection faults, Duration gather) {
		if (concurrency < 1) {
			throw new IllegalArgumentException("Transactions need a concurrency of at least 1, not " + concurrency);
		}
		this.sendTimeout = sendTimeout;
		this.pool = new TransactionalProducers(producers, transactionalIdPrefix, poolSize(concurrency), sendTimeout);
		this.transactions = new Transactions(this.pool, transactionalIdPrefix, sendTimeout, faults, gather);
		this.scope = new TransactionScope(this.transactions);
		this.sends = new Sends("kafka-resilience-tx-" + transactionalIdPrefix);
	}

	/** How many transactional producers a listener of {@code concurrency} workers has. */
	static int poolSize(int concurrency) {
		return Math.min(Math.max(concurrency, 2) + 1, MAX_PRODUCERS);
	}

	/**
	 * Initialises the transactional producers before the first transaction needs them. A
	 * predecessor with the same transactional ids is fenced now and what it left open is
	 * aborted: read-committed readers of the lock and retry topics are not held back
	 * until its transactions time out, and the first failures do not wait for the
	 * initialisation while every other step that writes waits behind them. A failure is
	 * logged, and the first transaction tries again.
	 */
	public void start() {
		this.pool.initialiseEarly();
	}

	/**
	 * The locks of {@code registry} as the steps run in transactions see and write them.
	 */
	public LockStore locks(LockRegistry registry) {
		return new TransactionalLocks(this.scope, registry);
	}

	/** Publishes in the transaction of the step that calls it. */
	public RecordPublisher publisher() {
		return new TransactionalPublisher(this.scope, this.sends, this.sendTimeout);
	}

	/**
	 * Runs one step of a record. A step that writes joins the open transaction: it
	 * returns {@link Step.Kind#SETTLING} with a future that completes once that
	 * transaction is committed (with the record's offset, if the step finished the
	 * record), or fails when it is aborted; the record is then routed again. A step that
	 * writes and still waits (a replay entering the ladder) returns once its transaction
	 * is committed. A step that writes nothing returns what it returned.
	 * @param record the record
	 * @param step the step, calling the stores of this object
	 * @param offsets where the listener's offsets are kept
	 * @return what to do with the record next
	 */
	public Step runStep(Delivery record, Supplier<Step> step, CommittableOffsets offsets) {
		TransactionStep current = this.transactions.step(record, offsets);
		Step result;
		this.scope.enter(current);
		try {
			result = step.get();
		}
		catch (RuntimeException | Error ex) {
			current.failed(ex);
			throw ex;
		}
		finally {
			this.scope.leave();
		}
		if (current.transaction == null) {
			if (result.kind() != Step.Kind.SETTLING) {
				return result;
			}
			// writes under way that have not joined a transaction yet join the open one
			// now
			this.transactions.join(current);
		}
		switch (result.kind()) {
			case SETTLING -> {
				current.finishes = true;
				Objects.requireNonNull(result.writes()).whenComplete((ignored, ex) -> {
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
				KafkaFutures.await(current.committed, this.sendTimeout.multipliedBy(2),
						"commit the writes of " + record);
				return result;
			}
		}
	}

	/**
	 * Runs one step of a record and waits until its writes, if any, are committed; throws
	 * when they were aborted.
	 * @see #runStep(Delivery, Supplier, CommittableOffsets)
	 */
	public Step execute(Delivery record, Supplier<Step> step, CommittableOffsets offsets) {
		Step result = runStep(record, step, offsets);
		if (result.kind() == Step.Kind.SETTLING) {
			KafkaFutures.await(Objects.requireNonNull(result.writes()), this.sendTimeout.multipliedBy(2),
					"commit the writes of " + record);
			return Step.done();
		}
		return result;
	}

	/**
	 * Has the listener's committable offsets committed, and returns at once: the
	 * committer thread sends them with the next transaction it commits, or in a
	 * transaction of their own when none is open, so that the poll thread does not wait
	 * for a commit.
	 * @param offsets where the listener's offsets are kept
	 */
	public void commitOffsetsLater(CommittableOffsets offsets) {
		this.transactions.commitOffsetsLater(offsets);
	}

	/**
	 * Commits the listener's committable offsets in a transaction of their own, and waits
	 * for it.
	 * @param offsets where the listener's offsets are kept
	 */
	public void commitOffsets(CommittableOffsets offsets) {
		this.transactions.commitOffsets(offsets);
	}

	@Override
	public void close() {
		this.transactions.close();
		this.sends.close();
		this.pool.close();
	}

}
