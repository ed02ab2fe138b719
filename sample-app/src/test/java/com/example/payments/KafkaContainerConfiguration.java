package com.example.payments;

import org.testcontainers.kafka.KafkaContainer;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.annotation.Bean;

/**
 * A Kafka broker in a container, for {@link TestPaymentsApplication}.
 * {@code @ServiceConnection} hands its address to Spring Boot's Kafka clients, and
 * through them to the library's.
 * <p>
 * A test configuration: the sample's component scan leaves it out, so it is only there
 * when asked for.
 */
@TestConfiguration(proxyBeanMethods = false)
class KafkaContainerConfiguration {

	/**
	 * The broker image: Apache Kafka at the version of the Kafka clients the sample runs
	 * with.
	 */
	static final String IMAGE = "apache/kafka:4.2.1";

	@Bean
	@ServiceConnection
	KafkaContainer kafkaContainer() {
		return new KafkaContainer(IMAGE);
	}

}
