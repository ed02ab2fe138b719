package io.github.kafkaresilience.internal.support;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;

import static org.assertj.core.api.Assertions.assertThat;

class ConsumerClientsTests {

	private static final Map<String, Object> APPLICATION = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
			"localhost:1", ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted",
			ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5);

	@Test
	void theFactorysListenersAndPostProcessorsSeeEachConsumerAndItsClosing() {
		List<String> events = new CopyOnWriteArrayList<>();
		DefaultKafkaConsumerFactory<String, String> application = new DefaultKafkaConsumerFactory<>(APPLICATION,
				new StringDeserializer(), new StringDeserializer());
		application.addListener(new ConsumerFactory.Listener<>() {

			@Override
			public void consumerAdded(String id, Consumer<String, String> consumer) {
				events.add("added " + id);
			}

			@Override
			public void consumerRemoved(String id, Consumer<String, String> consumer) {
				events.add("removed " + id);
			}

		});
		application.addPostProcessor((consumer) -> {
			events.add("post-processed");
			return consumer;
		});
		ConsumerClients clients = new ConsumerClients(application, "appConsumerFactory");
		Map<String, Object> config = clients.configuration();
		config.put(ConsumerConfig.CLIENT_ID_CONFIG, "kafka-resilience-tailer-a-1");

		Consumer<byte[], byte[]> consumer = clients.create(config);
		consumer.close(CloseOptions.timeout(Duration.ZERO));

		assertThat(events).containsExactly("added appConsumerFactory.kafka-resilience-tailer-a-1", "post-processed",
				"removed appConsumerFactory.kafka-resilience-tailer-a-1");
	}

	@Test
	void theLibrarysSettingsComeOnTopOfTheFactorysAndLeaveItAsItWas() {
		ConsumerClients clients = new ConsumerClients(new DefaultKafkaConsumerFactory<>(APPLICATION), "app");
		ConsumerClients committed = clients.with(Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));

		assertThat(committed.configuration()).containsEntry(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")
			.containsEntry(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5);
		assertThat(clients.configuration()).containsEntry(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
	}

}
