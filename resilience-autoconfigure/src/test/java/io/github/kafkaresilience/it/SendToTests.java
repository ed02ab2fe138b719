package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.PermanentFailureException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.requestreply.ReplyingKafkaTemplate;
import org.springframework.kafka.requestreply.RequestReplyFuture;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.SendTo;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @SendTo} listener methods: a returned value, or the value of a result that
 * completed later, is sent as spring-kafka sends a {@code @KafkaListener}'s reply, once
 * per successful attempt, as a write of the record's step.
 */
@UsesSharedBroker
class SendToTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	/**
	 * Attempts per value: {@code A} fails on its first two, {@code P} fails permanently.
	 */
	static final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();

	@ParameterizedTest
	@ValueSource(strings = { "value", "future" })
	void aSuccessfulAttemptRepliesOnceWithTheRequestsKeyAndAFailedOneNever(String kind) {
		String topic = SharedBroker.newTopic(3);
		String replies = topic + ".replies";
		SharedBroker.createTopic(replies, 3, Map.of());
		Class<?> application = kind.equals("value") ? ValueApplication.class : FutureApplication.class;
		try (ConfigurableApplicationContext context = TestApplication.start(application, topic,
				"kafka.resilience.retry.delays=1s", "kafka.resilience.retry.max-attempts=3")) {
			SharedBroker.send(topic, "k", "A");
			SharedBroker.send(topic, "k", "B");
			SharedBroker.send(topic, "k", "C");
			SharedBroker.send(topic, "p", "P");
			SharedBroker.send(topic, "p", "Q");
			await().atMost(WAIT).untilAsserted(() -> assertThat(values(replies)).hasSize(4));
			assertThat(attempts.get(topic + "A")).hasValue(3);
			Map<String, List<String>> byKey = SharedBroker.readAll(replies)
				.stream()
				.collect(Collectors.groupingBy((r) -> new String(r.key(), StandardCharsets.UTF_8),
						Collectors.mapping((r) -> new String(r.value(), StandardCharsets.UTF_8), Collectors.toList())));
			assertThat(byKey).as("one reply per success, keyed by the request's key, in its key's order")
				.containsExactlyInAnyOrderEntriesOf(Map.of("k", List.of("re:A", "re:B", "re:C"), "p", List.of("re:Q")));
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(SharedBroker.readAll(Names.dlq(topic))).singleElement()
					.satisfies((dead) -> assertThat(new String(dead.value(), StandardCharsets.UTF_8)).isEqualTo("P")));
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
		}
	}

	@Test
	void aReplyingKafkaTemplateGetsItsReplyFromAMethodWithAnEmptySendToOnceItsRecordSucceeded() throws Exception {
		String topic = SharedBroker.newTopic(1);
		String replies = topic + ".requester";
		SharedBroker.createTopic(replies, 1, Map.of());
		try (ConfigurableApplicationContext context = TestApplication.start(RequestReplyApplication.class, topic,
				"kafka.resilience.retry.delays=1s", "kafka.resilience.retry.max-attempts=3")) {
			@SuppressWarnings("unchecked")
			ConcurrentKafkaListenerContainerFactory<String, String> factory = context
				.getBean(ConcurrentKafkaListenerContainerFactory.class);
			ConcurrentMessageListenerContainer<String, String> container = factory.createContainer(replies);
			container.getContainerProperties().setGroupId("requester-" + topic);
			@SuppressWarnings("unchecked")
			ReplyingKafkaTemplate<String, String, String> template = new ReplyingKafkaTemplate<>(
					context.getBean(ProducerFactory.class), container);
			template.setDefaultReplyTimeout(WAIT);
			template.start();
			try {
				assertThat(template.waitForAssignment(WAIT)).isTrue();
				// A fails twice: its reply comes from its third attempt, in stage 1
				RequestReplyFuture<String, String, String> a = template
					.sendAndReceive(new ProducerRecord<>(topic, "k", "A"));
				RequestReplyFuture<String, String, String> b = template
					.sendAndReceive(new ProducerRecord<>(topic, "k", "B"));
				ConsumerRecord<String, String> replyToA = a.get(WAIT.toSeconds(), TimeUnit.SECONDS);
				ConsumerRecord<String, String> replyToB = b.get(WAIT.toSeconds(), TimeUnit.SECONDS);
				assertThat(replyToA.value()).isEqualTo("re:A");
				assertThat(replyToB.value()).isEqualTo("re:B");
				assertThat(replyToA.offset()).as("B's reply comes after A's").isLessThan(replyToB.offset());
				assertThat(attempts.get(topic + "A")).hasValue(3);
			}
			finally {
				template.stop();
			}
		}
	}

	private static List<String> values(String topic) {
		return SharedBroker.readAll(topic).stream().map((r) -> new String(r.value(), StandardCharsets.UTF_8)).toList();
	}

	/**
	 * The attempt's outcome: {@code re:<value>}, or a failure as the value's script says.
	 */
	static String attempt(String topic, String value) {
		int attempt = attempts.computeIfAbsent(topic + value, (v) -> new AtomicInteger()).incrementAndGet();
		if (value.equals("P")) {
			throw new PermanentFailureException("P never succeeds");
		}
		if (value.equals("A") && attempt <= 2) {
			throw new IllegalStateException("attempt " + attempt + " of A fails");
		}
		return "re:" + value;
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(ValueListener.class)
	static class ValueApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(FutureListener.class)
	static class FutureApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(RequestReplyListener.class)
	static class RequestReplyApplication {

	}

	static class ValueListener {

		@OrderedRetryListener(id = "replying-${test.topic}", topics = "${test.topic}")
		@SendTo("${test.topic}.replies")
		String handle(String value, @Header(KafkaHeaders.RECEIVED_TOPIC) String topic) {
			return attempt(originalTopic(topic), value);
		}

	}

	static class FutureListener {

		@OrderedRetryListener(id = "replying-${test.topic}", topics = "${test.topic}")
		@SendTo("${test.topic}.replies")
		CompletableFuture<String> handle(String value, @Header(KafkaHeaders.RECEIVED_TOPIC) String topic) {
			return CompletableFuture.supplyAsync(() -> attempt(originalTopic(topic), value),
					CompletableFuture.delayedExecutor(10, TimeUnit.MILLISECONDS));
		}

	}

	static class RequestReplyListener {

		@OrderedRetryListener(id = "replying-${test.topic}", topics = "${test.topic}")
		@SendTo
		String handle(String value, @Header(KafkaHeaders.RECEIVED_TOPIC) String topic) {
			return attempt(originalTopic(topic), value);
		}

	}

	/**
	 * The main topic of a record read from it or from its ladder
	 * ({@code g-<topic>.<topic>.retry.1s}).
	 */
	static String originalTopic(String received) {
		return received.startsWith("g-") ? received.substring(received.indexOf('.') + 1, received.indexOf(".retry"))
				: received;
	}

}
