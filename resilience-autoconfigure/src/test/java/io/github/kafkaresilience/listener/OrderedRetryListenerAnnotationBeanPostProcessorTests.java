package io.github.kafkaresilience.listener;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.container.SyncBarrier;
import io.github.kafkaresilience.container.OrderedRetryContainer;
import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.autoconfigure.OrderedRetryAutoConfiguration;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.topics.LadderTopics;
import io.github.kafkaresilience.lock.LockCoordinator;
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
 * Finding {@code @OrderedRetryListener} methods and resolving their attributes. The registry
 * is replaced by one that does not start containers, so no broker is needed.
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
			List<ListenerEndpoint> endpoints = context.getBean(OrderedRetryListenerRegistry.class).endpoints();
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
		this.runner.withBean("minimalListener", MinimalListener.class)
			.run((context) -> {
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
			.run((context) -> assertThat(messages(context.getStartupFailure())).anySatisfy((message) -> assertThat(message)
				.contains("GroupPropertyListener.handle")
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
		this.runner.withBean("expressionListener", ExpressionListener.class)
			.run((context) -> {
				ListenerEndpoint endpoint = endpoint(context);
				assertThat(endpoint.topics()).containsExactly("ORDERS");
				assertThat(endpoint.maxAttempts()).isEqualTo(3);
			});
	}

	@Test
	void aBadDelayFailsStartupNamingTheMethod() {
		this.runner.withBean("badDelayListener", BadDelayListener.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).anySatisfy((message) -> assertThat(message)
					.contains(BadDelayListener.class.getName() + ".handle")
					.contains("'soon'"));
			});
	}

	@Test
	void aNonNumericMaxAttemptsFailsStartupNamingTheMethod() {
		this.runner.withBean("badMaxAttemptsListener", BadMaxAttemptsListener.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).anySatisfy((message) -> assertThat(message)
					.contains(BadMaxAttemptsListener.class.getName() + ".handle")
					.contains("maxAttempts")
					.contains("'three'"));
			});
	}

	@Test
	void aMaxAttemptsBelowOneFailsStartupNamingTheMethod() {
		this.runner.withBean("zeroMaxAttemptsListener", ZeroMaxAttemptsListener.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).anySatisfy((message) -> assertThat(message)
					.contains(ZeroMaxAttemptsListener.class.getName() + ".handle")
					.contains("maxAttempts"));
			});
	}

	@Test
	void aListenerWithoutTopicsFailsStartupNamingTheMethod() {
		this.runner.withBean("noTopicListener", NoTopicListener.class)
			.withPropertyValues("app.empty=")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).anySatisfy((message) -> assertThat(message)
					.contains(NoTopicListener.class.getName() + ".handle")
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
				OrderedRetryListenerRegistry registry = context.getBean(OrderedRetryListenerRegistry.class);
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
		refused(RecordListListener.class, "takes a batch", "parameter 1 (List)", "runs once per record");
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
	void aMethodReturningAFutureFailsStartupSayingTheAttemptMustEndWhenItReturns() {
		refused(FutureListener.class, "returns CompletableFuture", "Finish the work before returning");
	}

	@Test
	void aMethodWithSendToFailsStartupSayingNoReplyIsSent() {
		refused(ReplyingListener.class, "has @SendTo", "send no replies");
	}

	@Test
	void beansWithoutListenersRegisterNothing() {
		this.runner.withBean("plain", Object.class)
			.run((context) -> assertThat(context.getBean(OrderedRetryListenerRegistry.class).endpoints()).isEmpty());
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
		List<ListenerEndpoint> endpoints = context.getBean(OrderedRetryListenerRegistry.class).endpoints();
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

		@OrderedRetryListener(topics = "orders")
		CompletableFuture<Void> handle(String value) {
			return CompletableFuture.completedFuture(null);
		}

	}

	static class ReplyingListener {

		@OrderedRetryListener(topics = "orders")
		@SendTo("replies")
		String handle(String value) {
			return value;
		}

	}

	/**
	 * Keeps the auto-configured collaborators but never starts containers, which would reach
	 * for a broker.
	 */
	@Configuration(proxyBeanMethods = false)
	static class NonStartingRegistryConfiguration {

		@Bean
		OrderedRetryListenerRegistry nonStartingRegistry(OrderedRetryContainerFactory orderedRetryContainerFactory) {
			return new OrderedRetryListenerRegistry(orderedRetryContainerFactory, (name) -> orderedRetryContainerFactory) {

				@Override
				public void start() {
				}

			};
		}

	}

}
