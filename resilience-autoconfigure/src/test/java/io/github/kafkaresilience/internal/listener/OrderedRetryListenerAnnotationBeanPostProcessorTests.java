package io.github.kafkaresilience.internal.listener;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.internal.container.SyncBarrier;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.autoconfigure.OrderedRetryAutoConfiguration;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.internal.topics.LadderTopics;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.listener.adapter.ConsumerRecordMetadata;
import org.springframework.kafka.support.Acknowledgment;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Headers;
import org.springframework.messaging.handler.annotation.Payload;
import org.springframework.messaging.handler.annotation.SendTo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Finding {@code @OrderedRetryListener} methods and resolving their attributes. The
 * registry is replaced by one that does not start containers, so no broker is needed.
 */
class OrderedRetryListenerAnnotationBeanPostProcessorTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, OrderedRetryAutoConfiguration.class))
		.withUserConfiguration(NonStartingRegistryConfiguration.class)
		.withPropertyValues("spring.kafka.bootstrap-servers=localhost:1", "kafka.resilience.instance-id=test",
				"app.topic=orders", "app.delays=1s, 2m");

	@Test
	void aListenerIsRegisteredWithItsResolvedAttributes() {
		this.runner.withBean("ordersListener", OrdersListener.class).run((context) -> {
			assertThat(context).hasNotFailed();
			List<ListenerEndpoint> endpoints = context.getBean(ListenerRegistry.class).endpoints();
			assertThat(endpoints).hasSize(1);
			ListenerEndpoint endpoint = endpoints.get(0);
			assertThat(endpoint.id()).isEqualTo("ordersListener.handle");
			assertThat(endpoint.topics()).containsExactly("orders");
			assertThat(endpoint.delays()).containsExactly(Duration.ofSeconds(1), Duration.ofMinutes(2));
			assertThat(endpoint.maxAttempts()).isEqualTo(3);
			assertThat(endpoint.concurrency()).isNull();
			assertThat(endpoint.bean()).isSameAs(context.getBean("ordersListener"));
			assertThat(endpoint.method().getName()).isEqualTo("handle");
		});
	}

	@Test
	void theGroupIdFallsBackToTheSpringKafkaConsumerGroupId() {
		this.runner.withBean("ordersListener", OrdersListener.class)
			.withPropertyValues("spring.kafka.consumer.group-id=app-group")
			.run((context) -> assertThat(endpoint(context).groupId()).isEqualTo("app-group"));
	}

	@Test
	void theGroupIdFallsBackToTheListenerIdWithoutASpringKafkaGroupId() {
		this.runner.withBean("ordersListener", OrdersListener.class)
			.run((context) -> assertThat(endpoint(context).groupId()).isEqualTo("ordersListener.handle"));
	}

	@Test
	void explicitIdAndGroupIdWin() {
		this.runner.withBean("explicitListener", ExplicitListener.class)
			.withPropertyValues("spring.kafka.consumer.group-id=app-group", "app.id=payments-listener")
			.run((context) -> {
				ListenerEndpoint endpoint = endpoint(context);
				assertThat(endpoint.id()).isEqualTo("payments-listener");
				assertThat(endpoint.groupId()).isEqualTo("payments-group");
				assertThat(endpoint.concurrency()).isEqualTo(2);
			});
	}

	@Test
	void unsetDelaysAndMaxAttemptsAreLeftToTheConfiguredDefaults() {
		this.runner.withBean("minimalListener", MinimalListener.class).run((context) -> {
			ListenerEndpoint endpoint = endpoint(context);
			assertThat(endpoint.delays()).isNull();
			assertThat(endpoint.maxAttempts()).isNull();
			assertThat(endpoint.concurrency()).isNull();
		});
	}

	@Test
	void theContainerFactoryAndConsumerPropertiesAreResolvedAsOnKafkaListener() {
		this.runner.withBean("factoryListener", FactoryListener.class)
			.withPropertyValues("app.factory=transactional", "app.max-poll=7")
			.run((context) -> {
				ListenerEndpoint endpoint = endpoint(context);
				assertThat(endpoint.containerFactory()).isEqualTo("transactional");
				assertThat(endpoint.consumerProperties()).containsExactlyInAnyOrderEntriesOf(
						Map.of("max.poll.records", "7", "fetch.min.bytes", "2", "client.rack", "eu-1"));
			});
		this.runner.withBean("minimalListener", MinimalListener.class).run((context) -> {
			assertThat(endpoint(context).containerFactory()).isNull();
			assertThat(endpoint(context).consumerProperties()).isEmpty();
		});
	}

	@Test
	void consumerPropertiesTheLibrarySetsAreRefusedNamingThem() {
		this.runner.withBean("groupPropertyListener", GroupPropertyListener.class)
			.run((context) -> assertThat(messages(context.getStartupFailure()))
				.anySatisfy((message) -> assertThat(message).contains("GroupPropertyListener.handle")
					.contains("[enable.auto.commit, group.id]")
					.contains("use groupId")));
	}

	@Test
	void severalTopicsMayBeGivenCommaSeparated() {
		this.runner.withBean("multiTopicListener", MultiTopicListener.class)
			.withPropertyValues("app.more-topics=a, b")
			.run((context) -> assertThat(endpoint(context).topics()).containsExactly("a", "b", "c"));
	}

	@Test
	void expressionsAreEvaluated() {
		this.runner.withBean("expressionListener", ExpressionListener.class).run((context) -> {
			ListenerEndpoint endpoint = endpoint(context);
			assertThat(endpoint.topics()).containsExactly("ORDERS");
			assertThat(endpoint.maxAttempts()).isEqualTo(3);
		});
	}

	@Test
	void aBadDelayFailsStartupNamingTheMethod() {
		this.runner.withBean("badDelayListener", BadDelayListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure()))
				.anySatisfy((message) -> assertThat(message).contains(BadDelayListener.class.getName() + ".handle")
					.contains("'soon'"));
		});
	}

	@Test
	void aNonNumericMaxAttemptsFailsStartupNamingTheMethod() {
		this.runner.withBean("badMaxAttemptsListener", BadMaxAttemptsListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).anySatisfy(
					(message) -> assertThat(message).contains(BadMaxAttemptsListener.class.getName() + ".handle")
						.contains("maxAttempts")
						.contains("'three'"));
		});
	}

	@Test
	void aMaxAttemptsBelowOneFailsStartupNamingTheMethod() {
		this.runner.withBean("zeroMaxAttemptsListener", ZeroMaxAttemptsListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).anySatisfy(
					(message) -> assertThat(message).contains(ZeroMaxAttemptsListener.class.getName() + ".handle")
						.contains("maxAttempts"));
		});
	}

	@Test
	void aListenerWithoutTopicsFailsStartupNamingTheMethod() {
		this.runner.withBean("noTopicListener", NoTopicListener.class)
			.withPropertyValues("app.empty=")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure()))
					.anySatisfy((message) -> assertThat(message).contains(NoTopicListener.class.getName() + ".handle")
						.contains("no topic"));
			});
	}

	@Test
	void twoListenersOnTheSameTopicInOneGroupFailStartupNamingTheTopicAndTheGroup() {
		this.runner.withBean("ordersListener", OrdersListener.class)
			.withBean("otherOrdersListener", OtherOrdersListener.class)
			.withPropertyValues("spring.kafka.consumer.group-id=app-group")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).anySatisfy((message) -> assertThat(message)
					.contains("Topic 'orders' is consumed twice in consumer group 'app-group'"));
			});
	}

	@Test
	void twoListenersOnTheSameTopicInTwoGroupsAreRegisteredWithLaddersOfTheirOwn() {
		this.runner.withBean("ordersListener", OrdersListener.class)
			.withBean("otherOrdersListener", OtherOrdersListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				ListenerRegistry registry = context.getBean(ListenerRegistry.class);
				assertThat(registry.endpoints()).extracting(ListenerEndpoint::groupId)
					.containsExactlyInAnyOrder("ordersListener.handle", "otherOrdersListener.handle");
				assertThat(registry.ladder("ordersListener.handle", "orders").dlqTopic())
					.isEqualTo("ordersListener.handle.orders.dlq");
				assertThat(registry.ladder("otherOrdersListener.handle", "orders").dlqTopic())
					.isEqualTo("otherOrdersListener.handle.orders.dlq");
				assertThatIllegalArgumentException().isThrownBy(() -> registry.ladder(null, "orders"))
					.withMessageContaining("name the consumer group");
			});
	}

	@Test
	void twoListenersWithTheSameIdFailStartupNamingTheId() {
		this.runner.withBean("first", SameIdListener.class)
			.withBean("second", OtherSameIdListener.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure()))
					.anySatisfy((message) -> assertThat(message).contains("'shared'"));
			});
	}

	@Test
	void aMethodWithSeveralParametersTheMessagingLayerResolvesIsRegistered() {
		this.runner.withBean("argumentsListener", ArgumentsListener.class)
			.run((context) -> assertThat(endpoint(context).method().getParameterCount()).isEqualTo(4));
	}

	@Test
	void aMethodTakingAnAcknowledgmentFailsStartupSayingTheLibraryCommits() {
		refused(AcknowledgingListener.class, "takes an acknowledgment", "commits a record's offset itself",
				"return normally to acknowledge the record, throw to retry it");
	}

	@Test
	void aMethodTakingTheAcknowledgmentHeaderFailsStartupToo() {
		refused(AcknowledgmentHeaderListener.class, "takes an acknowledgment");
	}

	@Test
	void aMethodTakingTheConsumerFailsStartupPointingToTheRecordsMetadata() {
		refused(ConsumerListener.class, "takes the consumer", "not thread-safe", "ConsumerRecordMetadata");
	}

	@Test
	void aMethodTakingAListOfRecordsFailsStartupAsABatchListener() {
		refused(RecordListListener.class, "takes a batch", "parameter 1 (List)", "runs once per record",
				"Set batch = \"true\" on @OrderedRetryListener");
	}

	@Test
	void aMethodTakingConsumerRecordsFailsStartupAsABatchListener() {
		refused(ConsumerRecordsListener.class, "takes a batch", "parameter 1 (ConsumerRecords)");
	}

	@Test
	void aMethodTakingAListOfMessagesFailsStartupAsABatchListener() {
		refused(MessageListListener.class, "takes a batch");
	}

	@Test
	void anUnannotatedListParameterFailsStartupSayingToAnnotateAPayloadThatIsAList() {
		refused(ValueListListener.class, "as a batch listener does", "annotate the parameter with @Payload");
	}

	@Test
	void aPayloadThatIsAListIsRegistered() {
		this.runner.withBean("payloadListListener", PayloadListListener.class)
			.run((context) -> assertThat(endpoint(context).method().getName()).isEqualTo("handle"));
	}

	@Test
	void aMethodReturningAFutureIsRegisteredAsOneWhoseResultCompletesLaterWithItsAttemptTimeout() {
		this.runner.withBean("futureListener", FutureListener.class).run((context) -> {
			ListenerEndpoint endpoint = endpoint(context);
			assertThat(endpoint.async()).isTrue();
			assertThat(endpoint.attemptTimeout()).isEqualTo(Duration.ofSeconds(5));
		});
	}

	@Test
	void aMethodReturningOnceDoneWithAnAttemptTimeoutFailsStartupSayingItHasNoResultToWaitFor() {
		refused(TimedPlainListener.class, "has attemptTimeout 5s but returns void",
				"return a CompletableFuture, a CompletionStage or a Mono");
	}

	@Test
	void aNonPositiveAttemptTimeoutFailsStartup() {
		refused(ZeroTimeoutListener.class, "has attemptTimeout 0s; it must be positive");
	}

	@Test
	void aRateLimitThatIsNoPositiveNumberFailsStartup() {
		refused(ZeroRateListener.class, "has rateLimit 0; it must be a positive number of records a second");
		refused(TextRateListener.class, "has rateLimit 'fast', which is not a number of records a second");
	}

	@Test
	void aMethodReturningAPlainFutureFailsStartupSayingItCannotTellWhenItCompletes() {
		refused(PlainFutureListener.class, "returns Future", "cannot tell when it completes");
	}

	@Test
	void aMethodWithSendToIsRegisteredWithItsResolvedReplyTopicAndRunsAsOneWhoseStepSendsReplies() {
		this.runner.withBean("replyingListener", ReplyingListener.class)
			.withPropertyValues("replies.topic=order-replies")
			.run((context) -> {
				ListenerEndpoint endpoint = endpoint(context);
				assertThat(endpoint.replyTopic()).isEqualTo("order-replies");
				assertThat(endpoint.async()).isTrue();
			});
	}

	@Test
	void aMethodWithAnEmptySendToRepliesToTheRequestsReplyTopic() {
		this.runner.withBean("requestReplyListener", RequestReplyListener.class)
			.run((context) -> assertThat(endpoint(context).replyTopic()).isEmpty());
	}

	@Test
	void aVoidMethodWithSendToFailsStartupSayingItHasNoReply() {
		refused(VoidReplyingListener.class, "has @SendTo but returns void", "Return the reply, or remove @SendTo");
	}

	@Test
	void aBatchListenerWithSendToFailsStartupSayingBatchesSendNoReplies() {
		refused(ReplyingBatchListener.class, "has @SendTo, but batch listeners send no replies");
	}

	@Test
	void aBatchListenerIsRegisteredAsOneWithItsBatchSize() {
		this.runner.withBean("batchListener", BatchListener.class).run((context) -> {
			assertThat(context).hasNotFailed();
			ListenerEndpoint endpoint = endpoint(context);
			assertThat(endpoint.batch()).isTrue();
			assertThat(endpoint.batchSize()).isEqualTo(50);
		});
	}

	@Test
	void aRecordListenerIsNoBatchListenerAndLeavesTheBatchSizeUnset() {
		this.runner.withBean("minimalListener", MinimalListener.class).run((context) -> {
			assertThat(endpoint(context).batch()).isFalse();
			assertThat(endpoint(context).batchSize()).isNull();
		});
	}

	@Test
	void batchAndBatchSizeResolvePlaceholders() {
		this.runner.withBean("placeholderBatchListener", PlaceholderBatchListener.class)
			.withPropertyValues("app.batch=true", "app.batch-size=25")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(endpoint(context).batch()).isTrue();
				assertThat(endpoint(context).batchSize()).isEqualTo(25);
			});
	}

	@Test
	void batchResolvedToFalseMakesARecordListener() {
		this.runner.withBean("placeholderRecordListener", PlaceholderRecordListener.class)
			.withPropertyValues("app.batch=false")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(endpoint(context).batch()).isFalse();
			});
	}

	@Test
	void aBatchListenerMayTakeEveryFormOfTheBatchWithTheListsOfItsHeaders() {
		this.runner.withBean("valuesBatchListener", ValuesBatchListener.class)
			.withBean("messagesBatchListener", MessagesBatchListener.class)
			.withBean("recordsBatchListener", RecordsBatchListener.class)
			.withBean("consumerRecordsBatchListener", ConsumerRecordsBatchListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(ListenerRegistry.class).endpoints()).hasSize(4)
					.allSatisfy((endpoint) -> assertThat(endpoint.batch()).isTrue());
			});
	}

	@Test
	void aBatchThatIsNeitherTrueNorFalseFailsStartupNamingTheMethod() {
		refused(MaybeBatchListener.class, "batch 'maybe'", "neither true nor false");
	}

	@Test
	void aBatchSizeWithoutBatchFailsStartupSayingToSetBatch() {
		refused(BatchSizeOnlyListener.class, "batchSize 10", "no batch listener", "set batch = \"true\"");
	}

	@Test
	void aBatchSizeOnAListenerWhoseBatchIsFalseFailsStartupToo() {
		refused(BatchSizeWithBatchFalseListener.class, "batchSize 10", "no batch listener");
	}

	@Test
	void aBatchSizeBelowOneFailsStartupNamingTheMethod() {
		refused(ZeroBatchSizeListener.class, "batchSize 0", "at least 1");
	}

	@Test
	void aBatchSizeThatIsNotANumberFailsStartupNamingTheMethod() {
		refused(WordBatchSizeListener.class, "batchSize 'many'", "not a number");
	}

	@Test
	void aBatchListenerTakingOneRecordFailsStartupSayingItTakesNoBatch() {
		refused(SingleValueBatchListener.class, "is a batch listener (batch = \"true\") but takes no batch",
				"as a List of values", "remove batch = \"true\"");
	}

	@Test
	void aBatchListenerTakingOnlyTheListOfAHeaderFailsStartupSayingItTakesNoBatch() {
		refused(HeaderListOnlyBatchListener.class, "takes no batch");
	}

	@Test
	void aBatchListenerTakingAnAcknowledgmentFailsStartupSayingTheLibraryCommits() {
		refused(AcknowledgingBatchListener.class, "takes an acknowledgment", "parameter 2 (Acknowledgment)",
				"commits a record's offset itself");
	}

	@Test
	void aBatchListenerTakingTheConsumerFailsStartupSayingItIsNotThreadSafe() {
		refused(ConsumerBatchListener.class, "takes the consumer", "parameter 2 (Consumer)", "not thread-safe",
				"take the List of ConsumerRecords or @Header(KafkaHeaders.OFFSET) List<Long>");
		this.runner.withBean("refusedListener", ConsumerBatchListener.class)
			.run((context) -> assertThat(messages(context.getStartupFailure()))
				.as("ConsumerRecordMetadata is a record listener's")
				.noneSatisfy((message) -> assertThat(message).contains("ConsumerRecordMetadata")));
	}

	@Test
	void aBatchListenerTakingConsumerRecordMetadataFailsStartupSayingItDescribesOneRecord() {
		refused(MetadataBatchListener.class, "takes ConsumerRecordMetadata", "parameter 2 (ConsumerRecordMetadata)",
				"describes one record", "@Header(KafkaHeaders.OFFSET) List<Long>");
	}

	@Test
	void aBatchListenerReturningAFutureRegistersAsABatchListenerWhoseResultsCompleteLater() {
		this.runner.withBean("futureBatchListener", FutureBatchListener.class).run((context) -> {
			ListenerEndpoint endpoint = endpoint(context);
			assertThat(endpoint.batch()).isTrue();
			assertThat(endpoint.async()).isTrue();
			assertThat(endpoint.attemptTimeout()).isEqualTo(Duration.ofSeconds(5));
		});
	}

	@Test
	void beansWithoutListenersRegisterNothing() {
		this.runner.withBean("plain", Object.class)
			.run((context) -> assertThat(context.getBean(ListenerRegistry.class).endpoints()).isEmpty());
	}

	private void refused(Class<?> listener, String... parts) {
		this.runner.withBean("refusedListener", listener).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).anySatisfy((message) -> assertThat(message)
				.contains("@OrderedRetryListener on " + listener.getName() + ".handle")
				.contains(parts));
		});
	}

	private static ListenerEndpoint endpoint(ApplicationContext context) {
		List<ListenerEndpoint> endpoints = context.getBean(ListenerRegistry.class).endpoints();
		assertThat(endpoints).hasSize(1);
		return endpoints.get(0);
	}

	private static List<String> messages(Throwable failure) {
		List<String> messages = new ArrayList<>();
		for (Throwable current = failure; current != null; current = current.getCause()) {
			messages.add(String.valueOf(current.getMessage()));
		}
		return messages;
	}

	static class OrdersListener {

		@OrderedRetryListener(topics = "${app.topic}", delays = "${app.delays}", maxAttempts = "3")
		void handle(ConsumerRecord<String, String> record) {
		}

	}

	static class OtherOrdersListener {

		@OrderedRetryListener(topics = "orders")
		void handle(String value) {
		}

	}

	static class ExplicitListener {

		@OrderedRetryListener(id = "${app.id}", topics = "payments", groupId = "payments-group", concurrency = "2")
		void handle(String value) {
		}

	}

	static class MinimalListener {

		@OrderedRetryListener(topics = "orders")
		void handle(String value) {
		}

	}

	static class FactoryListener {

		@OrderedRetryListener(topics = "orders", containerFactory = "${app.factory}",
				properties = { "max.poll.records=${app.max-poll}", "fetch.min.bytes:2", "client.rack = eu-1" })
		void handle(String value) {
		}

	}

	static class GroupPropertyListener {

		@OrderedRetryListener(topics = "orders", properties = { "group.id=other", "enable.auto.commit=true" })
		void handle(String value) {
		}

	}

	static class MultiTopicListener {

		@OrderedRetryListener(topics = { "${app.more-topics}", "c" })
		void handle(String value) {
		}

	}

	static class ExpressionListener {

		@OrderedRetryListener(topics = "#{'${app.topic}'.toUpperCase()}", maxAttempts = "#{1 + 2}")
		void handle(String value) {
		}

	}

	static class BadDelayListener {

		@OrderedRetryListener(topics = "orders", delays = "1s, soon")
		void handle(String value) {
		}

	}

	static class BadMaxAttemptsListener {

		@OrderedRetryListener(topics = "orders", maxAttempts = "three")
		void handle(String value) {
		}

	}

	static class ZeroMaxAttemptsListener {

		@OrderedRetryListener(topics = "orders", maxAttempts = "0")
		void handle(String value) {
		}

	}

	static class NoTopicListener {

		@OrderedRetryListener(topics = "${app.empty}")
		void handle(String value) {
		}

	}

	static class SameIdListener {

		@OrderedRetryListener(id = "shared", topics = "a")
		void handle(String value) {
		}

	}

	static class OtherSameIdListener {

		@OrderedRetryListener(id = "shared", topics = "b")
		void handle(String value) {
		}

	}

	static class ArgumentsListener {

		@OrderedRetryListener(topics = "orders")
		void handle(@Payload(required = false) String value, @Header(KafkaHeaders.RECEIVED_KEY) String key,
				@Headers Map<String, Object> headers, ConsumerRecordMetadata metadata) {
		}

	}

	static class AcknowledgingListener {

		@OrderedRetryListener(topics = "orders")
		void handle(String value, Acknowledgment acknowledgment) {
		}

	}

	static class AcknowledgmentHeaderListener {

		@OrderedRetryListener(topics = "orders")
		void handle(String value, @Header(KafkaHeaders.ACKNOWLEDGMENT) Object acknowledgment) {
		}

	}

	static class ConsumerListener {

		@OrderedRetryListener(topics = "orders")
		void handle(String value, Consumer<String, String> consumer) {
		}

	}

	static class RecordListListener {

		@OrderedRetryListener(topics = "orders")
		void handle(List<ConsumerRecord<String, String>> records) {
		}

	}

	static class ConsumerRecordsListener {

		@OrderedRetryListener(topics = "orders")
		void handle(ConsumerRecords<String, String> records) {
		}

	}

	static class MessageListListener {

		@OrderedRetryListener(topics = "orders")
		void handle(List<Message<String>> messages) {
		}

	}

	static class ValueListListener {

		@OrderedRetryListener(topics = "orders")
		void handle(List<String> values) {
		}

	}

	static class PayloadListListener {

		@OrderedRetryListener(topics = "orders")
		void handle(@Payload List<String> items) {
		}

	}

	static class FutureListener {

		@OrderedRetryListener(topics = "orders", attemptTimeout = "5s")
		CompletableFuture<Void> handle(String value) {
			return CompletableFuture.completedFuture(null);
		}

	}

	static class TimedPlainListener {

		@OrderedRetryListener(topics = "orders", attemptTimeout = "5s")
		void handle(String value) {
		}

	}

	static class ZeroRateListener {

		@OrderedRetryListener(topics = "orders", rateLimit = "0")
		void handle(String value) {
		}

	}

	static class TextRateListener {

		@OrderedRetryListener(topics = "orders", rateLimit = "fast")
		void handle(String value) {
		}

	}

	static class ZeroTimeoutListener {

		@OrderedRetryListener(topics = "orders", attemptTimeout = "0s")
		CompletableFuture<Void> handle(String value) {
			return CompletableFuture.completedFuture(null);
		}

	}

	static class PlainFutureListener {

		@OrderedRetryListener(topics = "orders")
		Future<Void> handle(String value) {
			return CompletableFuture.completedFuture(null);
		}

	}

	static class ReplyingListener {

		@OrderedRetryListener(topics = "orders")
		@SendTo("${replies.topic}")
		String handle(String value) {
			return value;
		}

	}

	static class RequestReplyListener {

		@OrderedRetryListener(topics = "orders")
		@SendTo
		String handle(String value) {
			return value;
		}

	}

	static class VoidReplyingListener {

		@OrderedRetryListener(topics = "orders")
		@SendTo("replies")
		void handle(String value) {
		}

	}

	static class ReplyingBatchListener {

		@OrderedRetryListener(topics = "orders", batch = "true")
		@SendTo("replies")
		List<String> handle(List<String> values) {
			return values;
		}

	}

	static class BatchListener {

		@OrderedRetryListener(topics = "orders", batch = "true", batchSize = "50")
		void handle(List<String> values) {
		}

	}

	static class PlaceholderBatchListener {

		@OrderedRetryListener(topics = "orders", batch = "${app.batch}", batchSize = "${app.batch-size}")
		void handle(List<String> values) {
		}

	}

	static class PlaceholderRecordListener {

		@OrderedRetryListener(topics = "orders", batch = "${app.batch}")
		void handle(String value) {
		}

	}

	static class ValuesBatchListener {

		@OrderedRetryListener(topics = "values", batch = "true")
		void handle(List<String> values, @Header(KafkaHeaders.RECEIVED_KEY) List<String> keys,
				@Header(KafkaHeaders.OFFSET) List<Long> offsets) {
		}

	}

	static class MessagesBatchListener {

		@OrderedRetryListener(topics = "messages", batch = "true")
		void handle(List<Message<String>> messages) {
		}

	}

	static class RecordsBatchListener {

		@OrderedRetryListener(topics = "records", batch = "true")
		void handle(List<ConsumerRecord<String, String>> records) {
		}

	}

	static class ConsumerRecordsBatchListener {

		@OrderedRetryListener(topics = "polled", batch = "true")
		void handle(ConsumerRecords<String, String> records) {
		}

	}

	static class MaybeBatchListener {

		@OrderedRetryListener(topics = "orders", batch = "maybe")
		void handle(List<String> values) {
		}

	}

	static class BatchSizeOnlyListener {

		@OrderedRetryListener(topics = "orders", batchSize = "10")
		void handle(String value) {
		}

	}

	static class BatchSizeWithBatchFalseListener {

		@OrderedRetryListener(topics = "orders", batch = "false", batchSize = "10")
		void handle(String value) {
		}

	}

	static class ZeroBatchSizeListener {

		@OrderedRetryListener(topics = "orders", batch = "true", batchSize = "0")
		void handle(List<String> values) {
		}

	}

	static class WordBatchSizeListener {

		@OrderedRetryListener(topics = "orders", batch = "true", batchSize = "many")
		void handle(List<String> values) {
		}

	}

	static class SingleValueBatchListener {

		@OrderedRetryListener(topics = "orders", batch = "true")
		void handle(String value) {
		}

	}

	static class HeaderListOnlyBatchListener {

		@OrderedRetryListener(topics = "orders", batch = "true")
		void handle(@Header(KafkaHeaders.OFFSET) List<Long> offsets) {
		}

	}

	static class AcknowledgingBatchListener {

		@OrderedRetryListener(topics = "orders", batch = "true")
		void handle(List<String> values, Acknowledgment acknowledgment) {
		}

	}

	static class ConsumerBatchListener {

		@OrderedRetryListener(topics = "orders", batch = "true")
		void handle(List<String> values, Consumer<String, String> consumer) {
		}

	}

	static class MetadataBatchListener {

		@OrderedRetryListener(topics = "orders", batch = "true")
		void handle(List<String> values, ConsumerRecordMetadata metadata) {
		}

	}

	static class FutureBatchListener {

		@OrderedRetryListener(topics = "orders", batch = "true", attemptTimeout = "5s")
		CompletableFuture<Void> handle(List<String> values) {
			return CompletableFuture.completedFuture(null);
		}

	}

	/**
	 * Keeps the auto-configured collaborators but never starts containers, which would
	 * reach for a broker.
	 */
	@Configuration(proxyBeanMethods = false)
	static class NonStartingRegistryConfiguration {

		@Bean
		ListenerRegistry nonStartingRegistry(OrderedRetryContainerFactory orderedRetryContainerFactory,
				ContainerAssemblies assemblies) {
			return new ListenerRegistry(orderedRetryContainerFactory, (name) -> orderedRetryContainerFactory,
					assemblies) {

				@Override
				public void start() {
				}

			};
		}

	}

}
