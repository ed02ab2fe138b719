package com.example.payments;

import org.apache.kafka.common.utils.AppInfoParser;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class KafkaContainerConfigurationTests {

	@Test
	void runsTheBrokerOfTheKafkaClientsVersion() {
		assertThat(KafkaContainerConfiguration.IMAGE).isEqualTo("apache/kafka:" + AppInfoParser.getVersion());
	}

}
