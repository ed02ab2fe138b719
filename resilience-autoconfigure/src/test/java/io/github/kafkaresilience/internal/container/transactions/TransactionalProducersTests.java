package io.github.kafkaresilience.internal.container.transactions;

import java.time.Duration;
import java.util.List;

import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The pool of transactional producers: every producer is initialised before the first
 * transaction, a producer is aborted after a failure and replaced when it was fenced or
 * cannot abort, and a worker waits at most the send timeout for a free producer. The
 * producers are {@link MockProducer}s that the application's factory hands out in place
 * of its own.
 */
class TransactionalProducersTests {

	private static final Duration SEND_TIMEOUT = Duration.ofMillis(100);

	private final MockProducerClients producers = new MockProducerClients();

	private final List<String> events = this.producers.events;

	private final TransactionalProducers pool = new TransactionalProducers(this.producers.clients, "tx", 3,
			SEND_TIMEOUT);

	@AfterEach
	void close() {
		this.pool.close();
	}

	@Test
	void everyProducerOfThePoolIsInitialisedBeforeTheFirstTransaction() {
		TransactionalProducers.Slot slot = this.pool.take();
		Producer<byte[], byte[]> producer = this.pool.producer(slot);
		assertThat(this.events).containsExactly("added app.tx-0", "added app.tx-1", "added app.tx-2");
		assertThat(this.producers.all()).hasSize(3)
			.allSatisfy((created) -> assertThat(created.transactionInitialized()).isTrue());
		assertThat(producer).isSameAs(only(slot));
		TransactionalProducers.Slot another = this.pool.take();
		assertThat(this.pool.producer(another)).isSameAs(only(another)).isNotSameAs(producer);
		assertThat(this.events).hasSize(3);
	}

	@Test
	void aFencedProducerIsClosedWithoutAbortingAndCreatedAgainWhenNextNeeded() {
		TransactionalProducers.Slot slot = this.pool.take();
		MockProducer<byte[], byte[]> fenced = (MockProducer<byte[], byte[]>) this.pool.producer(slot);
		fenced.beginTransaction();
		fenced.fenceProducer();
		ProducerFencedException failure = catchThrowableOfType(ProducerFencedException.class,
				fenced::commitTransaction);
		this.pool.abort(slot, failure);
		assertThat(fenced.closed()).isTrue();
		assertThat(fenced.transactionAborted()).isFalse();
		assertThat(failure.getSuppressed()).isEmpty();
		assertThat(this.events).endsWith("removed app." + slot.transactionalId);
		Producer<byte[], byte[]> successor = this.pool.producer(slot);
		assertThat(successor).isNotSameAs(fenced);
		assertThat(this.producers.created(slot.transactionalId)).containsExactly(fenced,
				(MockProducer<byte[], byte[]>) successor);
		assertThat(((MockProducer<byte[], byte[]>) successor).transactionInitialized()).isTrue();
		assertThat(this.events).endsWith("added app." + slot.transactionalId);
	}

	@Test
	void anotherFailureAbortsTheTransactionAndTheProducerStays() {
		TransactionalProducers.Slot slot = this.pool.take();
		MockProducer<byte[], byte[]> producer = (MockProducer<byte[], byte[]>) this.pool.producer(slot);
		producer.beginTransaction();
		this.pool.abort(slot, new KafkaException("a send failed"));
		assertThat(producer.transactionAborted()).isTrue();
		assertThat(producer.closed()).isFalse();
		assertThat(this.pool.producer(slot)).isSameAs(producer);
		assertThat(this.events).noneMatch((event) -> event.startsWith("removed"));
	}

	@Test
	void aProducerThatCannotAbortIsReplacedAndItsFailureToAbortIsKeptWithTheCause() {
		TransactionalProducers.Slot slot = this.pool.take();
		MockProducer<byte[], byte[]> producer = (MockProducer<byte[], byte[]>) this.pool.producer(slot);
		producer.beginTransaction();
		KafkaException cannotAbort = new KafkaException("cannot abort");
		producer.abortTransactionException = cannotAbort;
		KafkaException cause = new KafkaException("the commit failed");
		this.pool.abort(slot, cause);
		assertThat(cause.getSuppressed()).containsExactly(cannotAbort);
		assertThat(producer.closed()).isTrue();
		assertThat(this.pool.producer(slot)).isNotSameAs(producer);
	}

	@Test
	void aProducerThatCannotInitialiseIsClosedAndTheNextTransactionInitialisesTheRestOfThePool() {
		KafkaException cannotInitialise = new KafkaException("cannot initialise");
		this.producers.initFailures.put(1, cannotInitialise);
		TransactionalProducers.Slot slot = this.pool.take();
		assertThatThrownBy(() -> this.pool.producer(slot)).isSameAs(cannotInitialise);
		assertThat(this.events).containsExactly("added app.tx-0", "added app.tx-1", "removed app.tx-1");
		assertThat(this.producers.created("tx-1")).singleElement()
			.satisfies((failed) -> assertThat(failed.closed()).isTrue());
		this.events.clear();
		assertThat(this.pool.producer(slot)).isSameAs(only(slot));
		assertThat(this.events).containsExactly("added app.tx-1", "added app.tx-2");
	}

	@Test
	void aWorkerWaitsAtMostTheSendTimeoutForAFreeProducer() {
		TransactionalProducers.Slot first = this.pool.take();
		this.pool.take();
		this.pool.take();
		long started = System.nanoTime();
		assertThatExceptionOfType(KafkaException.class).isThrownBy(this.pool::take)
			.withMessage("No transactional producer of 'tx' came free within 100 ms");
		assertThat(Duration.ofNanos(System.nanoTime() - started)).as("waited for one to come free")
			.isGreaterThanOrEqualTo(SEND_TIMEOUT);
		this.pool.release(first);
		assertThat(this.pool.take()).isSameAs(first);
		assertThat(this.events).as("taking a producer creates none").isEmpty();
	}

	@Test
	void closingClosesEveryProducer() {
		this.pool.producer(this.pool.take());
		this.pool.close();
		assertThat(this.producers.all()).hasSize(3).allSatisfy((closed) -> assertThat(closed.closed()).isTrue());
		assertThat(this.events).endsWith("removed app.tx-0", "removed app.tx-1", "removed app.tx-2");
	}

	/** The one producer created for the slot's transactional id. */
	private MockProducer<byte[], byte[]> only(TransactionalProducers.Slot slot) {
		List<MockProducer<byte[], byte[]>> created = this.producers.created(slot.transactionalId);
		assertThat(created).hasSize(1);
		return created.get(0);
	}

}
