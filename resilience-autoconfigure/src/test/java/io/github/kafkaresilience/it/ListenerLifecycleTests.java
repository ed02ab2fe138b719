package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.context.event.EventListener;
import org.springframework.kafka.event.ConsumerPausedEvent;
import org.springframework.kafka.event.ConsumerResumedEvent;
import org.springframework.kafka.event.ConsumerStartedEvent;
import org.springframework.kafka.event.ConsumerStoppedEvent;
import org.springframework.kafka.event.KafkaEvent;
import org.springframework.kafka.event.ListenerContainerIdleEvent;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * A listener is paused and resumed by its id while its locks are live: paused, it takes
 * no new record and runs no retry, its locks stay, and it stays in its group; resumed,
 * every key goes on in order. spring-kafka's container events are published for it.
 */
@UsesSharedBroker
class ListenerLifecycleTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	static final Map<String, List<String>> handled = new ConcurrentHashMap<>();

	static final Map<String, List<KafkaEvent>> events = new ConcurrentHashMap<>();

	@Test
	void aListenerPausedByIdWithLiveLocksRunsNothingUntilResumedAndThenKeepsEveryKeyInOrder() {
		String topic = SharedBroker.newTopic(1);
		String id = "life-" + topic;
		try (ConfigurableApplicationContext context = TestApplication.start(LifecycleApplication.class, topic,
				"kafka.resilience.retry.delays=2s", "spring.kafka.listener.idle-event-interval=1s")) {
			ListenerRegistry registry = context.getBean(ListenerRegistry.class);
			SharedBroker.send(topic, "locked", "L1-FAILS-ONCE");
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 1);
			assertThat(handled(topic)).containsExactly("locked=L1-FAILS-ONCE");

			registry.pause(id);
			assertThat(registry.isPauseRequested(id)).isTrue();
			assertThat(registry.isRunning(id)).isTrue();
			// one event for each of its consumers: of the main topic, and of the retry
			// topic
			await().atMost(WAIT).until(() -> pausedPartitions(topic).size() == 2);
			assertThat(eventsOf(topic, ConsumerPausedEvent.class)).hasSize(2);
			SharedBroker.send(topic, "free", "F1");
			SharedBroker.send(topic, "locked", "L2");
			// the retry of L1 is due after 2 s: for twice that, nothing runs and the lock
			// stays
			await().during(Duration.ofSeconds(4))
				.atMost(WAIT)
				.until(() -> handled(topic).size() == 1 && liveLocks(context, topic) == 1 && registry.isRunning(id));

			registry.resume(id);
			assertThat(registry.isPauseRequested(id)).isFalse();
			await().atMost(WAIT).until(() -> handled(topic).size() == 4 && liveLocks(context, topic) == 0);
			assertThat(handled(topic)).filteredOn((entry) -> entry.startsWith("locked="))
				.containsExactly("locked=L1-FAILS-ONCE", "locked=L1-FAILS-ONCE", "locked=L2");
			assertThat(handled(topic)).contains("free=F1");
			assertThat(eventsOf(topic, ConsumerResumedEvent.class)).hasSize(2);
			assertThat(eventsOf(topic, ConsumerStartedEvent.class)).hasSize(2);
			await().atMost(WAIT).until(() -> !eventsOf(topic, ListenerContainerIdleEvent.class).isEmpty());
			ListenerContainerIdleEvent idle = (ListenerContainerIdleEvent) eventsOf(topic,
					ListenerContainerIdleEvent.class)
				.get(0);
			assertThat(idle.getListenerId()).isEqualTo(id);
			assertThat(idle.getIdleTime()).isGreaterThanOrEqualTo(1000);

			assertThatIllegalArgumentException().isThrownBy(() -> registry.pause("no-such-listener"))
				.withMessageContaining("no-such-listener")
				.withMessageContaining(id);
		}
		assertThat(eventsOf(topic, ConsumerStoppedEvent.class)).hasSize(2);
	}

	/** The partitions the paused events named. */
	private static List<String> pausedPartitions(String topic) {
		return eventsOf(topic, ConsumerPausedEvent.class).stream()
			.flatMap((event) -> ((ConsumerPausedEvent) event).getPartitions().stream())
			.map(Object::toString)
			.sorted()
			.toList();
	}

	@Test
	void aListenerWhoseAutoStartupIsFalseWaitsForItsStartById() {
		String topic = SharedBroker.newTopic(1);
		String id = "life-" + topic;
		try (ConfigurableApplicationContext context = TestApplication.start(LifecycleApplication.class, topic,
				"kafka.resilience.retry.delays=1s", "test.auto-startup=false")) {
			ListenerRegistry registry = context.getBean(ListenerRegistry.class);
			assertThat(registry.isRunning()).isTrue();
			assertThat(registry.isRunning(id)).isFalse();
			SharedBroker.send(topic, "k", "V1");
			await().during(Duration.ofSeconds(2)).atMost(WAIT).until(() -> handled(topic).isEmpty());
			registry.start(id);
			await().atMost(WAIT).until(() -> handled(topic).equals(List.of("k=V1")));
			assertThat(registry.isRunning(id)).isTrue();
			registry.stop(id);
			assertThat(registry.isRunning(id)).isFalse();
		}
	}

	private static List<String> handled(String topic) {
		return handled.getOrDefault(topic, List.of());
	}

	private static List<KafkaEvent> eventsOf(String topic, Class<? extends KafkaEvent> type) {
		return events.getOrDefault(topic, List.of()).stream().filter(type::isInstance).toList();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(LifecycleListener.class)
	static class LifecycleApplication {

		@EventListener
		void on(KafkaEvent event) {
			if (event.getSource() instanceof RetryContainer container) {
				String topic = container.id().substring("life-".length());
				events.computeIfAbsent(topic, (t) -> new CopyOnWriteArrayList<>()).add(event);
			}
		}

	}

	static class LifecycleListener {

		private final Map<String, Integer> attempts = new ConcurrentHashMap<>();

		@OrderedRetryListener(id = "life-${test.topic}", topics = "${test.topic}",
				autoStartup = "${test.auto-startup:true}")
		void handle(ConsumerRecord<String, String> record) {
			String original = record.headers().lastHeader("original.topic") != null
					? new String(record.headers().lastHeader("original.topic").value()) : record.topic();
			handled.computeIfAbsent(original, (t) -> new CopyOnWriteArrayList<>())
				.add(record.key() + "=" + record.value());
			if (record.value().endsWith("FAILS-ONCE") && this.attempts.merge(record.value(), 1, Integer::sum) == 1) {
				throw new IllegalStateException("first attempt of " + record.value() + " fails");
			}
		}

	}

}
