package com.example.orders;

import org.apache.kafka.clients.admin.NewTopic;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.config.TopicBuilder;

/**
 * A small order-processing service that shows ordered non-blocking retries at work.
 * <p>
 * It sends a batch of orders over a few keys, fails some of them on purpose, and prints, per
 * key, the order in which the orders were handled. Without
 * {@code spring.kafka.bootstrap-servers} it brings its own in-process Kafka broker.
 */
@SpringBootApplication
public class OrdersSampleApplication {

	/** The main topic of the sample. */
	public static final String TOPIC = "orders";

	/** The dead-letter topic the library creates next to {@link #TOPIC}. */
	public static final String DEAD_LETTER_TOPIC = TOPIC + ".dlq";

	public static void main(String[] args) {
		application().run(args);
	}

	/**
	 * The sample application, with the listener that starts an in-process broker when no
	 * cluster is configured.
	 * @return a new application ready to run
	 */
	public static SpringApplication application() {
		SpringApplication application = new SpringApplication(OrdersSampleApplication.class);
		application.setMainApplicationClass(OrdersSampleApplication.class);
		application.addListeners(new EmbeddedKafkaLauncher());
		return application;
	}

	@Bean
	NewTopic ordersTopic() {
		return TopicBuilder.name(TOPIC).partitions(3).build();
	}

}
