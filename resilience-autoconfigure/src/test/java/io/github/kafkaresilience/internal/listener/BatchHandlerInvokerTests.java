package io.github.kafkaresilience.internal.listener;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.idempotency.Claim;
import io.github.kafkaresilience.idempotency.ClaimHeldException;
import io.github.kafkaresilience.internal.idempotency.IdempotencyGuard;
import io.github.kafkaresilience.idempotency.IdempotencyKeyResolver;
import io.github.kafkaresilience.idempotency.IdempotencyObserver;
import io.github.kafkaresilience.idempotency.InMemoryIdempotencyStore;
import io.github.kafkaresilience.it.StrictStringDeserializer;
import io.github.kafkaresilience.ladder.BatchResult;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.HandlerResult.Outcome;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.kafka.support.converter.ConversionException;
import org.springframework.kafka.support.converter.StringJacksonJsonMessageConverter;
import org.springframework.kafka.support.serializer.DeserializationException;
import org.springframework.kafka.support.serializer.ErrorHandlingDeserializer;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.SimpleTransactionStatus;
import org.springframework.transaction.support.TransactionCallback;
import org.springframework.transaction.support.TransactionOperations;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a batch listener's method gets a batch of records and how each record's outcome is
 * told from what the method did, without a broker.
 */
class BatchHandlerInvokerTests {

	private final Listener listener = new Listener();

	private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();

	@Test
	void aListOfValuesComesWithTheListsOfKeysAndOffsetsInTheOrderOfTheBatch() {
		BatchResult result = invoker("onValues").handle(deliveries("v10", "v11", "v12"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS, Outcome.SUCCESS);
		assertThat(result.bisections()).isZero();
		assertThat(this.listener.calls).containsExactly(List.of("v10", "v11", "v12"));
		assertThat(this.listener.keys).containsExactly(List.of("k10", "k11", "k12"));
		assertThat(this.listener.offsets).containsExactly(List.of(10L, 11L, 12L));
	}

	@Test
	void aListOfMessagesGivesEachRecordItsOwnMessageWithItsKeyOffsetAndHeaders() {
		BatchResult result = invoker("onMessages").handle(deliveries("v10", "v11"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS);
		assertThat(this.listener.calls).containsExactly(List.of("v10", "v11"));
		assertThat(this.listener.keys).containsExactly(List.of("k10", "k11"));
		assertThat(this.listener.offsets).containsExactly(List.of(10L, 11L));
		assertThat(this.listener.traces).containsExactly(List.of("t-10", "t-11"));
	}

	@Test
	void aListOfConsumerRecordsGivesTheDeserializedRecordsWithTheirPlacesAndHeaders() {
		List<Delivery> deliveries = List.of(delivery(0, 10, "k10", "v10"), delivery(3, 4, "k4", "v4"));

		BatchResult result = invoker("onRecords").handle(deliveries);

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS);
		assertThat(this.listener.calls).containsExactly(List.of("v10", "v4"));
		assertThat(this.listener.keys).containsExactly(List.of("k10", "k4"));
		assertThat(this.listener.places).containsExactly(List.of("orders-0@10", "orders-3@4"));
		assertThat(this.listener.traces).containsExactly(List.of("t-10", "t-4"));
		assertThat(deliveries.get(0).headers().toArray()).as("the method sees a copy of the headers").hasSize(1);
	}

	@Test
	void consumerRecordsGroupTheRecordsByPartitionAndAnIndexTheMethodNamesCountsInThatOrder() {
		// interleaved partitions: a0, b0, a1, b1; the method sees a0, a1, b0, b1
		List<Delivery> deliveries = List.of(delivery(0, 1, "a0", "a0"), delivery(1, 1, "b0", "b0"),
				delivery(0, 2, "a1", "a1"), delivery(1, 2, "b1", "b1"));
		IllegalStateException cause = new IllegalStateException("b0 is bad");
		this.listener.then = (batch) -> {
			throw new BatchListenerFailedException("third failed", cause, 2);
		};

		BatchResult result = invoker("onConsumerRecords").handle(deliveries);

		assertThat(this.listener.calls).containsExactly(List.of("a0", "a1", "b0", "b1"));
		assertThat(this.listener.places)
			.containsExactly(List.of("orders-0@1", "orders-0@2", "orders-1@1", "orders-1@2"));
		// results are in the order of the batch given to the handler
		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.FAILURE, Outcome.SUCCESS, null);
		assertThat(result.results().get(1).failure()).isSameAs(cause);
		assertThat(result.bisections()).isZero();
	}

