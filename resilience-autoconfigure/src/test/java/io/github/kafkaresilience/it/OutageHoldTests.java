package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.internal.actuate.KafkaResilienceEndpoint;
import io.github.kafkaresilience.internal.actuate.ResilienceHealthIndicator;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.outage.OutageBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Outage mode on a real broker: when every key fails, the listener holds its records
 * instead of moving them into the ladder, and resumes once a probe succeeds; failures of
 * some keys never make it hold.
 */
@UsesSharedBroker
class OutageHoldTests {

	private static final Log logger = LogFactory.getLog(OutageHoldTests.class);

	/**
	 * Probes every 200 ms to 1 s, so that the test does not wait out the defaults (1 s to
	 * 30 s).
	 */
	private static final String[] FAST_PROBES = { "kafka.resilience.outage.enabled=true",
			"kafka.resilience.outage.probe-interval=200ms", "kafka.resilience.outage.max-probe-interval=1s" };

	/**
	 * From the probe that succeeds to the first record the test sees handled: the probe's
	 * own run, or the poll that brings the next record when the probe ran a retry.
	 */
	private static final Duration PROBE_MARGIN = Duration.ofMillis(1500);

	@AfterEach
	void reset() {
		OutageListener.failing = (record) -> false;
		OutageListener.handled.clear();
		OutageListener.attempts.set(0);
		OutageListener.workMillis = 0;
		OutageListener.watched = null;
		OutageListener.running.set(0);
		OutageListener.callsWhileRamping.set(0);
		OutageListener.mostAtOnceWhileRamping.set(0);
		OutageListener.mostAtOnceAfterRamp.set(0);
	}

