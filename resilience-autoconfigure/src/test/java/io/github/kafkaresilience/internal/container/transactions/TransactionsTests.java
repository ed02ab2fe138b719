package io.github.kafkaresilience.internal.container.transactions;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.container.offsets.RecordingOffsets;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.internal.ladder.FaultInjection;
import io.github.kafkaresilience.internal.ladder.Step;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The transactions the steps join, through {@link TransactionalWrites}: a step that
 * writes nothing joins none, a step that publishes is committed with the offset of the
 * record it finishes, a transaction is aborted when a step in it fails or does not make
 * its writes in time, and offsets alone are committed in a transaction of their own. The
 * producers are {@link MockProducer}s that complete each send at once.
 */
class TransactionsTests {

	private static final Duration SEND_TIMEOUT = Duration.ofSeconds(5);

	private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);

	private static final String RETRY_TOPIC = "orders.retry-1s";

	private final MockProducerClients producers = new MockProducerClients();

	private final TransactionalWrites writes = new TransactionalWrites(this.producers.clients, "tx", SEND_TIMEOUT,
			FaultInjection.NONE);

	private final RecordingOffsets book = new RecordingOffsets();

	@AfterEach
	void close() {
		this.writes.close();
	}

	@Test
	void aStepThatWritesNothingJoinsNoTransaction() {
		assertThat(this.writes.execute(record(ORDERS_0, 7, "k"), Step::done, this.book)).isEqualTo(Step.done());
		assertThat(this.producers.events).as("no producer is even created").isEmpty();
		assertThat(this.book.noted).isEmpty();
	}

	@Test
	void aStepThatPublishesIsCommittedWithTheOffsetOfTheRecordItFinishes() {
		Step result = this.writes.execute(record(ORDERS_0, 7, "k"), publishing(Step::done), this.book);
		assertThat(result).isEqualTo(Step.done());
		MockProducer<byte[], byte[]> producer = theOneThat((candidate) -> !candidate.history().isEmpty());
		assertThat(producer.history()).singleElement().satisfies((sent) -> {
			assertThat(sent.topic()).isEqualTo(RETRY_TOPIC);
			assertThat(new String(sent.value(), StandardCharsets.UTF_8)).isEqualTo("v7");
		});
		assertThat(producer.consumerGroupOffsetsHistory())
			.containsExactly(Map.of("g", Map.of(ORDERS_0, new OffsetAndMetadata(8))));
		assertThat(this.book.noted).containsExactly(Map.of(ORDERS_0, new OffsetAndMetadata(8)));
		assertThat(this.producers.events).as("every producer of the pool is initialised")
			.containsExactly("added app.tx-0", "added app.tx-1", "added app.tx-2");
	}

	@Test
	void startingInitialisesEveryProducerBeforeAnyStepWrites() {
		this.writes.start();
		assertThat(this.producers.events).containsExactly("added app.tx-0", "added app.tx-1", "added app.tx-2");
		assertThat(this.producers.all()).allSatisfy((created) -> assertThat(created.transactionInitialized()).isTrue());
		this.writes.execute(record(ORDERS_0, 7, "k"), publishing(Step::done), this.book);
		assertThat(this.producers.events).as("the first transaction creates no producer").hasSize(3);
	}

	@Test
	void aStartThatCannotInitialiseIsLoggedAndTheFirstTransactionInitialisesTheRest() {
		this.producers.initFailures.put(1, new KafkaException("the broker is not there yet"));
		this.writes.start();
		assertThat(this.producers.events).containsExactly("added app.tx-0", "added app.tx-1", "removed app.tx-1");
		assertThat(this.writes.execute(record(ORDERS_0, 7, "k"), publishing(Step::done), this.book))
			.isEqualTo(Step.done());
		assertThat(this.producers.events).endsWith("added app.tx-1", "added app.tx-2");
		assertThat(this.book.noted).containsExactly(Map.of(ORDERS_0, new OffsetAndMetadata(8)));
	}

	@Test
	void aStepThatPublishesAndStillWaitsReturnsOnceItsTransactionIsCommittedWithoutItsOffset() {
		Step waiting = Step.waitUntil(1234);
		Step result = this.writes.runStep(record(ORDERS_0, 7, "k"), publishing(() -> waiting), this.book);
		assertThat(result).isSameAs(waiting);
		MockProducer<byte[], byte[]> producer = theOneThat((candidate) -> !candidate.history().isEmpty());
		assertThat(producer.transactionCommitted()).isTrue();
		assertThat(producer.consumerGroupOffsetsHistory()).isEmpty();
		assertThat(this.book.noted).isEmpty();
	}

	@Test
	void aStepWhoseWritesFailAbortsItsTransaction() {
		KafkaException moveFailed = new KafkaException("the move failed");
		Step result = this.writes.runStep(record(ORDERS_0, 7, "k"),
				publishing(() -> Step.settling(CompletableFuture.failedFuture(moveFailed))), this.book);
		assertThat(result.kind()).isEqualTo(Step.Kind.SETTLING);
		assertThat(result.writes()).failsWithin(SEND_TIMEOUT.multipliedBy(2))
			.withThrowableThat()
			.havingCause()
			.isInstanceOf(KafkaException.class)
			.withMessage("A step in the transaction failed; aborting it")
			.withCause(moveFailed);
		MockProducer<byte[], byte[]> producer = theOneThat(MockProducer::transactionAborted);
		assertThat(producer.history()).as("nothing of the transaction is visible").isEmpty();
		assertThat(producer.transactionCommitted()).isFalse();
		assertThat(this.book.noted).isEmpty();
	}

	@Test
	void aStepThatThrowsAfterWritingAbortsItsTransaction() {
		IllegalStateException handlerFailed = new IllegalStateException("the handler failed");
		assertThatThrownBy(() -> this.writes.execute(record(ORDERS_0, 7, "k"), publishing(() -> {
			throw handlerFailed;
		}), this.book)).isSameAs(handlerFailed);
		await().atMost(SEND_TIMEOUT.multipliedBy(2))
			.untilAsserted(() -> assertThat(this.producers.all()).anyMatch(MockProducer::transactionAborted));
		assertThat(this.producers.all()).allSatisfy((producer) -> assertThat(producer.history()).isEmpty());
		assertThat(this.book.noted).isEmpty();
	}

	@Test
	void aTransactionWhoseStepsDoNotMakeTheirWritesInTimeIsAborted() {
		try (TransactionalWrites impatient = new TransactionalWrites(this.producers.clients, "impatient",
				Duration.ofMillis(100), FaultInjection.NONE)) {
			// the step's publish is sent, and the step returns writes that never complete
			Step result = impatient.runStep(record(ORDERS_0, 7, "k"), () -> {
				impatient.publisher().sending(RETRY_TOPIC, 0, null, null, new RecordHeaders());
				return Step.settling(new CompletableFuture<>());
			}, this.book);
			assertThat(result.writes()).failsWithin(SEND_TIMEOUT)
				.withThrowableThat()
				.havingCause()
				.isInstanceOf(KafkaException.class)
				.withMessage("1 steps in the transaction did not make their writes within 200 ms");
		}
		assertThat(theOneThat(MockProducer::transactionAborted).history()).isEmpty();
	}

	@Test
	void movesStartedWhileATransactionGathersCommitInItTogetherWithTheirOffsets() {
		TopicPartition orders1 = new TopicPartition("orders", 1);
		try (TransactionalWrites gathering = new TransactionalWrites(this.producers.clients, "gathering", 1,
				SEND_TIMEOUT, FaultInjection.NONE, Duration.ofHours(1))) {
			Step first = gathering.runStep(record(ORDERS_0, 7, "k"), publishingWith(gathering, Step::done), this.book);
			Step second = gathering.runStep(record(orders1, 3, "j"), publishingWith(gathering, Step::done), this.book);
			assertThat(first.writes()).as("a move is confirmed only with its transaction").isNotDone();
			assertThat(second.writes()).isNotDone();
			gathering.close(); // ends the gathering: the open transaction commits
			assertThat(first.writes()).succeedsWithin(SEND_TIMEOUT);
			assertThat(second.writes()).succeedsWithin(SEND_TIMEOUT);
		}
		MockProducer<byte[], byte[]> producer = theOneThat(MockProducer::transactionCommitted);
		assertThat(producer.history()).as("both moves in one transaction").hasSize(2);
		assertThat(producer.consumerGroupOffsetsHistory()).containsExactly(
				Map.of("g", Map.of(ORDERS_0, new OffsetAndMetadata(8), orders1, new OffsetAndMetadata(4))));
		assertThat(this.producers.all()).filteredOn(MockProducer::transactionCommitted).hasSize(1);
	}

	@Test
	void thePoolHasAProducerPerWorkerAndOneMoreUpToSixteen() {
		assertThat(TransactionalWrites.poolSize(1)).isEqualTo(3);
		assertThat(TransactionalWrites.poolSize(4)).isEqualTo(5);
		assertThat(TransactionalWrites.poolSize(15)).isEqualTo(16);
		assertThat(TransactionalWrites.poolSize(16)).isEqualTo(16);
		assertThat(TransactionalWrites.poolSize(2_000)).isEqualTo(16);
	}

	@Test
	void aListenerOfThousandsOfWorkersInitialisesSixteenProducers() {
		try (TransactionalWrites many = new TransactionalWrites(this.producers.clients, "many", 2_000, SEND_TIMEOUT,
				FaultInjection.NONE)) {
			many.start();
			assertThat(this.producers.events).hasSize(16).startsWith("added app.many-0").endsWith("added app.many-15");
			assertThat(many.execute(record(ORDERS_0, 7, "k"), publishingWith(many, Step::done), this.book))
				.isEqualTo(Step.done());
		}
	}

	@Test
	void aPublishOutsideTheStepOfARecordIsRefused() {
		assertThatIllegalStateException()
			.isThrownBy(() -> this.writes.publisher().publish(RETRY_TOPIC, 0, null, null, new RecordHeaders()))
			.withMessage("In transaction mode a lock write or publish runs in the step of a record");
	}

	@Test
	void onceClosedAStepCannotWrite() {
		this.writes.close();
		assertThatExceptionOfType(KafkaException.class)
			.isThrownBy(() -> this.writes.execute(record(ORDERS_0, 7, "k"), publishing(Step::done), this.book))
			.withMessage("The transactions of 'tx' are closed");
		assertThat(this.producers.events).isEmpty();
	}

	@Test
	void offsetsAloneAreCommittedInATransactionOfTheirOwn() {
		this.writes.commitOffsets(this.book);
		assertThat(this.producers.events).as("nothing to commit, no transaction").isEmpty();
		this.book.committable.put(ORDERS_0, new OffsetAndMetadata(42));
		this.writes.commitOffsets(this.book);
		MockProducer<byte[], byte[]> producer = theOneThat(MockProducer::transactionCommitted);
		assertThat(producer.consumerGroupOffsetsHistory())
			.containsExactly(Map.of("g", Map.of(ORDERS_0, new OffsetAndMetadata(42))));
		assertThat(this.book.noted).containsExactly(Map.of(ORDERS_0, new OffsetAndMetadata(42)));
	}

	@Test
	void offsetsAskedForLaterAreCommittedByTheCommitterInATransactionOfTheirOwnWhenNoneIsOpen() {
		this.book.committable.put(ORDERS_0, new OffsetAndMetadata(42));
		this.writes.commitOffsetsLater(this.book);
		await().atMost(SEND_TIMEOUT)
			.untilAsserted(
					() -> assertThat(this.book.noted).containsExactly(Map.of(ORDERS_0, new OffsetAndMetadata(42))));
		MockProducer<byte[], byte[]> producer = theOneThat(MockProducer::transactionCommitted);
		assertThat(producer.history()).isEmpty();
		assertThat(producer.consumerGroupOffsetsHistory())
			.containsExactly(Map.of("g", Map.of(ORDERS_0, new OffsetAndMetadata(42))));
	}

	@Test
	void offsetsAskedForWhileAMoveIsUnderWayAreCommittedWithoutWaitingForItAndItsOwnOffsetAfterIt() {
		TopicPartition orders1 = new TopicPartition("orders", 1);
		CompletableFuture<Void> moveWrites = new CompletableFuture<>();
		Step moving = this.writes.runStep(record(ORDERS_0, 7, "k"), publishing(() -> Step.settling(moveWrites)),
				this.book);
		this.book.committable.put(orders1, new OffsetAndMetadata(5));
		this.writes.commitOffsetsLater(this.book);
		moveWrites.complete(null);
		assertThat(moving.writes()).succeedsWithin(SEND_TIMEOUT.multipliedBy(2));
		await().atMost(SEND_TIMEOUT)
			.untilAsserted(() -> assertThat(committed())
				.isEqualTo(Map.of(ORDERS_0, new OffsetAndMetadata(8), orders1, new OffsetAndMetadata(5))));
	}

	/** The furthest offset of each partition noted as committed. */
	private Map<TopicPartition, OffsetAndMetadata> committed() {
		Map<TopicPartition, OffsetAndMetadata> furthest = new HashMap<>();
		this.book.noted.forEach((offsets) -> offsets
			.forEach((tp, offset) -> furthest.merge(tp, offset, (a, b) -> (a.offset() >= b.offset()) ? a : b)));
		return furthest;
	}

	/**
	 * A step that publishes its record's value to the retry topic, then returns what
	 * {@code then} returns.
	 */
	private Supplier<Step> publishing(Supplier<Step> then) {
		return publishingWith(this.writes, then);
	}

	private static Supplier<Step> publishingWith(TransactionalWrites writes, Supplier<Step> then) {
		return () -> {
			writes.publisher()
				.publish(RETRY_TOPIC, 0, "k".getBytes(StandardCharsets.UTF_8), "v7".getBytes(StandardCharsets.UTF_8),
						new RecordHeaders());
			return then.get();
		};
	}

	/** The only producer created that matches. */
	private MockProducer<byte[], byte[]> theOneThat(Predicate<MockProducer<byte[], byte[]>> test) {
		List<MockProducer<byte[], byte[]>> matching = this.producers.all().stream().filter(test).toList();
		assertThat(matching).hasSize(1);
		return matching.get(0);
	}

	private static Delivery record(TopicPartition tp, long offset, String key) {
		return new Delivery(tp.topic(), tp.partition(), offset, 0L, key.getBytes(StandardCharsets.UTF_8),
				("v" + offset).getBytes(StandardCharsets.UTF_8), new RecordHeaders());
	}

}
