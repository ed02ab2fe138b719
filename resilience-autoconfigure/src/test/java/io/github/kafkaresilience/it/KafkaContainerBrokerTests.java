package io.github.kafkaresilience.it;

import org.apache.kafka.common.utils.AppInfoParser;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the container broker would run, checked without Docker (nothing here loads
 * Testcontainers).
 */
class KafkaContainerBrokerTests {

	@Test
	void runsTheApacheKafkaImageOfTheClientsVersion() {
		assertThat(KafkaContainerBroker.image()).isEqualTo("apache/kafka:" + AppInfoParser.getVersion());
	}

	@Test
	void passesBrokerSettingsAsTheImagesEnvironmentVariables() {
		assertThat(KafkaContainerBroker.environmentVariable("log.cleaner.backoff.ms"))
			.isEqualTo("KAFKA_LOG_CLEANER_BACKOFF_MS");
		assertThat(KafkaContainerBroker.environmentVariable("transaction.state.log.min.isr"))
			.isEqualTo("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR");
	}

}