	/**
	 * With outage mode's defaults (the test's application turns it on, nothing more):
	 * however long the outage, the listener notices the return within its longest pause
	 * between probes, which the defaults make one second.
	 */
	@Test
	void anOutageOfEveryKeyLongerThanTheLadderHoldsInsteadOfMovingAndResumesWithinAProbe() {
		String topic = SharedBroker.newTopic(2);
		OutageListener.failing = (record) -> true;
		try (ConfigurableApplicationContext context = TestApplication.start(OutageApplication.class, topic,
				FAST_PROBES[0], "management.endpoints.web.exposure.include=kafkaresilience")) {
			RetryContainer container = container(context, topic);
			CompositeMeterRegistry meters = MonitoringQueries.registry();
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(meters));
			String listener = "outage-" + topic;
			Map<String, List<String>> sent;
			SteadySender sender = new SteadySender(topic, 20, SteadySender.pace(200), "ok");
			try {
				await().atMost(Duration.ofSeconds(30)).until(() -> container.outageBreaker().isOpen());
				int sentAtOpen = sender.sent().size();
				logger.info("The breaker opened after " + OutageListener.attempts.get() + " failed attempts and "
						+ sentAtOpen + " records sent: " + container.outageBreaker().reason());

				// longer than the whole ladder (1 s + 2 s), while records keep coming:
				// none sent after the
				// breaker opened enters the ladder, none that failed before moves
				// further, none is dead-lettered
				await().during(Duration.ofSeconds(5))
					.atMost(Duration.ofSeconds(10))
					.until(() -> staged(topic, "2s") == 0 && SharedBroker.readAll(Names.dlq(topic)).isEmpty());
				Set<String> sentBefore = sender.sent()
					.subList(0, sentAtOpen)
					.stream()
					.map((record) -> record[1])
					.collect(Collectors.toSet());
				assertThat(SharedBroker.readAll(Names.retry(topic, "1s")))
					.as("only records sent before it opened are in the ladder")
					.allSatisfy((record) -> assertThat(sentBefore)
						.contains(new String(record.value(), StandardCharsets.UTF_8)));
				assertThat(container.outageBreaker().isOpen()).isTrue();
				assertThat(OutageListener.handled).isEmpty();
				assertThat(container.heldRecords()).as("records held, not moved").isPositive();
				assertThat(SharedBroker.committed(Names.group(topic), topic, 0)).as("no commit past a held record")
					.isLessThanOrEqualTo(0);
				assertThat(SharedBroker.committed(Names.group(topic), topic, 1)).isLessThanOrEqualTo(0);
				assertThat(meters.get("kafka.resilience.outage.holding").tag("listener", listener).gauge().value())
					.isOne();
				assertThat(meters.get("kafka.resilience.outage.held").tag("listener", listener).gauge().value())
					.isEqualTo(container.heldRecords());
				assertThat(meters.get("kafka.resilience.outage.opened")
					.tag("listener", listener)
					.functionCounter()
					.count()).isOne();
				// the dashboard's and the alert rules' queries of outage mode name what
				// it registered
				assertThat(MonitoringQueries.assertScraped(MonitoringQueries.scrape(meters),
						(metric) -> metric.startsWith("kafka_resilience_outage_")))
					.isNotEmpty();
				Health health = context.getBean(ResilienceHealthIndicator.class).health(true);
				assertThat(health.getStatus()).as("a restart would not bring the dependency back").isEqualTo(Status.UP);
				assertThat(health.getDetails().get("listeners")).asString()
					.contains("holding", "failed or were held behind a failure", "503 Service Unavailable");
				assertThat(health.getDetails().get("warnings")).asString().contains("holds its records since");
				KafkaResilienceEndpoint.HoldingDescriptor holding = context.getBean(KafkaResilienceEndpoint.class)
					.resilience()
					.listeners()
					.get(0)
					.holding();
				assertThat(holding).isNotNull();
				assertThat(holding.reason()).contains("95 %");
				logger.info("While holding, " + (sender.sent().size() - sentAtOpen) + " records were sent and "
						+ ladderWrites(topic) + " ladder records written in all");
			}
			finally {
				sender.close();
			}
			sent = sender.sentByKey();
			long recovered = System.nanoTime();
			OutageListener.failing = (record) -> false;
			int total = sent.values().stream().mapToInt(List::size).sum();
			await().atMost(Duration.ofSeconds(60)).until(() -> OutageListener.handled.size() >= total);
			long firstAfter = OutageListener.firstHandledNanos.get() - recovered;
			logger.info("After the outage ended, the first record was handled in " + firstAfter / 1_000_000 + " ms");
			Duration longestPause = container.outageBreaker().settings().maxProbeInterval();
			assertThat(Duration.ofNanos(firstAfter)).as("within the longest pause between probes and a poll's margin")
				.isLessThan(longestPause.plus(PROBE_MARGIN));
			assertThat(longestPause).as("the defaults probe every second, however long the outage")
				.isEqualTo(Duration.ofSeconds(1));
			assertThat(container.outageBreaker().isOpen()).isFalse();
			assertThat(meters.get("kafka.resilience.outage.holding").tag("listener", listener).gauge().value())
				.isZero();
			assertThat(context.getBean(KafkaResilienceEndpoint.class).resilience().listeners().get(0).holding())
				.isNull();
			assertThat(handledByKey()).as("every record handled once, in order per key").isEqualTo(sent);
			assertThat(SharedBroker.readAll(Names.dlq(topic))).as("nothing dead-lettered").isEmpty();
			await().atMost(Duration.ofSeconds(10))
				.until(() -> OrderedRetryIntegrationTests.liveLocks(context, topic) == 0);
			assertThat(staged(topic, "2s")).as("no record was retried: none moved to the second stage").isZero();
		}
	}

	/**
	 * The ramp on the way back: once the probe succeeds, the held records run on half the
	 * listener's workers until {@code ramp-up} is over, then on all of them.
	 */
	@Test
	void afterAnOutageTheListenerRunsOnHalfItsWorkersUntilTheRampUpIsOver() {
		String topic = SharedBroker.newTopic(2);
		OutageListener.failing = (record) -> true;
		try (ConfigurableApplicationContext context = TestApplication.start(OutageApplication.class, topic,
				FAST_PROBES[0], FAST_PROBES[1], "kafka.resilience.consumer.concurrency=4",
				"kafka.resilience.outage.ramp-up=2s")) {
			RetryContainer container = container(context, topic);
			List<String[]> records = records(40, 10, 0);
			SharedBroker.sendAll(topic, records);
			await().atMost(Duration.ofSeconds(30)).until(() -> container.outageBreaker().isOpen());
			await().atMost(Duration.ofSeconds(30)).until(() -> container.heldRecords() > 0);
			assertThat(container.isRampingUp()).as("no ramp while holding").isFalse();
			OutageListener.workMillis = 50;
			OutageListener.watched = container;
			OutageListener.failing = (record) -> false;
			await().atMost(Duration.ofSeconds(60)).until(() -> OutageListener.handled.size() == records.size());
			assertThat(OutageListener.callsWhileRamping.get()).as("records ran during the ramp").isPositive();
			assertThat(OutageListener.mostAtOnceWhileRamping.get()).as("handler calls at once during the ramp")
				.isBetween(1, 2);
			assertThat(OutageListener.mostAtOnceAfterRamp.get()).as("handler calls at once after it").isGreaterThan(2);
			assertInOrderPerKey(records, List.of());
			assertThat(SharedBroker.readAll(Names.dlq(topic))).as("nothing dead-lettered").isEmpty();
		}
	}

	@Test
	void aTenthOfTheKeysFailingForGoodNeverMakesTheListenerHold() {
		String topic = SharedBroker.newTopic(2);
		OutageListener.failing = (record) -> Integer.parseInt(record.key().substring(2)) % 10 == 0;
		try (ConfigurableApplicationContext context = TestApplication.start(OutageApplication.class, topic,
				FAST_PROBES)) {
			RetryContainer container = container(context, topic);
			List<String[]> records = records(100, 5, 0);
			SharedBroker.sendAll(topic, records);
			await().atMost(Duration.ofSeconds(60)).until(() -> OutageListener.handled.size() == 450);
			await().atMost(Duration.ofSeconds(60)).until(() -> SharedBroker.readAll(Names.dlq(topic)).size() == 50);
			assertThat(container.outageBreaker().timesOpened()).isZero();
			assertThat(OutageListener.attempts.get()).as("every failing record took the whole ladder: 3 attempts")
				.isEqualTo(450 + 50 * 3);
		}
	}

	/**
	 * The failure-burst issue's burst: many keys fail once while other keys keep
	 * succeeding. Their failures belong to them: the ladder takes them, and the listener
	 * never holds.
	 */
	@Test
	void aBurstOfKeysFailingOnceAmongKeysThatSucceedNeverMakesTheListenerHold() {
		String topic = SharedBroker.newTopic(4);
		OutageListener.failing = (record) -> record.key().startsWith("failing") && !record.topic().contains(".retry.");
		try (ConfigurableApplicationContext context = TestApplication.start(OutageApplication.class, topic,
				FAST_PROBES)) {
			RetryContainer container = container(context, topic);
			List<String[]> records = new ArrayList<>();
			for (int clean = 0, failing = 0; clean < 1600; clean++) {
				records.add(new String[] { "clean-" + (clean % 8), "clean-" + (clean % 8) + "/" + (clean / 8) });
				for (; failing < 1000 && failing * 1600 < (clean + 1) * 1000; failing++) {
					records.add(new String[] { "failing-" + failing, "failing-" + failing + "/0" });
				}
			}
			SharedBroker.sendAll(topic, records);
			await().atMost(Duration.ofSeconds(90)).until(() -> OutageListener.handled.size() == 2600);
			assertThat(container.outageBreaker().timesOpened()).isZero();
			assertThat(OutageListener.attempts.get()).as("each failing record failed once, then succeeded")
				.isEqualTo(2600 + 1000);
			assertInOrderPerKey(records, List.of());
		}
	}

	@Test
	void anApplicationsOwnOpenCircuitBreakerHoldsTheListenerWithoutCountingAttempts() {
		String topic = SharedBroker.newTopic(2);
		CircuitBreaker payments = CircuitBreaker.ofDefaults("payments-" + topic);
		payments.transitionToForcedOpenState();
		OutageListener.guard = payments;
		try (ConfigurableApplicationContext context = TestApplication.start(OutageApplication.class, topic,
				FAST_PROBES)) {
			RetryContainer container = container(context, topic);
			List<String[]> records = records(10, 5, 0);
			SharedBroker.sendAll(topic, records);
			await().atMost(Duration.ofSeconds(30)).until(() -> container.outageBreaker().isOpen());
			assertThat(container.outageBreaker().reason()).contains("CallNotPermittedException");
			await().during(Duration.ofSeconds(2))
				.atMost(Duration.ofSeconds(4))
				.until(() -> ladderWrites(topic) == 0 && OutageListener.handled.isEmpty());

			payments.transitionToClosedState();
			await().atMost(Duration.ofSeconds(30)).until(() -> OutageListener.handled.size() == 50);
			assertInOrderPerKey(records, List.of());
			assertThat(ladderWrites(topic)).as("no attempt counted: nothing entered the ladder").isZero();
			assertThat(container.outageBreaker().isOpen()).isFalse();
		}
		finally {
			OutageListener.guard = null;
		}
	}

	private static RetryContainer container(ConfigurableApplicationContext context, String topic) {
		return context.getBean(ListenerRegistry.class).container("outage-" + topic);
	}

	/** Records in a retry topic of the test's ladder. */
	private static int staged(String topic, String delay) {
		return SharedBroker.readAll(Names.retry(topic, delay)).size();
	}

	/** Records written to the ladder: lock records and stage records. */
	private static int ladderWrites(String topic) {
		return SharedBroker.readAll(Names.locks(topic)).size() + SharedBroker.readAll(Names.retry(topic, "1s")).size()
				+ SharedBroker.readAll(Names.retry(topic, "2s")).size();
	}

	/**
	 * {@code perKey} records of each of {@code keys} keys, numbered from {@code from}, in
	 * order.
	 */
	private static List<String[]> records(int keys, int perKey, int from) {
		List<String[]> records = new ArrayList<>();
		for (int i = from; i < from + perKey; i++) {
			for (int k = 0; k < keys; k++) {
				records.add(new String[] { "k-" + k, "k-" + k + "/" + i });
			}
		}
		return records;
	}

	private static void assertInOrderPerKey(List<String[]> before, List<String[]> during) {
		Map<String, List<String>> sent = new LinkedHashMap<>();
		IntStream.range(0, before.size() + during.size())
			.mapToObj((i) -> (i < before.size()) ? before.get(i) : during.get(i - before.size()))
			.forEach((record) -> sent.computeIfAbsent(record[0], (key) -> new ArrayList<>()).add(record[1]));
		assertThat(handledByKey()).as("every record handled once, in order per key").isEqualTo(sent);
	}

	/**
	 * The values handled, by key (the part of the value before its first '/' or ':'), in
	 * order.
	 */
	private static Map<String, List<String>> handledByKey() {
		Map<String, List<String>> handled = new LinkedHashMap<>();
		OutageListener.handled
			.forEach((value) -> handled.computeIfAbsent(value.split("[/:]")[0], (key) -> new ArrayList<>()).add(value));
		return handled;
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(OutageListener.class)
	static class OutageApplication {

	}

	static class OutageListener {

		static volatile Predicate<ConsumerRecord<String, String>> failing = (record) -> false;

		static volatile CircuitBreaker guard;

		static final List<String> handled = new CopyOnWriteArrayList<>();

		static final AtomicInteger attempts = new AtomicInteger();

		static final AtomicLong firstHandledNanos = new AtomicLong();

		@OrderedRetryListener(id = "outage-${test.topic}", topics = "${test.topic}")
		void handle(ConsumerRecord<String, String> record) {
			CircuitBreaker breaker = guard;
			if (breaker != null) {
				breaker.executeRunnable(() -> succeed(record));
				return;
			}
			attempts.incrementAndGet();
			if (failing.test(record)) {
				throw new IllegalStateException("503 Service Unavailable");
			}
			succeed(record);
		}

		/** How long a successful call works, in milliseconds. */
		static volatile long workMillis;

		/** The container whose ramp the calls are counted against, or {@code null}. */
		static volatile @Nullable RetryContainer watched;

		static final AtomicInteger running = new AtomicInteger();

		static final AtomicInteger callsWhileRamping = new AtomicInteger();

		static final AtomicInteger mostAtOnceWhileRamping = new AtomicInteger();

		static final AtomicInteger mostAtOnceAfterRamp = new AtomicInteger();

		private static void succeed(ConsumerRecord<String, String> record) {
			int atOnce = running.incrementAndGet();
			try {
				RetryContainer container = watched;
				if (container != null && container.isRampingUp()) {
					callsWhileRamping.incrementAndGet();
					mostAtOnceWhileRamping.accumulateAndGet(atOnce, Math::max);
				}
				else if (container != null) {
					mostAtOnceAfterRamp.accumulateAndGet(atOnce, Math::max);
				}
				if (workMillis > 0) {
					Thread.sleep(workMillis); // the handler's work
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				running.decrementAndGet();
			}
			firstHandledNanos.compareAndSet(0, System.nanoTime());
			handled.add(record.value());
		}

	}

}
