package com.example.orders;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.PermanentFailureException;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import org.springframework.stereotype.Component;

/**
 * The business logic of the sample: "handles" an order by recording it.
 * <p>
 * Two orders misbehave on purpose:
 * <ul>
 * <li>{@value #FLAKY}, the first order of key {@code k2}, fails twice with a transient error,
 * so it goes through the 2s and the 5s retry stages and succeeds on its third attempt. The
 * later {@code k2} orders wait behind it; every other key keeps flowing.</li>
 * <li>{@value #POISON} is rejected with a {@link PermanentFailureException} and goes straight
 * to the dead-letter topic; the rest of {@code k5} goes on after it.</li>
 * </ul>
 */
@Component
public class OrderHandler {

	/** The order that fails twice before it succeeds. */
	public static final String FLAKY = "k2-1";

	/** How many times {@link #FLAKY} fails. */
	public static final int FLAKY_FAILURES = 2;

	/** The order that can never succeed. */
	public static final String POISON = "k5-3";

	private final DemoTracker tracker;

	public OrderHandler(DemoTracker tracker) {
		this.tracker = tracker;
	}

	@OrderedRetryListener(id = "orders", topics = OrdersSampleApplication.TOPIC, groupId = "orders-sample")
	public void handle(ConsumerRecord<String, String> record) {
		String order = record.value();
		int attempt = this.tracker.attempt(order);
		if (POISON.equals(order)) {
			System.out.printf("[orders] %-6s rejected for good (from %s): goes to the dead-letter topic%n", order,
					record.topic());
			throw new PermanentFailureException("order " + order + " is malformed");
		}
		if (FLAKY.equals(order) && attempt <= FLAKY_FAILURES) {
			System.out.printf("[orders] %-6s failed, attempt %d (from %s): payment service unavailable, "
					+ "key %s waits, other keys go on%n", order, attempt, record.topic(), record.key());
			throw new IllegalStateException("payment service unavailable (simulated)");
		}
		if (attempt > 1) {
			System.out.printf("[orders] %-6s handled on attempt %d (from %s)%n", order, attempt, record.topic());
		}
		this.tracker.handled(record.key(), order);
	}

}
