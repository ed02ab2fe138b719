package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.kafkaresilience.internal.ladder.FaultInjection;
import io.github.kafkaresilience.internal.listener.OrderedRetryComponentFactory;
import io.github.kafkaresilience.internal.ladder.LadderPublisher;
import io.github.kafkaresilience.internal.support.ProducerClients;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.header.Headers;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.core.ProducerFactory;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Dual write in {@code compensate} mode: when the retry publish fails after the lock was
 * written, the lock is released and the record delivered again; when putting the lock
 * back fails too, the redelivered record finishes the move. Either way nothing is lost,
 * nothing stays locked, and the key keeps its order.
 */
@UsesSharedBroker
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
			await().atMost(Duration.ofSeconds(60))
				.untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("A", "B"));
			assertThat(failingPublishes.get()).as("the injected publish failure happened").isLessThanOrEqualTo(0);
			// A ran on the main topic twice: once before the failed publish, once after
			// its redelivery
			assertThat(
					script.journal().stream().filter((a) -> a.value().equals("A")).map(Script.Attempt::topic).toList())
				.containsExactly(topic, topic, Names.retry(topic, "1s"));
			await().atMost(Duration.ofSeconds(30)).until(() -> liveLocks(context, topic) == 0);
			List<ConsumerRecord<byte[], byte[]>> lockRecords = SharedBroker.readAll(Names.locks(topic));
			assertThat(lockRecords.stream().filter((r) -> r.value() == null).count())
				.as("every lock written was released, the compensated one included")
				.isEqualTo(lockRecords.stream().map((r) -> new String(r.key())).distinct().count());
		}
	}

	@Test
	void aMoveWhoseCompensationFailsTooIsFinishedByTheRedeliveryWithoutRunningTheHandlerAgain() {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic).failTransiently("A", 1);
		failingMoves.set(1);
		failingCompensations.set(1);
		try (ConfigurableApplicationContext context = TestApplication.start(FailingCompensationApplication.class, topic,
				"kafka.resilience.retry.delays=1s")) {
			SharedBroker.send(topic, "k", "A");
			SharedBroker.send(topic, "k", "B");
			await().atMost(Duration.ofSeconds(60))
				.untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("A", "B"));
			assertThat(failingMoves.get()).as("the injected publish failure happened").isLessThanOrEqualTo(0);
			assertThat(failingCompensations.get()).as("the injected compensation failure happened")
				.isLessThanOrEqualTo(0);
			// the lock stayed in flight; A's redelivery finished the move instead of
			// running A again
			assertThat(
					script.journal().stream().filter((a) -> a.value().equals("A")).map(Script.Attempt::topic).toList())
				.containsExactly(topic, Names.retry(topic, "1s"));
			await().atMost(Duration.ofSeconds(30)).until(() -> liveLocks(context, topic) == 0);
			List<ConsumerRecord<byte[], byte[]>> lockRecords = SharedBroker.readAll(Names.locks(topic));
			assertThat(lockRecords.stream().map((r) -> new String(r.key())).distinct().count())
				.as("one lock for A, one for its follower B: the redelivery made no second lock for A")
				.isEqualTo(2);
		}
	}

	static final AtomicInteger failingMoves = new AtomicInteger();

	static final AtomicInteger failingCompensations = new AtomicInteger();

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TestApplication.ScriptedListener.class)
	static class FailingCompensationApplication {

		/**
		 * Fails A's first move after its lock write, then the undo of that lock write.
		 */
		@Bean
		OrderedRetryComponentFactory faultInjection() {
			return Faults.injecting((point, record) -> {
				if (!"A".equals(new String(record.value()))) {
					return;
				}
				if (point == FaultInjection.Point.LOCK_WRITTEN && failingMoves.getAndDecrement() > 0) {
					throw new KafkaException("injected: publish of A failed after its lock write");
				}
				if (point == FaultInjection.Point.COMPENSATING && failingCompensations.getAndDecrement() > 0) {
					throw new KafkaException("injected: the lock of A could not be put back");
				}
			});
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TestApplication.ScriptedListener.class)
	static class FaultyApplication {

		/**
		 * A publisher whose first retry publishes fail, as when the broker rejects them.
		 */
		@Bean
		LadderPublisher ladderPublisher(ProducerFactory<?, ?> producerFactory) {
			return new LadderPublisher(new ProducerClients(producerFactory, "faulty"), "faulty",
					Duration.ofSeconds(30)) {

				@Override
				public CompletableFuture<Long> sending(String topic, int partition, byte[] key, byte[] value,
						Headers headers) {
					if (topic.contains(".retry.") && failingPublishes.getAndDecrement() > 0) {
						return CompletableFuture
							.failedFuture(new KafkaException("injected: publish to " + topic + " failed"));
					}
					return super.sending(topic, partition, key, value, headers);
				}

			};
		}

	}

}
