package com.example.payments;

import java.util.Arrays;
import java.util.stream.Stream;

import org.springframework.boot.SpringApplication;

/**
 * Runs the sample on a Kafka container instead of its in-process broker, for development:
 * {@code mvn -pl sample-app -am spring-boot:test-run}. Needs Docker.
 * <p>
 * It runs {@link PaymentsSampleApplication#main} with {@link KafkaContainerConfiguration}
 * added. The container's address reaches the Kafka clients as a connection, not as
 * {@code spring.kafka.bootstrap-servers}, so the sample is told not to start its own
 * broker ({@code sample.embedded-kafka.enabled=false}).
 */
public class TestPaymentsApplication {

	public static void main(String[] args) {
		String[] arguments = Stream
			.concat(Stream.of("--" + EmbeddedKafkaLauncher.ENABLED + "=false"), Arrays.stream(args))
			.toArray(String[]::new);
		SpringApplication.from(PaymentsSampleApplication::main).with(KafkaContainerConfiguration.class).run(arguments);
	}

}
