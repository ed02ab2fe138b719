package com.example.payments;

import org.apache.kafka.clients.admin.NewTopic;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.config.TopicBuilder;

/**
 * A small payment service that shows ordered non-blocking retries at work.
 * <p>
 * A load generator sends payments for a dozen customers to the {@code payments} topic.
 * The listener charges each one through a {@link PaymentProvider} that flaps: it is down
 * for a while for some customers, never answers for one payment, and declines two cards.
 * Each customer's payments must be charged in the order they were sent, and a customer
 * whose charge is being retried must not hold back the others. A batch listener in a
 * group of its own books every payment in a {@link Ledger}, in bulk and in order per
 * customer too. At the end the sample prints a summary (order checked per customer,
 * attempts per stage, dead letters by reason, how late the retries ran, throughput, what
 * the ledger booked) and exits. Without {@code spring.kafka.bootstrap-servers} it brings
 * its own in-process Kafka broker.
 */
@SpringBootApplication
public class PaymentsSampleApplication {

	/** The main topic of the sample: one record per payment, keyed by customer. */
	public static final String TOPIC = "payments";

	/**
	 * The consumer group of the sample's listener: its retry ladder is named after it.
	 */
	public static final String GROUP = "payments-sample";

	/**
	 * The consumer group of the ledger's batch listener: it reads {@link #TOPIC} too,
	 * with offsets and a retry ladder of its own.
	 */
	public static final String LEDGER_GROUP = "ledger";

	/**
	 * The dead-letter topic the library creates for {@link #GROUP}'s ladder on
	 * {@link #TOPIC}.
	 */
	public static final String DEAD_LETTER_TOPIC = GROUP + "." + TOPIC + ".dlq";

	public static void main(String[] args) {
		application().run(args);
	}

	/**
	 * The sample application, with the listener that starts an in-process broker when no
	 * cluster is configured.
	 * @return a new application ready to run
	 */
	public static SpringApplication application() {
		SpringApplication application = new SpringApplication(PaymentsSampleApplication.class);
		application.setMainApplicationClass(PaymentsSampleApplication.class);
		application.addListeners(new EmbeddedKafkaLauncher());
		return application;
	}

	@Bean
	NewTopic paymentsTopic() {
		return TopicBuilder.name(TOPIC).partitions(3).build();
	}

}
