package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scaling out on every group protocol and assignor: the main topic's partitions, and the
 * stage topics', spread over the instances of a group.
 */
@UsesSharedBroker
class GroupProtocolsTests {

	private static final Duration WAIT = Duration.ofSeconds(90);

	/**
	 * Two instances, then three, of one group on a topic of 4 partitions with two stages:
	 * every instance holds partitions of the main topic and of the stages, whatever the
	 * protocol and its assignor.
	 */
	@ParameterizedTest(name = "{0} protocol, {1}")
	@CsvSource({ "consumer, uniform", "consumer, range", "classic, org.apache.kafka.clients.consumer.RangeAssignor",
			"classic, org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
			"classic, org.apache.kafka.clients.consumer.StickyAssignor" })
	void theMainTopicsPartitionsSpreadOverEveryInstance(String protocol, String assignor) {
		String topic = SharedBroker.newTopic(4);
		String assignorProperty = protocol.equals("consumer") ? "group.remote.assignor"
				: "partition.assignment.strategy";
		List<ConfigurableApplicationContext> started = new ArrayList<>();
		try {
			for (int i = 0; i < 3; i++) {
				started.add(TestApplication.start(topic, "kafka.resilience.instance-id=i" + i + "-" + topic,
						"spring.kafka.consumer.properties.group.protocol=" + protocol,
						"spring.kafka.consumer.properties." + assignorProperty + "=" + assignor));
				if (i > 0) {
					awaitSpread(topic, started);
				}
			}
		}
		finally {
			started.forEach(ConfigurableApplicationContext::close);
		}
	}

	/**
	 * Static membership, as a StatefulSet gives it: an instance stopped and started again
	 * within the session timeout gets its very partitions back, and the other instance
	 * sees no rebalance meanwhile.
	 */
	@ParameterizedTest(name = "{0} protocol")
	@CsvSource({ "classic", "consumer" })
	void anInstanceBackWithinTheSessionTimeoutGetsItsPartitionsBackWithoutARebalance(String protocol) {
		String topic = SharedBroker.newTopic(4);
		ConfigurableApplicationContext first = startStatic(topic, protocol, 0);
		ConfigurableApplicationContext second = startStatic(topic, protocol, 1);
		try {
			awaitSpread(topic, List.of(first, second));
			AtomicInteger rebalances = new AtomicInteger();
			container(second).onAssignmentChanged(rebalances::incrementAndGet);
			// the group has settled: the consumer protocol may still move a partition
			// after the
			// spread, at a heartbeat (1 s on the test broker); none for 3 s
			int[] seen = { -1 };
			await().during(Duration.ofSeconds(3)).atMost(WAIT).until(() -> {
				int now = rebalances.get();
				boolean quiet = now == seen[0];
				seen[0] = now;
				return quiet;
			});
			int settled = rebalances.get();
			Set<TopicPartition> before = assignment(first);
			Set<TopicPartition> others = assignment(second);

			first.close();
			first = startStatic(topic, protocol, 0);
			ConfigurableApplicationContext back = first;
			await().atMost(WAIT)
				.until(() -> assignment(back).equals(before) && container(back).closedBarriers().isEmpty());
			assertThat(assignment(second)).isEqualTo(others);
			assertThat(rebalances).as("assignment changes of the other instance").hasValue(settled);
		}
		finally {
			first.close();
			second.close();
		}
	}

	/**
	 * An instance with a group instance id of its own; the session timeout is 15 s (the
	 * test broker's for the {@code consumer} protocol, set on the classic one's
	 * consumer).
	 */
	private static ConfigurableApplicationContext startStatic(String topic, String protocol, int instance) {
		List<String> properties = new ArrayList<>(List.of("kafka.resilience.instance-id=s" + instance + "-" + topic,
				"spring.kafka.consumer.properties.group.protocol=" + protocol,
				"spring.kafka.consumer.properties.group.instance.id=s" + instance + "-" + topic));
		if (protocol.equals("classic")) {
			properties.add("spring.kafka.consumer.properties.session.timeout.ms=15000");
		}
		return TestApplication.start(topic, properties.toArray(String[]::new));
	}

	private static RetryContainer container(ConfigurableApplicationContext context) {
		ListenerRegistry listeners = context.getBean(ListenerRegistry.class);
		return listeners.container(listeners.endpoints().get(0).id());
	}

	private static void awaitSpread(String topic, List<ConfigurableApplicationContext> instances) {
		await().atMost(WAIT).untilAsserted(() -> {
			List<Set<TopicPartition>> assignments = instances.stream().map(GroupProtocolsTests::assignment).toList();
			assertThat(assignments.stream().mapToLong(Set::size).sum())
				.as("every partition of 3 topics, once: " + assignments)
				.isEqualTo(12);
			for (Set<TopicPartition> assignment : assignments) {
				Map<Boolean, Long> byKind = assignment.stream()
					.collect(Collectors.partitioningBy((tp) -> tp.topic().equals(topic), Collectors.counting()));
				assertThat(byKind.get(true)).as("main-topic partitions of an instance: " + assignments).isPositive();
				assertThat(byKind.get(false)).as("stage-topic partitions of an instance: " + assignments).isPositive();
			}
		});
	}

	private static Set<TopicPartition> assignment(ConfigurableApplicationContext context) {
		ListenerRegistry listeners = context.getBean(ListenerRegistry.class);
		RetryContainer container = listeners.container(listeners.endpoints().get(0).id());
		return (container != null) ? container.assignment() : Set.of();
	}

}
