package io.github.kafkaresilience.internal.support;

import java.time.Duration;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ProducerSettingsTests {

	@Test
	void aLibraryProducerIsDurableAndSendsAtOnceButKeepsTheApplicationsOtherSettings() {
		Map<String, Object> config = ProducerSettings
			.forAwaitedWrites(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "broker:9092", ProducerConfig.ACKS_CONFIG,
					"1", ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
					ProducerConfig.TRANSACTIONAL_ID_CONFIG, "the-applications-own", "security.protocol", "SASL_SSL"),
					"kafka-resilience-locks-a", null);
		assertThat(config).containsEntry(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "broker:9092")
			.containsEntry("security.protocol", "SASL_SSL")
			.containsEntry(ProducerConfig.ACKS_CONFIG, "all")
			.containsEntry(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true)
			.containsEntry(ProducerConfig.LINGER_MS_CONFIG, 0)
			.containsEntry(ProducerConfig.CLIENT_ID_CONFIG, "kafka-resilience-locks-a")
			.doesNotContainKeys(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ProducerConfig.TRANSACTIONAL_ID_CONFIG);
	}

	@Test
	void anApplicationsLingerIsKeptAndATransactionalIdIsTheLibrarysOwn() {
		Map<String, Object> config = ProducerSettings.forAwaitedWrites(Map.of(ProducerConfig.LINGER_MS_CONFIG, 20,
				ProducerConfig.TRANSACTIONAL_ID_CONFIG, "the-applications-own"), "kafka-resilience-a-orders",
				"kafka-resilience-a-orders");
		assertThat(config).containsEntry(ProducerConfig.LINGER_MS_CONFIG, 20)
			.containsEntry(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "kafka-resilience-a-orders");
	}

	@Test
	void aWriteTheLibraryGivesUpOnIsGivenUpByTheProducerTooSoItCannotLandAfterItsUndo() {
		Map<String, Object> config = ProducerSettings.forAwaitedWrites(Map.of(), "kafka-resilience-locks-a", null,
				Duration.ofSeconds(10));
		assertThat(config).containsEntry(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000)
			.containsEntry(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
	}

	@Test
	void anApplicationsShorterTimeoutsAreKeptAndTheRequestTimeoutLeavesRoomForItsLinger() {
		Map<String, Object> shorter = ProducerSettings.forAwaitedWrites(Map
			.of(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000", ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000),
				"a", null, Duration.ofSeconds(30));
		assertThat(shorter).containsEntry(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 20_000)
			.containsEntry(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
		Map<String, Object> lingering = ProducerSettings.forAwaitedWrites(Map.of(ProducerConfig.LINGER_MS_CONFIG, 20),
				"a", null, Duration.ofSeconds(30));
		assertThat(lingering).containsEntry(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000)
			.containsEntry(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 29_980);
	}

}
