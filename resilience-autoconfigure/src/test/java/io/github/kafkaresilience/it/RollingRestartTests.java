package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A rolling deploy: three instances of a group under steady load, with keys failing by
 * plan, each stopped gracefully and started again in turn once the one before is ready
 * again. Nothing is lost, no key's records run out of order, and the dead-letter topic
 * holds exactly the records that fail for good; in both group protocols, and with static
 * membership.
 */
@UsesSharedBroker
class RollingRestartTests {

	private static final Duration WAIT = Duration.ofSeconds(120);

	private static final int KEYS = 24;

	@ParameterizedTest(name = "{0} protocol, static membership: {1}")
	@CsvSource({ "classic, false", "consumer, false", "classic, true" })
	void aRollingRestartUnderLoadLosesNothingAndKeepsEveryKeyInOrder(String protocol, boolean staticMembership)
			throws InterruptedException {
		String topic = SharedBroker.newTopic(4);
		Script script = Script.forTopic(topic);
		List<ConfigurableApplicationContext> instances = new ArrayList<>(
				List.of(start(topic, protocol, staticMembership, 0), start(topic, protocol, staticMembership, 1),
						start(topic, protocol, staticMembership, 2)));
		Load load = new Load(topic, script);
		Thread producer = new Thread(load, "rolling-restart-load");
		try {
			instances.forEach(RollingRestartTests::awaitReady);
			producer.start();
			await().atMost(WAIT).until(() -> load.sent() > 200);
			for (int i = 0; i < instances.size(); i++) {
				instances.get(i).close();
				instances.set(i, start(topic, protocol, staticMembership, i));
				awaitReady(instances.get(i));
				int sent = load.sent();
				await().atMost(WAIT).until(() -> load.sent() > sent + 100);
			}
			load.stop();
			producer.join();
			await().atMost(WAIT).untilAsserted(() -> {
				for (String value : load.values()) {
					assertThat(script.succeeded(value) || load.failsForGood(value)).as(value + " handled").isTrue();
				}
			});
			Map<String, List<String>> byKey = script.firstSuccessesByKey();
			byKey.forEach((key, values) -> assertThat(values).as("records of " + key + " in the order they were sent")
				.isSortedAccordingTo(Comparator.comparingInt(RollingRestartTests::sequence)));
			Set<String> deadLetters = SharedBroker.readAll(Names.dlq(topic))
				.stream()
				.map((letter) -> new String(letter.value()) + "/"
						+ ProtocolHeaders.text(letter.headers(), ProtocolHeaders.DLQ_REASON))
				.collect(Collectors.toSet());
			assertThat(deadLetters).containsExactlyInAnyOrderElementsOf(
					load.values().stream().filter(load::failsForGood).map((value) -> value + "/permanent").toList());
			LockCoordinator locks = instances.get(0).getBean(LockCoordinator.class);
			await().atMost(WAIT).until(() -> locks.registryOf(Names.locks(topic)).size() == 0);
			long twice = load.values()
				.stream()
				.filter((value) -> script.journal()
					.stream()
					.filter((attempt) -> attempt.value().equals(value) && attempt.succeeded())
					.count() > 1)
				.count();
			System.out.printf("Rolling restart (%s protocol, static membership %s): %d records, %d handled twice%n",
					protocol, staticMembership, load.values().size(), twice);
		}
		finally {
			load.stop();
			instances.forEach(ConfigurableApplicationContext::close);
		}
	}

	private static ConfigurableApplicationContext start(String topic, String protocol, boolean staticMembership,
			int instance) {
		List<String> properties = new ArrayList<>(List.of("kafka.resilience.instance-id=i" + instance + "-" + topic,
				"kafka.resilience.retry.delays=1s,2s", "spring.kafka.consumer.properties.group.protocol=" + protocol));
		if (staticMembership) {
			properties.add("spring.kafka.consumer.properties.group.instance.id=i" + instance + "-" + topic);
			properties.add("spring.kafka.consumer.properties.session.timeout.ms=30000");
		}
		return TestApplication.start(topic, properties.toArray(String[]::new));
	}

	/** Ready as the health says it: partitions assigned, and every barrier open. */
	private static void awaitReady(ConfigurableApplicationContext instance) {
		ListenerRegistry listeners = instance.getBean(ListenerRegistry.class);
		await().atMost(WAIT).until(() -> {
			RetryContainer container = listeners.container(listeners.endpoints().get(0).id());
			return container != null && !container.assignment().isEmpty() && container.closedBarriers().isEmpty();
		});
	}

	private static int sequence(String value) {
		return Integer.parseInt(value.split("-")[1]);
	}

	/**
	 * Sends records to {@link #KEYS} keys in turn, about 200 a second: a tenth of them
	 * fail once, one in fifty fails for good.
	 */
	private static final class Load implements Runnable {

		private final String topic;

		private final Script script;

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final AtomicInteger sent = new AtomicInteger();

		private final List<String> values = new CopyOnWriteArrayList<>();

		private final Set<String> permanent = ConcurrentHashMap.newKeySet();

		Load(String topic, Script script) {
			this.topic = topic;
			this.script = script;
		}

		@Override
		public void run() {
			for (int n = 0; this.running.get(); n++) {
				String key = "k" + (n % KEYS);
				String value = key + "-" + (n / KEYS);
				if (n % 50 == 7) {
					this.script.failPermanently(value);
					this.permanent.add(value);
				}
				else if (n % 10 == 3) {
					this.script.failTransiently(value, 1);
				}
				SharedBroker.send(this.topic, key, value);
				this.values.add(value);
				this.sent.incrementAndGet();
				LockSupport.parkNanos(5_000_000); // the pace
													// of the
													// load,
													// not a
													// wait
													// for a
													// result
			}
		}

		int sent() {
			return this.sent.get();
		}

		List<String> values() {
			return this.values;
		}

		boolean failsForGood(String value) {
			return this.permanent.contains(value);
		}

		void stop() {
			this.running.set(false);
		}

	}

}
