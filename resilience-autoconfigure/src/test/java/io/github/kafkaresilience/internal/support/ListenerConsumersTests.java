package io.github.kafkaresilience.internal.support;

import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.junit.jupiter.api.Test;

import org.springframework.kafka.core.DefaultKafkaConsumerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A listener's two consumers in its group: its main topics' and its retry topics', told
 * apart by their client ids and, under static membership, by their group instance ids.
 */
class ListenerConsumersTests {

	private static final Map<String, Object> APPLICATION = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
			"localhost:1", ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "billing-0");

	@Test
	void theRetryTopicsConsumerHasAClientIdAndAGroupInstanceIdOfItsOwn() {
		ListenerConsumers consumers = new ListenerConsumers(
				new ConsumerClients(new DefaultKafkaConsumerFactory<>(APPLICATION), "app"), "orders", "billing",
				"pod-0", Map.of());

		assertThat(consumers.listenerConfiguration()).containsEntry(ConsumerConfig.GROUP_ID_CONFIG, "billing")
			.containsEntry(ConsumerConfig.CLIENT_ID_CONFIG, "kafka-resilience-orders-pod-0")
			.containsEntry(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "billing-0");
		assertThat(consumers.retriesConfiguration()).containsEntry(ConsumerConfig.GROUP_ID_CONFIG, "billing")
			.containsEntry(ConsumerConfig.CLIENT_ID_CONFIG, "kafka-resilience-orders-pod-0-retries")
			.containsEntry(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "billing-0-retries");
	}

	@Test
	void withoutStaticMembershipNeitherHasAGroupInstanceId() {
		ListenerConsumers consumers = new ListenerConsumers(
				new ConsumerClients(new DefaultKafkaConsumerFactory<>(
						Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:1")), "app"),
				"orders", "billing", "pod-0", Map.of());

		assertThat(consumers.listenerConfiguration()).doesNotContainKey(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
		assertThat(consumers.retriesConfiguration()).doesNotContainKey(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
	}

}
