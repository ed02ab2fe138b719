package com.example.payments;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.github.kafkaresilience.OrderedRetryListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.stereotype.Component;

/**
 * Charges each payment through the {@link PaymentProvider}. A provider failure is thrown
 * on: the library retries the payment after 2 s, 5 s and 10 s while the customer's later
 * payments wait behind it, and dead-letters it when it fails for good or runs out of
 * attempts.
 */
@Component
public class PaymentListener {

	private final PaymentProvider provider;

	private final DemoTracker tracker;

	public PaymentListener(PaymentProvider provider, DemoTracker tracker) {
		this.provider = provider;
		this.tracker = tracker;
	}

	@OrderedRetryListener(id = "payments", topics = PaymentsSampleApplication.TOPIC,
			groupId = PaymentsSampleApplication.GROUP)
	public void charge(ConsumerRecord<String, String> record) {
		String payment = DemoTracker.paymentId(record.value());
		String stage = stageOf(record.topic());
		int attempt = this.tracker.attempt(payment, stage, lateness(record));
		try {
			this.provider.charge(record.key(), payment);
		}
		catch (RuntimeException ex) {
			System.out.printf("[payments] %-6s attempt %d failed (%s): %s%n", payment, attempt, stage, ex.getMessage());
			throw ex;
		}
		if (attempt > 1) {
			System.out.printf("[payments] %-6s charged on attempt %d (%s)%n", payment, attempt, stage);
		}
		this.tracker.charged(record.key(), payment);
	}

	/** {@code main} for the main topic, {@code retry.2s} for a retry stage. */
	static String stageOf(String topic) {
		return topic.equals(PaymentsSampleApplication.TOPIC) ? "main"
				: topic.substring(topic.lastIndexOf(".retry.") + 1);
	}

	/**
	 * How long after it was due a retried payment runs, or {@code null} for a first
	 * attempt or a payment that only waited behind its customer's earlier one (it was
	 * never due on its own).
	 */
	private static Duration lateness(ConsumerRecord<String, String> record) {
		Header retries = record.headers().lastHeader("retry.count");
		if (record.topic().equals(PaymentsSampleApplication.TOPIC) || retries == null
				|| "0".equals(new String(retries.value(), StandardCharsets.UTF_8))) {
			return null;
		}
		Duration delay = DurationStyle.detectAndParse(record.topic().substring(record.topic().lastIndexOf('.') + 1));
		return Duration.ofMillis(System.currentTimeMillis() - (record.timestamp() + delay.toMillis()));
	}

}
