package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.kafkaresilience.autoconfigure.ResilienceProperties;
import io.github.kafkaresilience.ladder.RetryLadder;
import io.github.kafkaresilience.ladder.TopicProvisioner;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.header.Headers;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.core.KafkaAdmin;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Dual write in {@code compensate} mode: when the retry publish fails after the lock was
 * written, the lock is released and the record delivered again; nothing is lost, nothing stays
 * locked, and the key keeps its order.
 */
class DualWriteCompensationTests {

	static final AtomicInteger failingPublishes = new AtomicInteger();

	@Test
	void aRetryPublishFailingAfterTheLockWriteLeavesNoZombieAndTheKeyCompletesInOrder() {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic).failTransiently("A", 2);
		failingPublishes.set(1);
		try (ConfigurableApplicationContext context = TestApplication.start(FaultyApplication.class, topic,
				"kafka.resilience.retry.delays=1s")) {
			SharedBroker.send(topic, "k", "A");
			SharedBroker.send(topic, "k", "B");
			await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("A", "B"));
			assertThat(failingPublishes.get()).as("the injected publish failure happened").isLessThanOrEqualTo(0);
			// A ran on the main topic twice: once before the failed publish, once after its redelivery
			assertThat(script.journal().stream().filter((a) -> a.value().equals("A")).map(Script.Attempt::topic).toList())
				.containsExactly(topic, topic, topic + ".retry.1s");
			await().atMost(Duration.ofSeconds(30)).until(() -> liveLocks(context, topic) == 0);
			List<ConsumerRecord<byte[], byte[]>> lockRecords = SharedBroker.readAll(topic + ".locks");
			assertThat(lockRecords.stream().filter((r) -> r.value() == null).count())
				.as("every lock written was released, the compensated one included")
				.isEqualTo(lockRecords.stream().map((r) -> new String(r.key())).distinct().count());
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TestApplication.ScriptedListener.class)
	static class FaultyApplication {

		/** A ladder whose first retry publishes fail, as when the broker rejects them. */
		@Bean
		RetryLadder retryLadder(ResilienceProperties properties, KafkaAdmin kafkaAdmin,
				org.springframework.kafka.core.ProducerFactory<?, ?> producerFactory) {
			ResilienceProperties.Topics topics = properties.getTopics();
			TopicProvisioner provisioner = new TopicProvisioner(kafkaAdmin.getConfigurationProperties(),
					new TopicProvisioner.Settings(true, (short) -1, topics.getRetryRetention(), topics.getDlqRetention(),
							topics.getLockSegment(), topics.getLockDeleteRetention()));
			return new RetryLadder(RetryLadder.Naming.defaults(), provisioner, producerFactory.getConfigurationProperties(),
					"faulty", Duration.ofSeconds(30)) {

				@Override
				public long publish(String topic, int partition, byte[] key, byte[] value, Headers headers) {
					if (topic.contains(".retry.") && failingPublishes.getAndDecrement() > 0) {
						throw new KafkaException("injected: publish to " + topic + " failed");
					}
					return super.publish(topic, partition, key, value, headers);
				}

			};
		}

	}

}