	@Test
	void aRecordNamedByIndexFailsWithTheCauseTheOnesBeforeItSucceedAndTheOnesAfterItDoNotRun() {
		IllegalStateException cause = new IllegalStateException("v11 is bad");
		this.listener.then = (batch) -> {
			throw new BatchListenerFailedException("second failed", cause, 1);
		};

		BatchResult result = invoker("onValues").handle(deliveries("v10", "v11", "v12", "v13"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.FAILURE, null, null);
		assertThat(result.results().get(1).failure()).isSameAs(cause);
		assertThat(result.bisections()).isZero();
		assertThat(this.listener.callSizes()).as("a named record is not searched for").containsExactly(4);
	}

	@Test
	void aRecordNamedByIndexWithoutACauseFailsWithTheExceptionItself() {
		BatchListenerFailedException named = new BatchListenerFailedException("first failed", 0);
		this.listener.then = (batch) -> {
			throw named;
		};

		BatchResult result = invoker("onValues").handle(deliveries("v10", "v11"));

		assertThat(outcomes(result)).containsExactly(Outcome.FAILURE, null);
		assertThat(result.results().get(0).failure()).isSameAs(named);
	}

	@Test
	void aRecordNamedByItselfFailsWithTheCauseAndTheOnesAfterItDoNotRun() {
		IllegalStateException cause = new IllegalStateException("v12 is bad");
		this.listener.then = (batch) -> {
			throw new BatchListenerFailedException("third failed", cause, (ConsumerRecord<?, ?>) batch.get(2));
		};

		BatchResult result = invoker("onRecords").handle(deliveries("v10", "v11", "v12", "v13"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS, Outcome.FAILURE, null);
		assertThat(result.results().get(2).failure()).isSameAs(cause);
		assertThat(result.bisections()).isZero();
	}

	@Test
	void aRecordNamedByItselfWithoutACauseFailsWithTheExceptionItself() {
		List<BatchListenerFailedException> thrown = new ArrayList<>();
		this.listener.then = (batch) -> {
			ConsumerRecord<?, ?> second = (ConsumerRecord<?, ?>) batch.get(1);
			// a record of its own with the same place names the same record
			thrown.add(new BatchListenerFailedException("second failed", new ConsumerRecord<>(second.topic(),
					second.partition(), second.offset(), second.key(), second.value())));
			throw thrown.get(0);
		};

		BatchResult result = invoker("onRecords").handle(deliveries("v10", "v11", "v12"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.FAILURE, null);
		assertThat(result.results().get(1).failure()).isSameAs(thrown.get(0));
	}

	@Test
	void aMethodThatReordersItsListOfRecordsStillFailsTheRecordItNames() {
		IllegalStateException cause = new IllegalStateException("v12 is bad");
		this.listener.then = (batch) -> {
			@SuppressWarnings("unchecked")
			List<ConsumerRecord<String, String>> records = (List<ConsumerRecord<String, String>>) batch;
			ConsumerRecord<String, String> bad = records.get(2);
			records.sort(Comparator.comparingLong(ConsumerRecord<String, String>::offset).reversed());
			throw new BatchListenerFailedException("v12 failed", cause, bad);
		};

		BatchResult result = invoker("onRecords").handle(deliveries("v10", "v11", "v12", "v13"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS, Outcome.FAILURE, null);
		assertThat(result.results().get(2).failure()).isSameAs(cause);
	}

	@Test
	void aMethodThatReordersItsListOfRecordsDoesNotCompleteTheKeyOfTheRecordItNames() {
		this.listener.then = (batch) -> {
			@SuppressWarnings("unchecked")
			List<ConsumerRecord<String, String>> records = (List<ConsumerRecord<String, String>>) batch;
			ConsumerRecord<String, String> bad = records.get(0);
			records.sort(Comparator.comparingLong(ConsumerRecord<String, String>::offset).reversed());
			throw new BatchListenerFailedException("v10 failed", bad);
		};

		BatchResult result = guarded("onRecords").handle(deliveries("v10", "v11", "v12", "v13"));

		assertThat(outcomes(result)).containsExactly(Outcome.FAILURE, null, null, null);
		assertThat(this.store.claim("orders-listener", "orders/0/10", Duration.ofMinutes(5)).status())
			.as("released for its retry, not completed")
			.isEqualTo(Claim.Status.CLAIMED);
	}

	@Test
	void anIndexOutsideTheBatchFailsTheBatchAsAWhole() {
		BatchListenerFailedException outside = new BatchListenerFailedException("no such record", 7);
		this.listener.then = (batch) -> {
			throw outside;
		};

		BatchResult result = invoker("onValues", BatchSettings.Failure.FAIL_ALL)
			.handle(deliveries("v10", "v11", "v12"));

		assertThat(outcomes(result)).containsExactly(Outcome.FAILURE, Outcome.FAILURE, Outcome.FAILURE);
		assertThat(result.results()).allSatisfy((failed) -> assertThat(failed.failure()).isSameAs(outside));
		assertThat(this.listener.callSizes()).containsExactly(3);
	}

	@Test
	void anIndexOutsideTheBatchIsBisectedAsAnyFailureThatNamesNoRecord() {
		this.listener.then = (batch) -> {
			if (batch.contains("bad")) {
				throw new BatchListenerFailedException("no such record", batch.size());
			}
		};

		BatchResult result = invoker("onValues").handle(deliveries("v10", "bad", "v12", "v13"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.FAILURE, Outcome.SUCCESS,
				Outcome.SUCCESS);
		assertThat(result.results().get(1).failure()).isInstanceOf(BatchListenerFailedException.class);
		assertThat(result.bisections()).isEqualTo(2);
		assertThat(this.listener.callSizes()).containsExactly(4, 2, 1, 1, 2);
	}

	@Test
	void aBatchThatFailsAsAWholeIsBisectedUntilOnlyTheRecordThatFailsAloneFails() {
		this.listener.then = (batch) -> {
			if (batch.contains("bad")) {
				throw new IllegalStateException("cannot take " + batch);
			}
		};

		BatchResult result = invoker("onValues")
			.handle(deliveries("v10", "v11", "v12", "v13", "v14", "bad", "v16", "v17"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS, Outcome.SUCCESS, Outcome.SUCCESS,
				Outcome.SUCCESS, Outcome.FAILURE, Outcome.SUCCESS, Outcome.SUCCESS);
		assertThat(result.results().get(5).failure()).isInstanceOf(IllegalStateException.class)
			.as("the failure of its own call")
			.hasMessage("cannot take [bad]");
		assertThat(result.bisections()).isEqualTo(3);
		assertThat(this.listener.callSizes()).containsExactly(8, 4, 4, 2, 1, 1, 2);
		assertThat(this.listener.calls.get(4)).containsExactly("v14");
		assertThat(this.listener.calls.get(6)).containsExactly("v16", "v17");
	}

	@Test
	void twoRecordsThatFailAloneAreBothFoundAndTheOthersSucceed() {
		this.listener.then = (batch) -> {
			if (batch.stream().anyMatch((value) -> ((String) value).startsWith("bad"))) {
				throw new IllegalStateException("cannot take " + batch);
			}
		};

		BatchResult result = invoker("onValues")
			.handle(deliveries("v10", "bad-1", "v12", "v13", "v14", "v15", "bad-2", "v17"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.FAILURE, Outcome.SUCCESS, Outcome.SUCCESS,
				Outcome.SUCCESS, Outcome.SUCCESS, Outcome.FAILURE, Outcome.SUCCESS);
		assertThat(result.results().get(1).failure()).hasMessage("cannot take [bad-1]");
		assertThat(result.results().get(6).failure()).hasMessage("cannot take [bad-2]");
		assertThat(result.bisections()).isEqualTo(5);
		assertThat(this.listener.callSizes()).containsExactly(8, 4, 2, 1, 1, 2, 4, 2, 2, 1, 1);
	}

	@Test
	void withFailAllEveryRecordOfABatchThatFailsAsAWholeFailsWithTheException() {
		this.listener.then = (batch) -> {
			if (batch.contains("bad")) {
				throw new IllegalStateException("cannot take the batch");
			}
		};

		BatchResult result = invoker("onValues", BatchSettings.Failure.FAIL_ALL)
			.handle(deliveries("v10", "bad", "v12", "v13"));

		assertThat(outcomes(result)).containsExactly(Outcome.FAILURE, Outcome.FAILURE, Outcome.FAILURE,
				Outcome.FAILURE);
		assertThat(result.results())
			.allSatisfy((failed) -> assertThat(failed.failure()).hasMessage("cannot take the batch"));
		assertThat(result.bisections()).isZero();
		assertThat(this.listener.callSizes()).containsExactly(4);
	}

	@Test
	void inABisectedBatchTheRecordsOfAKeyAfterOneThatFailedAloneDoNotRunAgain() {
		this.listener.then = (batch) -> {
			if (batch.contains("a-bad")) {
				throw new IllegalStateException("cannot take " + batch);
			}
		};

		// key a: a-1, a-bad, a-3, a-4 in order, between records of b and c
		BatchResult result = invoker("onValues")
			.handle(keyed("a:a-1", "b:b-1", "a:a-bad", "c:c-1", "a:a-3", "b:b-2", "a:a-4", "c:c-2"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS, Outcome.FAILURE, Outcome.SUCCESS,
				null, Outcome.SUCCESS, null, Outcome.SUCCESS);
		assertThat(result.results().get(2).failure()).hasMessage("cannot take [a-bad]");
		// halves: [a-1 b-1 a-bad c-1] fails, [a-1 b-1] succeeds, [a-bad c-1] fails,
		// [a-bad] and [c-1] alone;
		// the second half leaves out a-3 and a-4, which may not run before a-bad is done
		assertThat(this.listener.calls).containsExactly(
				List.of("a-1", "b-1", "a-bad", "c-1", "a-3", "b-2", "a-4", "c-2"),
				List.of("a-1", "b-1", "a-bad", "c-1"), List.of("a-1", "b-1"), List.of("a-bad", "c-1"), List.of("a-bad"),
				List.of("c-1"), List.of("b-2", "c-2"));
	}

	@Test
	void aRecordNamedByIndexStopsItsKeyAndEveryRecordAfterIt() {
		this.listener.then = (batch) -> {
			if (batch.contains("a-2")) {
				throw new BatchListenerFailedException("a-2 failed", new IllegalStateException("no"), 2);
			}
		};

		BatchResult result = invoker("onValues").handle(keyed("a:a-1", "b:b-1", "a:a-2", "a:a-3", "b:b-2"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS, Outcome.FAILURE, null, null);
		assertThat(this.listener.callSizes()).containsExactly(5);
	}

	@Test
	void withFailAllOnlyTheFirstRecordOfEachKeyFailsAndTheRecordsBehindItDoNotRun() {
		this.listener.then = (batch) -> {
			throw new IllegalStateException("cannot take the batch");
		};

		BatchResult result = invoker("onValues", BatchSettings.Failure.FAIL_ALL)
			.handle(keyed("a:a-1", "a:a-2", "b:b-1", "a:a-3", "b:b-2"));

		assertThat(outcomes(result)).containsExactly(Outcome.FAILURE, null, Outcome.FAILURE, null, null);
	}

	@Test
	void aPoisonRecordStopsTheRecordsOfItsKeyBehindItButNotTheOnesBeforeIt() {
		BatchResult result = invoker("onValues", new StrictStringDeserializer(), ListenerMessaging.defaults(), null,
				BatchSettings.Failure.BISECT)
			.handle(keyed("a:a-1", "a:POISON-2", "b:b-1", "a:a-3"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.POISON, Outcome.SUCCESS, null);
		assertThat(this.listener.calls).containsExactly(List.of("a-1", "b-1"));
	}

	@Test
	void theRecordsOfAKeyBehindOneThatFailedAreReleasedByTheGuardSoThatTheyRunLater() {
		this.listener.then = (batch) -> {
			if (batch.contains("a-bad")) {
				throw new IllegalStateException("cannot take " + batch);
			}
		};
		BatchHandlerInvoker invoker = guarded("onValues");

		BatchResult first = invoker.handle(keyed("a:a-bad", "a:a-2", "b:b-1"));
		this.listener.then = (batch) -> {
		};
		BatchResult second = invoker.handle(keyed("a:a-bad", "a:a-2", "b:b-1"));

		assertThat(outcomes(first)).containsExactly(Outcome.FAILURE, null, Outcome.SUCCESS);
		assertThat(outcomes(second)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS, Outcome.SUCCESS);
		assertThat(this.listener.calls.get(this.listener.calls.size() - 1)).as("b-1 was completed the first time")
			.containsExactly("a-bad", "a-2");
	}

	@Test
	void anErrorTheMethodThrowsFailsTheCallAsAnExceptionDoes() {
		this.listener.then = (batch) -> {
			if (batch.contains("bad")) {
				throw new AssertionError("not as expected");
			}
		};

		BatchResult result = invoker("onValues").handle(deliveries("v10", "bad"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.FAILURE);
		assertThat(result.results().get(1).failure()).isInstanceOf(AssertionError.class).hasMessage("not as expected");
		assertThat(result.bisections()).isEqualTo(1);
		assertThat(this.listener.callSizes()).containsExactly(2, 1, 1);
	}

	@Test
	void aValueTheDeserializerCannotReadIsPoisonAndNeverReachesTheMethod() {
		BatchResult result = invoker("onValues", new StrictStringDeserializer(), ListenerMessaging.defaults(), null,
				BatchSettings.Failure.BISECT)
			.handle(deliveries("v10", "POISON-11", "v12"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.POISON, Outcome.SUCCESS);
		assertThat(result.results().get(1).failure()).isInstanceOf(SerializationException.class)
			.hasMessage("not a valid record: POISON-11");
		assertThat(result.bisections()).isZero();
		assertThat(this.listener.calls).containsExactly(List.of("v10", "v12"));
		assertThat(this.listener.offsets).containsExactly(List.of(10L, 12L));
	}

	@Test
	void aValueTheErrorHandlingDeserializerCouldNotReadIsPoisonAndNeverReachesTheMethod() {
		ErrorHandlingDeserializer<String> values = new ErrorHandlingDeserializer<>(new StrictStringDeserializer());

		BatchResult result = invoker("onValues", values, ListenerMessaging.defaults(), null,
				BatchSettings.Failure.BISECT)
			.handle(deliveries("POISON-10", "v11"));

		assertThat(outcomes(result)).containsExactly(Outcome.POISON, Outcome.SUCCESS);
		assertThat(result.results().get(0).failure()).isInstanceOf(DeserializationException.class)
			.cause()
			.hasMessage("not a valid record: POISON-10");
		assertThat(this.listener.calls).containsExactly(List.of("v11"));
	}

	@Test
	void aBatchOfOnlyPoisonDoesNotCallTheMethod() {
		BatchResult result = invoker("onValues", new StrictStringDeserializer(), ListenerMessaging.defaults(), null,
				BatchSettings.Failure.BISECT)
			.handle(deliveries("POISON-10", "POISON-11"));

		assertThat(outcomes(result)).containsExactly(Outcome.POISON, Outcome.POISON);
		assertThat(this.listener.calls).isEmpty();
	}

	@Test
	void aValueTheRecordConverterCannotReadIsFoundByBisectionAndIsPoisonWhileTheOthersSucceed() {
		ListenerMessaging messaging = ListenerMessaging.asForKafkaListeners(null,
				new StringJacksonJsonMessageConverter());

		BatchResult result = invoker("onOrders", new StringDeserializer(), messaging, null,
				BatchSettings.Failure.BISECT)
			.handle(deliveries(order("o-10"), order("o-11"), "{not json", order("o-13")));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS, Outcome.POISON, Outcome.SUCCESS);
		assertThat(result.results().get(2).failure()).isInstanceOf(ConversionException.class);
		// the converter reads the whole batch before the method runs: the method never
		// sees the bad record
		assertThat(this.listener.calls).containsExactly(List.of(new Order("o-10", 1), new Order("o-11", 1)),
				List.of(new Order("o-13", 1)));
		assertThat(result.bisections()).isEqualTo(2);
	}

	@Test
	void aValueTheRecordConverterCannotReadIsFoundByBisectionAlsoWithFailAll() {
		ListenerMessaging messaging = ListenerMessaging.asForKafkaListeners(null,
				new StringJacksonJsonMessageConverter());

		BatchResult result = invoker("onOrders", new StringDeserializer(), messaging, null,
				BatchSettings.Failure.FAIL_ALL)
			.handle(deliveries("{not json", order("o-11")));

		assertThat(outcomes(result)).containsExactly(Outcome.POISON, Outcome.SUCCESS);
		assertThat(this.listener.calls).containsExactly(List.of(new Order("o-11", 1)));
	}

	@Test
	void aListOfMessagesOfRecordsTheRecordConverterReadsHasTheirPayloadsAndTheUnreadableOneIsPoison() {
		ListenerMessaging messaging = ListenerMessaging.asForKafkaListeners(null,
				new StringJacksonJsonMessageConverter());

		BatchResult result = invoker("onOrderMessages", new StringDeserializer(), messaging, null,
				BatchSettings.Failure.BISECT)
			.handle(deliveries(order("o-10"), "{not json", order("o-12")));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.POISON, Outcome.SUCCESS);
		assertThat(result.results().get(1).failure()).isInstanceOf(ConversionException.class);
		assertThat(this.listener.calls).containsExactly(List.of(new Order("o-10", 1)), List.of(new Order("o-12", 1)));
		assertThat(this.listener.offsets).containsExactly(List.of(10L), List.of(12L));
	}

	@Test
	void aTombstoneIsNullInTheListOfValues() {
		List<Delivery> deliveries = List.of(delivery(0, 10, "k10", "v10"),
				new Delivery("orders", 0, 11, 1L, utf8("k11"), null, new RecordHeaders()));

		BatchResult result = invoker("onValues").handle(deliveries);

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS);
		assertThat(this.listener.calls).containsExactly(Arrays.asList("v10", null));
	}

	@Test
	void theMethodTakesTheGroupAndThePartitionsAsABatchKafkaListenerDoes() {
		List<Delivery> deliveries = List.of(delivery(2, 10, "k10", "v10"), delivery(5, 3, "k3", "v3"));

		BatchResult result = invoker("onGroupAndPartitions").handle(deliveries);

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS);
		assertThat(this.listener.calls).containsExactly(List.of("v10", "v3"));
		assertThat(this.listener.places).containsExactly(List.of("orders-group", "orders-2", "orders-5"));
	}

	@Test
	void aRecordWhoseKeyWasCompletedIsSkippedWithoutReachingTheMethod() {
		Claim earlier = this.store.claim("orders-listener", "orders/0/11", Duration.ofMinutes(5));
		this.store.complete(earlier);

		BatchResult result = guarded("onValues").handle(deliveries("v10", "v11", "v12"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS, Outcome.SUCCESS);
		assertThat(this.listener.calls).containsExactly(List.of("v10", "v12"));
	}

	@Test
	void theKeysOfRecordsThatSucceedAreCompletedSoThatTheNextBatchSkipsThem() {
		BatchHandlerInvoker invoker = guarded("onValues");

		BatchResult first = invoker.handle(deliveries("v10", "v11"));
		BatchResult again = invoker.handle(deliveries("v10", "v11"));

		assertThat(outcomes(first)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS);
		assertThat(outcomes(again)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS);
		assertThat(this.listener.calls).containsExactly(List.of("v10", "v11"));
		assertThat(this.store.claim("orders-listener", "orders/0/10", Duration.ofMinutes(5)).status())
			.isEqualTo(Claim.Status.COMPLETED);
	}

	@Test
	void theKeysOfRecordsThatFailedOrDidNotRunAreReleasedSoThatTheNextBatchRunsThem() {
		BatchHandlerInvoker invoker = guarded("onValues");
		this.listener.then = (batch) -> {
			throw new BatchListenerFailedException("second failed", new IllegalStateException("bad"), 1);
		};

		BatchResult first = invoker.handle(deliveries("v10", "v11", "v12"));
		this.listener.then = (batch) -> {
		};
		BatchResult retried = invoker.handle(deliveries("v10", "v11", "v12"));

		assertThat(outcomes(first)).containsExactly(Outcome.SUCCESS, Outcome.FAILURE, null);
		assertThat(outcomes(retried)).containsExactly(Outcome.SUCCESS, Outcome.SUCCESS, Outcome.SUCCESS);
		assertThat(this.listener.calls).containsExactly(List.of("v10", "v11", "v12"), List.of("v11", "v12"));
	}

	@Test
	void theKeysOfRecordsThatSucceedInABisectedBatchAreCompletedAndTheFailedOnesReleased() {
		BatchHandlerInvoker invoker = guarded("onValues");
		this.listener.then = (batch) -> {
			if (batch.contains("bad")) {
				throw new IllegalStateException("cannot take " + batch);
			}
		};

		BatchResult first = invoker.handle(deliveries("v10", "bad", "v12", "v13"));
		BatchResult retried = invoker.handle(deliveries("v10", "bad", "v12", "v13"));

		assertThat(outcomes(first)).containsExactly(Outcome.SUCCESS, Outcome.FAILURE, Outcome.SUCCESS, Outcome.SUCCESS);
		assertThat(outcomes(retried)).containsExactly(Outcome.SUCCESS, Outcome.FAILURE, Outcome.SUCCESS,
				Outcome.SUCCESS);
		assertThat(this.listener.callSizes()).containsExactly(4, 2, 1, 1, 2, 1);
		assertThat(this.listener.calls.get(5)).as("only the failed record runs again").containsExactly("bad");
	}

	@Test
	void aKeyHeldByAnotherAttemptFailsItsRecordWithoutReachingTheMethod() {
		this.store.claim("orders-listener", "orders/0/10", Duration.ofMinutes(5));

		BatchResult result = guarded("onValues").handle(deliveries("v10", "v11"));

		assertThat(outcomes(result)).containsExactly(Outcome.FAILURE, Outcome.SUCCESS);
		assertThat(result.results().get(0).failure()).isInstanceOf(ClaimHeldException.class);
		assertThat(this.listener.calls).containsExactly(List.of("v11"));
	}

	@Test
	void withATransactionEachCallRunsInOneThatIsRolledBackWhenNoRecordOfTheCallSucceeded() {
		RecordingTransactions transactions = new RecordingTransactions();
		IdempotencyGuard guard = new IdempotencyGuard("orders-listener", this.store,
				IdempotencyKeyResolver.birthplace("orders"), Duration.ofMinutes(5), transactions,
				IdempotencyObserver.NONE);
		this.listener.then = (batch) -> {
			if (batch.contains("bad")) {
				throw new IllegalStateException("cannot take " + batch);
			}
		};

		BatchResult result = invoker("onValues", new StringDeserializer(), ListenerMessaging.defaults(), guard,
				BatchSettings.Failure.BISECT)
			.handle(deliveries("v10", "bad"));

		assertThat(outcomes(result)).containsExactly(Outcome.SUCCESS, Outcome.FAILURE);
		assertThat(this.listener.callSizes()).containsExactly(2, 1, 1);
		assertThat(transactions.rolledBack).containsExactly(true, false, true);
		assertThat(this.store.claim("orders-listener", "orders/0/10", Duration.ofMinutes(5)).status())
			.isEqualTo(Claim.Status.COMPLETED);
		assertThat(this.store.claim("orders-listener", "orders/0/11", Duration.ofMinutes(5)).status())
			.as("released, so claimed anew")
			.isEqualTo(Claim.Status.CLAIMED);
	}

	@Test
	void whenTheStoreCannotCompleteTheKeysEveryRecordOfTheCallFailsAndCountsAnAttempt() {
		InMemoryIdempotencyStore failingStore = new InMemoryIdempotencyStore() {

			@Override
			public void complete(Claim claim) {
				throw new IllegalStateException("store down");
			}

		};
		IdempotencyGuard guard = new IdempotencyGuard("orders-listener", failingStore,
				IdempotencyKeyResolver.birthplace("orders"), Duration.ofMinutes(5), null, IdempotencyObserver.NONE);

		BatchResult result = invoker("onValues", new StringDeserializer(), ListenerMessaging.defaults(), guard,
				BatchSettings.Failure.BISECT)
			.handle(deliveries("v10", "v11"));

		assertThat(outcomes(result)).containsExactly(Outcome.FAILURE, Outcome.FAILURE);
		assertThat(result.results().get(0).failure()).hasMessage("store down");
		assertThat(this.listener.callSizes()).as("not bisected: splitting cannot help").containsExactly(2);
		assertThat(failingStore.claim("orders-listener", "orders/0/10", Duration.ofMinutes(5)).status())
			.as("released, so claimed anew")
			.isEqualTo(Claim.Status.CLAIMED);
	}

	private BatchHandlerInvoker invoker(String method) {
		return invoker(method, BatchSettings.Failure.BISECT);
	}

	private BatchHandlerInvoker invoker(String method, BatchSettings.Failure failure) {
		return invoker(method, new StringDeserializer(), ListenerMessaging.defaults(), null, failure);
	}

	private BatchHandlerInvoker guarded(String method) {
		IdempotencyGuard guard = new IdempotencyGuard("orders-listener", this.store,
				IdempotencyKeyResolver.birthplace("orders"), Duration.ofMinutes(5), null, IdempotencyObserver.NONE);
		return invoker(method, new StringDeserializer(), ListenerMessaging.defaults(), guard,
				BatchSettings.Failure.BISECT);
	}

	private BatchHandlerInvoker invoker(String method, Deserializer<?> valueDeserializer, ListenerMessaging messaging,
			@Nullable IdempotencyGuard guard, BatchSettings.Failure failure) {
		Method handler = ReflectionUtils.findMethod(Listener.class, method, (Class<?>[]) null);
		ListenerEndpoint endpoint = new ListenerEndpoint("orders-listener", "orders-group", List.of("orders"), null,
				null, null, null, null, true, this.listener, handler, null, Map.of(), true, null);
		return new BatchHandlerInvoker(endpoint,
				new RecordReader("orders", new StringDeserializer(), valueDeserializer), messaging, guard, failure);
	}

	private static List<@Nullable Outcome> outcomes(BatchResult result) {
		return result.results().stream().map((handled) -> (handled != null) ? handled.outcome() : null).toList();
	}

	/** Records of partition 0 from offset 10 on, keyed k10, k11, ... */
	private static List<Delivery> deliveries(String... values) {
		List<Delivery> deliveries = new ArrayList<>();
		for (int i = 0; i < values.length; i++) {
			deliveries.add(delivery(0, 10 + i, "k" + (10 + i), values[i]));
		}
		return deliveries;
	}

	/** Records of partition 0 from offset 10 on, each given as {@code key:value}. */
	private static List<Delivery> keyed(String... records) {
		List<Delivery> deliveries = new ArrayList<>();
		for (int i = 0; i < records.length; i++) {
			String[] record = records[i].split(":", 2);
			deliveries.add(delivery(0, 10 + i, record[0], record[1]));
		}
		return deliveries;
	}

	private static Delivery delivery(int partition, long offset, String key, String value) {
		Headers headers = new RecordHeaders();
		headers.add("trace-id", utf8("t-" + offset));
		return new Delivery("orders", partition, offset, 1L, utf8(key), utf8(value), headers);
	}

	private static String order(String id) {
		return "{\"id\":\"" + id + "\",\"quantity\":1}";
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	record Order(String id, int quantity) {
	}

	/** What the method does once it recorded what it got. */
	interface Then {

		void on(List<?> batch);

	}

	/**
	 * Runs each call in a transaction of its own and records whether it was rolled back.
	 */
	static class RecordingTransactions implements TransactionOperations {

		final List<Boolean> rolledBack = new ArrayList<>();

		@Override
		public <T> T execute(TransactionCallback<T> action) throws TransactionException {
			SimpleTransactionStatus status = new SimpleTransactionStatus();
			try {
				return action.doInTransaction(status);
			}
			finally {
				this.rolledBack.add(status.isRollbackOnly());
			}
		}

	}

	static class Listener {

		/** What each call got: the values, or the payloads. */
		final List<List<Object>> calls = new ArrayList<>();

		final List<List<?>> keys = new ArrayList<>();

		final List<List<?>> offsets = new ArrayList<>();

		final List<List<String>> places = new ArrayList<>();

		final List<List<String>> traces = new ArrayList<>();

		Then then = (batch) -> {
		};

		List<Integer> callSizes() {
			return this.calls.stream().map(List::size).toList();
		}

		void onValues(List<String> values, @Header(KafkaHeaders.RECEIVED_KEY) List<String> keys,
				@Header(KafkaHeaders.OFFSET) List<Long> offsets) {
			this.calls.add(new ArrayList<>(values));
			this.keys.add(List.copyOf(keys));
			this.offsets.add(List.copyOf(offsets));
			this.then.on(values);
		}

		void onMessages(List<Message<String>> messages) {
			this.calls.add(messages.stream().<Object>map(Message::getPayload).toList());
			this.keys
				.add(messages.stream().map((message) -> message.getHeaders().get(KafkaHeaders.RECEIVED_KEY)).toList());
			this.offsets
				.add(messages.stream().map((message) -> message.getHeaders().get(KafkaHeaders.OFFSET)).toList());
			this.traces.add(messages.stream()
				.map((message) -> new String(message.getHeaders().get("trace-id", byte[].class),
						StandardCharsets.UTF_8))
				.toList());
			this.then.on(messages);
		}

		void onRecords(List<ConsumerRecord<String, String>> records) {
			recordsGot(records);
		}

		void onConsumerRecords(ConsumerRecords<String, String> records) {
			List<ConsumerRecord<String, String>> list = new ArrayList<>();
			records.forEach(list::add);
			recordsGot(list);
		}

		void onOrderMessages(List<Message<Order>> messages) {
			this.calls.add(messages.stream().<Object>map(Message::getPayload).toList());
			this.offsets
				.add(messages.stream().map((message) -> message.getHeaders().get(KafkaHeaders.OFFSET)).toList());
			this.then.on(messages);
		}

		void onGroupAndPartitions(List<String> values, @Header(KafkaHeaders.GROUP_ID) String group,
				@Header(KafkaHeaders.RECEIVED_TOPIC) List<String> topics,
				@Header(KafkaHeaders.RECEIVED_PARTITION) List<Integer> partitions) {
			this.calls.add(new ArrayList<>(values));
			List<String> places = new ArrayList<>();
			places.add(group);
			for (int i = 0; i < topics.size(); i++) {
				places.add(topics.get(i) + "-" + partitions.get(i));
			}
			this.places.add(places);
			this.then.on(values);
		}

		void onOrders(List<Order> orders) {
			this.calls.add(new ArrayList<>(orders));
			this.then.on(orders);
		}

		private void recordsGot(List<ConsumerRecord<String, String>> records) {
			this.calls.add(records.stream().<Object>map(ConsumerRecord::value).toList());
			this.keys.add(records.stream().map(ConsumerRecord::key).toList());
			this.places.add(records.stream()
				.map((record) -> record.topic() + "-" + record.partition() + "@" + record.offset())
				.toList());
			this.traces.add(records.stream()
				.map((record) -> new String(record.headers().lastHeader("trace-id").value(), StandardCharsets.UTF_8))
				.toList());
			this.then.on(records);
		}

	}

}
