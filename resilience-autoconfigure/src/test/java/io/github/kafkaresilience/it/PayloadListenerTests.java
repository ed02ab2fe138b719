package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.kafkaresilience.OrderedRetryListener;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A listener method that takes just the value, and records without a key.
 */
@UsesSharedBroker
class PayloadListenerTests {

	static final List<String> handled = new CopyOnWriteArrayList<>();

	static final AtomicInteger failuresLeft = new AtomicInteger();

	@Test
	void aMethodTakingTheValueIsRetriedAndRecordsWithoutAKeyAreRetriedWithoutALock() {
		String topic = SharedBroker.newTopic(3);
		failuresLeft.set(1);
		try (ConfigurableApplicationContext context = TestApplication.start(PayloadApplication.class, topic,
				"kafka.resilience.retry.delays=1s")) {
			SharedBroker.send(topic, (byte[]) null, "fails-once".getBytes());
			SharedBroker.send(topic, (byte[]) null, "plain".getBytes());
			await().atMost(Duration.ofSeconds(60))
				.untilAsserted(() -> assertThat(handled).contains("plain", "fails-once"));
			assertThat(handled).containsSubsequence("fails-once@1", "fails-once");
			assertThat(liveLocks(context, topic)).isZero();
			assertThat(SharedBroker.readAll(Names.locks(topic))).as("records without a key take no lock").isEmpty();
			assertThat(SharedBroker.readAll(Names.retry(topic, "1s"))).singleElement()
				.satisfies((record) -> assertThat(OrderedRetryLadderTests.headers(record))
					.containsEntry("retry.count", "1")
					.doesNotContainKey("lock.id"));
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(PayloadListener.class)
	static class PayloadApplication {

	}

	static class PayloadListener {

		@OrderedRetryListener(id = "payload-${test.topic}", topics = "${test.topic}")
		void handle(String value) {
			if (value.equals("fails-once") && failuresLeft.getAndDecrement() > 0) {
				handled.add(value + "@1");
				throw new IllegalStateException("first attempt fails");
			}
			handled.add(value);
		}

	}

}
