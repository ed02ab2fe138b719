package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicReference;

import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The meters an operator watches, read from a registry that also keeps what Prometheus
 * would scrape, while records fail on a real broker: lock gauges and stage lag rise and
 * go back to 0, every dead letter is counted by reason, and the dashboard's and alert
 * rules' queries name meters and labels that were registered.
 */
@UsesSharedBroker
class MetersTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	@Test
	void duringAFailureScenarioLocksAndStageLagRiseAndDrainAndEveryDeadLetterIsCountedByReason() {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic)
			.failTransiently("A", Integer.MAX_VALUE)
			.failTransiently("T", 1)
			.failPermanently("P");
		CompositeMeterRegistry meters = MonitoringQueries.registry();
		try (ConfigurableApplicationContext context = TestApplication.start(topic,
				"kafka.resilience.retry.delays=2s,3s", "kafka.resilience.retry.max-attempts=3",
				"spring.kafka.consumer.value-deserializer=" + StrictStringDeserializer.class.getName(),
				"test.autostartup=false")) {
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(meters));
			String listener = "it-" + topic;
			// started once the meters are bound: the meters of its first rebalance and
			// barriers are registered too
			context.getBean(ListenerRegistry.class).start(listener);
			String stage1 = Names.retry(topic, "2s");
			await().atMost(WAIT)
				.until(() -> sum(meters.find("kafka.resilience.consumer.lag").tag("topic", topic).gauges()) == 0);

			SharedBroker.send(topic, "k", "A"); // fails on every attempt: exhausted after
												// 3
			SharedBroker.send(topic, "k", "B"); // follows A through the stages
			SharedBroker.send(topic, "t", "T"); // fails once, then succeeds in stage 1
			SharedBroker.send(topic, "p", "P"); // fails permanently
			SharedBroker.send(topic, "q", "POISON-1"); // cannot be deserialized

			AtomicReference<Double> mostLocks = new AtomicReference<>(0.0);
			AtomicReference<Double> oldestAge = new AtomicReference<>(0.0);
			await().atMost(WAIT).untilAsserted(() -> {
				double locks = gauge(meters, "kafka.resilience.locks.active", topic);
				mostLocks.accumulateAndGet(locks, Math::max);
				oldestAge.accumulateAndGet(gauge(meters, "kafka.resilience.locks.oldest.age", topic), Math::max);
				assertThat(locks).isGreaterThanOrEqualTo(3); // A, its follower B, and T
				assertThat(gauge(meters, "kafka.resilience.locks.keys", topic)).isEqualTo(2);
			});
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(
						sum(meters.find("kafka.resilience.consumer.lag").tag("topic", stage1).gauges()))
					.as("retries waiting in stage 1")
					.isGreaterThanOrEqualTo(1));

			await().atMost(WAIT).untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("B"));
			await().atMost(WAIT).untilAsserted(() -> {
				assertThat(gauge(meters, "kafka.resilience.locks.active", topic)).isZero();
				assertThat(gauge(meters, "kafka.resilience.locks.keys", topic)).isZero();
				assertThat(sum(meters.find("kafka.resilience.consumer.lag").tag("listener", listener).gauges()))
					.as("every partition of the main topic and the stages drained")
					.isZero();
			});
			assertThat(meters.find("kafka.resilience.consumer.lag").tag("topic", Names.retry(topic, "3s")).gauges())
				.as("one gauge per assigned partition of each stage")
				.hasSize(3);

			assertThat(deadLetters(meters, topic, "exhausted", "transient")).isEqualTo(1);
			assertThat(deadLetters(meters, topic, "permanent", "permanent")).isEqualTo(1);
			assertThat(deadLetters(meters, topic, "poison", "permanent")).isEqualTo(1);
			assertThat(meters.find("kafka.resilience.dlq.records").counters()).hasSize(3);
			assertThat(SharedBroker.readAll(Names.dlq(topic))).hasSize(3);

			String allAttempts = meters.find("kafka.resilience.attempts")
				.counters()
				.stream()
				.map((c) -> c.getId().getTag("stage") + "/" + c.getId().getTag("outcome") + "=" + c.count())
				.sorted()
				.toList()
				.toString();
			assertThat(attempts(meters, topic, "0", "failure")).as(allAttempts).isEqualTo(3); // A,
																								// T,
																								// P
			assertThat(attempts(meters, topic, "0", "poison")).as(allAttempts).isEqualTo(1);
			assertThat(attempts(meters, topic, "1", "success")).as(allAttempts).isEqualTo(1); // T
			assertThat(attempts(meters, topic, "1", "failure")).as(allAttempts).isEqualTo(1); // A
			assertThat(attempts(meters, topic, "2", "failure")).as(allAttempts).isEqualTo(1); // A,
																								// exhausted
			assertThat(attempts(meters, topic, "2", "success")).as(allAttempts).isEqualTo(1); // B,
																								// which
																								// followed
																								// A
																								// there
			Timer handler = meters.find("kafka.resilience.handler").tag("stage", "2").tag("outcome", "success").timer();
			assertThat(handler).isNotNull();
			assertThat(handler.count()).isEqualTo(1);
			assertThat(meters.find("kafka.resilience.followers.forwarded").tag("topic", topic).counter().count())
				.isEqualTo(1);
			assertThat(meters.find("kafka.resilience.consumer.poll.interval").tag("listener", listener).timer().count())
				.isPositive();
			assertThat(mostLocks.get()).isGreaterThanOrEqualTo(3);
			assertThat(oldestAge.get()).as("a held key's time at its stage").isPositive();
			assertThat(gauge(meters, "kafka.resilience.locks.oldest.age", topic)).as("no key held").isZero();
			// every meter the dashboard and the alert rules query, but the reaper's and
			// outage mode's
			// (registered when they act: LockReaperTests, OutageHoldTests), with its
			// labels
			assertThat(MonitoringQueries.assertScraped(MonitoringQueries.scrape(meters),
					(metric) -> !metric.startsWith("kafka_resilience_locks_reaped")
							&& !metric.startsWith("kafka_resilience_outage_")))
				.contains("kafka_resilience_dlq_records_total", "kafka_resilience_locks_oldest_age_seconds",
						"kafka_resilience_consumer_lag", "kafka_resilience_barrier_wait_seconds_max");
		}
	}

	private static double gauge(MeterRegistry meters, String name, String topic) {
		Gauge gauge = meters.find(name).tag("topic", topic).gauge();
		assertThat(gauge).as(name).isNotNull();
		return gauge.value();
	}

	private static double sum(Collection<Gauge> gauges) {
		return gauges.isEmpty() ? Double.NaN : gauges.stream().mapToDouble(Gauge::value).sum();
	}

	private static double deadLetters(MeterRegistry meters, String topic, String reason, String errorClass) {
		return count(meters, "kafka.resilience.dlq.records", "topic", topic, "reason", reason, "error.class",
				errorClass);
	}

	private static double attempts(MeterRegistry meters, String topic, String stage, String outcome) {
		return count(meters, "kafka.resilience.attempts", "topic", topic, "stage", stage, "outcome", outcome);
	}

	/**
	 * The count of the counter with these tags, 0 when nothing was counted (it is not
	 * registered yet).
	 */
	private static double count(MeterRegistry meters, String name, String... tags) {
		Counter counter = meters.find(name).tags(tags).counter();
		return (counter != null) ? counter.count() : 0;
	}

}
