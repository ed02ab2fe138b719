package io.github.kafkaresilience.internal.support;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;

import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.ProducerFactory;

import static org.assertj.core.api.Assertions.assertThat;

class ProducerClientsTests {

	@Test
	void theFactorysPostProcessorsAndListenersSeeEachProducerAndItsClosing() {
		List<String> events = new CopyOnWriteArrayList<>();
		List<Producer<?, ?>> postProcessed = new CopyOnWriteArrayList<>();
		List<Producer<?, ?>> announced = new CopyOnWriteArrayList<>();
		DefaultKafkaProducerFactory<String, String> application = new DefaultKafkaProducerFactory<>(
				Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:1"));
		application.addPostProcessor((producer) -> {
			events.add("post-processed");
			postProcessed.add(producer);
			return producer;
		});
		application.addListener(new ProducerFactory.Listener<>() {

			@Override
			public void producerAdded(String id, Producer<String, String> producer) {
				events.add("added " + id);
				announced.add(producer);
			}

			@Override
			public void producerRemoved(String id, Producer<String, String> producer) {
				events.add("removed " + id);
			}

		});
		ProducerClients clients = new ProducerClients(application, "appProducerFactory");
		Map<String, Object> config = ProducerSettings.forAwaitedWrites(clients.configuration(),
				"kafka-resilience-locks-a", null);

		Producer<byte[], byte[]> producer = clients.create(config);
		clients.close(producer, Duration.ZERO);

		assertThat(events).containsExactly("post-processed", "added appProducerFactory.kafka-resilience-locks-a",
				"removed appProducerFactory.kafka-resilience-locks-a");
		assertThat(announced).singleElement().isSameAs(producer).isSameAs(postProcessed.get(0));
	}

	@Test
	void theFactorysTransactionIdPrefixIsNotASettingOfTheLibrarysProducers() {
		DefaultKafkaProducerFactory<String, String> application = new DefaultKafkaProducerFactory<>(
				Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:1", ProducerConfig.TRANSACTIONAL_ID_CONFIG,
						"the-applications-own"));

		assertThat(new ProducerClients(application, "app").configuration())
			.containsEntry(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:1")
			.doesNotContainKey(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
	}

}
