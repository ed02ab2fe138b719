package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.github.kafkaresilience.OrderedRetryListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A handler that runs far longer than {@code max.poll.interval.ms} does not make the
 * consumer leave its group: handlers run on worker threads and the poll loop keeps
 * polling. Nothing is revoked, the slow record runs once, and the other keys flow
 * meanwhile.
 */
@UsesSharedBroker
class SlowHandlerTests {

	private static final Log logger = LogFactory.getLog(SlowHandlerTests.class);

	private static final Duration SLOW = Duration.ofSeconds(12);

	@Test
	void aHandlerRunningThreeTimesMaxPollIntervalKeepsTheConsumerInItsGroup() {
		String topic = SharedBroker.newTopic(1);
		Handled handled = new Handled();
		SlowListener.handled = handled;
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		try (ConfigurableApplicationContext context = TestApplication.start(SlowApplication.class, topic,
				"spring.kafka.consumer.properties.max.poll.interval.ms=4000",
				"spring.kafka.consumer.properties.session.timeout.ms=6000",
				"spring.kafka.consumer.properties.heartbeat.interval.ms=1000")) {
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(meters));
			String listener = "slow-" + topic;
			await().atMost(Duration.ofSeconds(30))
				.until(() -> meters.find("kafka.resilience.consumer.poll.interval")
					.tag("listener", listener)
					.timer() != null);

			SharedBroker.send(topic, "slow", "slow");
			for (int i = 0; i < 20; i++) {
				SharedBroker.send(topic, "k-" + (i % 5), "v-" + i);
			}

			await().atMost(Duration.ofSeconds(60)).until(() -> handled.finished.size() == 21);
			await().atMost(Duration.ofSeconds(30)).until(() -> SharedBroker.committed("g-" + topic, topic, 0) == 21);

			assertThat(handled.started.stream().filter("slow"::equals)).as("the slow record ran once").hasSize(1);
			assertThat(handled.finished.indexOf("slow")).as("every other key was handled while it ran").isEqualTo(20);
			assertThat(count(meters, listener, "revoked") + count(meters, listener, "lost")).isZero();
			Timer polls = meters.find("kafka.resilience.consumer.poll.interval").tag("listener", listener).timer();
			logger.info("While a handler ran " + SLOW.toSeconds() + " s with max.poll.interval.ms=4000, the longest gap"
					+ " between polls was " + polls.max(TimeUnit.MILLISECONDS) + " ms over " + polls.count()
					+ " polls");
		}
	}

	private static double count(SimpleMeterRegistry meters, String listener, String kind) {
		return meters.find("kafka.resilience.consumer.rebalances")
			.tag("listener", listener)
			.tag("kind", kind)
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum();
	}

	static final class Handled {

		final List<String> started = new CopyOnWriteArrayList<>();

		final List<String> finished = new CopyOnWriteArrayList<>();

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(SlowListener.class)
	static class SlowApplication {

	}

	static class SlowListener {

		static volatile Handled handled;

		@OrderedRetryListener(id = "slow-${test.topic}", topics = "${test.topic}")
		void handle(ConsumerRecord<String, String> record) {
			handled.started.add(record.value());
			if (record.value().equals("slow")) {
				LockSupport.parkNanos(SLOW.toNanos()); // the handler's own slow work, as
														// a test double
			}
			handled.finished.add(record.value());
		}

	}

}
