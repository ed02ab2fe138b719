package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A record whose handler is running when its partition is revoked is not handled again:
 * the revocation lets the run end (no new one starts) before it commits the partition, so
 * the next owner starts after the record. On the classic protocol's eager rebalance,
 * where the instance gives up every partition, and on the {@code consumer} protocol,
 * where it gives up those that move.
 */
@UsesSharedBroker
class RevocationTests {

	@AfterEach
	void reset() {
		SlowListener.reset();
	}

	@ParameterizedTest(name = "{0} protocol")
	@ValueSource(strings = { "classic", "consumer" })
	void aRecordWhoseHandlerRunsWhenItsPartitionIsRevokedIsHandledOnce(String protocol) {
		String topic = SharedBroker.newTopic(2);
		String[] properties = { "kafka.resilience.retry.delays=1s",
				"spring.kafka.consumer.properties.group.protocol=" + protocol };
		try (ConfigurableApplicationContext a = TestApplication.start(SlowApplication.class, topic,
				with(properties, "test.instance=a", "kafka.resilience.instance-id=a-" + topic))) {
			await().atMost(Duration.ofSeconds(60)).until(() -> ready(a, topic, 2));
			for (int partition = 0; partition < 2; partition++) {
				send(topic, partition, "k" + partition, "slow-" + partition);
				send(topic, partition, "k" + partition, "after-" + partition);
			}
			// each partition's first record runs on a, until the test lets it go
			await().atMost(Duration.ofSeconds(30)).until(() -> SlowListener.started.size() == 2);
			try (ConfigurableApplicationContext b = TestApplication.start(SlowApplication.class, topic,
					with(properties, "test.instance=b", "kafka.resilience.instance-id=b-" + topic))) {
				await().atMost(Duration.ofSeconds(60)).until(() -> SlowListener.revoking.getCount() == 0);
				SlowListener.release.countDown();
				await().atMost(Duration.ofSeconds(60))
					.until(() -> ready(b, topic, 1) && ready(a, topic, 1) && SlowListener.handled.size() >= 4);
				// b has read its partitions from their committed offsets, a its own again
				await().during(Duration.ofSeconds(2))
					.atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(SlowListener.handled).as("each record handled once")
						.containsExactlyInAnyOrder("a:slow-0", "a:slow-1", valueOn(a, b, topic, 0, "after-0"),
								valueOn(a, b, topic, 1, "after-1")));
			}
		}
	}

	/**
	 * Whether an instance holds {@code partitions} of the main topic, every barrier open.
	 */
	private static boolean ready(ConfigurableApplicationContext instance, String topic, int partitions) {
		ListenerRegistry listeners = instance.getBean(ListenerRegistry.class);
		RetryContainer container = listeners.container("slow-" + topic);
		return container != null && container.closedBarriers().isEmpty()
				&& container.assignment().stream().filter((tp) -> tp.topic().equals(topic)).count() == partitions;
	}

	/** The record as the owner of its partition handled it after the rebalance. */
	private static String valueOn(ConfigurableApplicationContext a, ConfigurableApplicationContext b, String topic,
			int partition, String value) {
		RetryContainer onB = b.getBean(ListenerRegistry.class).container("slow-" + topic);
		return (onB.assignment().contains(new TopicPartition(topic, partition)) ? "b:" : "a:") + value;
	}

	private static void send(String topic, int partition, String key, String value) {
		SharedBroker.send(new ProducerRecord<>(topic, partition, key.getBytes(StandardCharsets.UTF_8),
				value.getBytes(StandardCharsets.UTF_8)));
	}

	private static String[] with(String[] properties, String... more) {
		String[] all = new String[properties.length + more.length];
		System.arraycopy(properties, 0, all, 0, properties.length);
		System.arraycopy(more, 0, all, properties.length, more.length);
		return all;
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(SlowListener.class)
	static class SlowApplication {

		/**
		 * Tells the test when instance a begins to give up a partition of the main topic.
		 */
		@Bean
		ConsumerAwareRebalanceListener revocationWatch(@Value("${test.topic}") String topic,
				@Value("${test.instance}") String instance) {
			return new ConsumerAwareRebalanceListener() {

				@Override
				public void onPartitionsRevokedBeforeCommit(Consumer<?, ?> consumer,
						Collection<TopicPartition> partitions) {
					if (instance.equals("a") && partitions.stream().anyMatch((tp) -> tp.topic().equals(topic))) {
						SlowListener.revoking.countDown();
					}
				}

			};
		}

	}

	static class SlowListener {

		static final List<String> started = new CopyOnWriteArrayList<>();

		static final List<String> handled = new CopyOnWriteArrayList<>();

		static volatile CountDownLatch revoking = new CountDownLatch(1);

		static volatile CountDownLatch release = new CountDownLatch(1);

		private final String instance;

		SlowListener(@Value("${test.instance}") String instance) {
			this.instance = instance;
		}

		@OrderedRetryListener(id = "slow-${test.topic}", topics = "${test.topic}")
		void handle(ConsumerRecord<String, String> record) throws InterruptedException {
			if (record.value().startsWith("slow") && this.instance.equals("a")) {
				started.add(record.value());
				// the handler's work, which lasts until the rebalance has begun
				assertThat(release.await(60, TimeUnit.SECONDS)).isTrue();
			}
			handled.add(this.instance + ":" + record.value());
		}

		static void reset() {
			started.clear();
			handled.clear();
			revoking = new CountDownLatch(1);
			release = new CountDownLatch(1);
		}

	}

}
