package io.github.kafkaresilience.internal.container.transactions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import io.github.kafkaresilience.internal.support.ProducerClients;
import io.github.kafkaresilience.internal.support.ProducerSettings;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.jspecify.annotations.Nullable;

/**
 * The pool of transactional producers of {@link TransactionalWrites}: one transaction at
 * a time on each. A producer is taken for a transaction and given back once the
 * transaction is committed or aborted.
 * <p>
 * The producers' transactional ids ({@code <prefix>-0}, {@code <prefix>-1}, ...) are the
 * same across restarts, and all of them are initialised before the first transaction: a
 * restarted instance fences its predecessor and aborts what that one left open. A
 * producer that cannot abort (a fenced one among them) is closed, and created again when
 * next needed.
 */
final class TransactionalProducers implements AutoCloseable {

	/** Logs under the name of {@link TransactionalWrites}, as operators configure it. */
	private static final Log logger = LogFactory.getLog(TransactionalProducers.class);

	private final ProducerClients producers;

	private final Map<String, Object> producerConfig;

	private final String transactionalIdPrefix;

	private final Duration sendTimeout;

	private final List<Slot> slots;

	private final BlockingQueue<Slot> idle;

	private volatile boolean initialised;

	/**
	 * @param producers creates the producers
	 * @param transactionalIdPrefix the prefix of the producers' transactional ids
	 * @param size how many producers the pool has
	 * @param sendTimeout how long one send or commit may take, and how long
	 * {@link #take()} waits for a free producer
	 */
	TransactionalProducers(ProducerClients producers, String transactionalIdPrefix, int size, Duration sendTimeout) {
		this.producers = producers;
		this.producerConfig = producers.configuration();
		this.transactionalIdPrefix = transactionalIdPrefix;
		this.sendTimeout = sendTimeout;
		List<Slot> slots = new ArrayList<>();
		for (int i = 0; i < size; i++) {
			slots.add(new Slot(transactionalIdPrefix + "-" + i));
		}
		this.slots = List.copyOf(slots);
		this.idle = new ArrayBlockingQueue<>(slots.size(), false, slots);
	}

	/**
	 * A free producer of the pool. One is always free when a transaction begins: at most
	 * three are in use at once (the open transaction's, the committing one's, and offsets
	 * committed alone), and the pool has at least three.
	 */
	Slot take() {
		try {
			Slot slot = this.idle.poll(this.sendTimeout.toMillis(), TimeUnit.MILLISECONDS);
			if (slot == null) {
				throw new KafkaException("No transactional producer of '" + this.transactionalIdPrefix
						+ "' came free within " + this.sendTimeout.toMillis() + " ms");
			}
			return slot;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new KafkaException("Interrupted while waiting for a transactional producer", ex);
		}
	}

	/**
	 * Gives back a producer of {@link #take()}, its transaction ended: the next one may
	 * use it.
	 */
	void release(Slot slot) {
		this.idle.add(slot);
	}

	/**
	 * The producer of a slot, created when first needed; the first call initialises every
	 * producer of the pool.
	 */
	Producer<byte[], byte[]> producer(Slot slot) {
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
	 * Aborts the transaction of a slot after {@code cause}. A producer that was fenced,
	 * or that cannot abort, is closed instead (a failure to abort is added to
	 * {@code cause} as suppressed).
	 */
	void abort(Slot slot, RuntimeException cause) {
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
			// a producer that cannot abort is replaced: its successor's initialisation
			// aborts
			// whatever the old one left open
			closeProducer(slot);
		}
	}

	/** Closes every producer of the pool. */
	@Override
	public void close() {
		for (Slot slot : this.slots) {
			synchronized (slot) {
				closeProducer(slot);
			}
		}
	}

	/**
	 * Initialises the producers before the first transaction needs them; a failure is
	 * logged, and the first transaction tries again.
	 */
	void initialiseEarly() {
		try {
			initialiseAll();
		}
		catch (RuntimeException ex) {
			logger.warn("Could not initialise the transactional producers '" + this.transactionalIdPrefix
					+ "-*' yet; the first transaction tries again", ex);
		}
	}

	/**
	 * Initialises every producer of the pool, unless done: each transactional id of a
	 * predecessor (the same instance before a restart) is fenced and its open
	 * transactions aborted, not only the ids this run happens to use. The listener calls
	 * it when it starts; the first transaction calls it again when that failed.
	 */
	synchronized void initialiseAll() {
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
		Producer<byte[], byte[]> created = this.producers.create(ProducerSettings.forAwaitedWrites(this.producerConfig,
				slot.transactionalId, slot.transactionalId, this.sendTimeout));
		try {
			created.initTransactions();
		}
		catch (RuntimeException ex) {
			this.producers.close(created, Duration.ZERO);
			throw ex;
		}
		return created;
	}

	private void closeProducer(Slot slot) {
		Producer<byte[], byte[]> current = slot.producer;
		slot.producer = null;
		if (current != null) {
			try {
				this.producers.close(current, Duration.ofSeconds(5));
			}
			catch (RuntimeException ex) {
				logger.debug("Could not close the transactional producer '" + slot.transactionalId + "'", ex);
			}
		}
	}

	/** One producer of the pool, created when first needed and replaced when it fails. */
	static final class Slot {

		final String transactionalId;

		@Nullable Producer<byte[], byte[]> producer;

		Slot(String transactionalId) {
			this.transactionalId = transactionalId;
		}

	}

}
