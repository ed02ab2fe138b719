package com.example.payments;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.OrderedRetryListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.stereotype.Component;

/**
 * Books every payment in the {@link Ledger}, in bulk: a batch listener reading the same
 * {@code payments} topic in a consumer group of its own ({@code ledger}), so it has its
 * own offsets and its own retry ladder, and one insert per call. The method is the one a
 * {@code @KafkaListener(batch = "true")} would have; only the annotation differs.
 * <p>
 * When the insert stops at a row, the method names that record with a
 * {@link BatchListenerFailedException} by its index: the records before it are booked, it
 * alone is retried (after 2 s, its customer's later payments waiting behind it), and the
 * records after it come again in a later batch.
 */
@Component
public class LedgerListener {

	private final Ledger ledger;

	public LedgerListener(Ledger ledger) {
		this.ledger = ledger;
	}

	@OrderedRetryListener(id = "ledger", topics = PaymentsSampleApplication.TOPIC,
			groupId = PaymentsSampleApplication.LEDGER_GROUP, batch = "true",
			batchSize = "${sample.ledger.batch-size:50}")
	public void book(List<ConsumerRecord<String, String>> records) {
		List<Ledger.Row> rows = new ArrayList<>(records.size());
		for (ConsumerRecord<String, String> record : records) {
			String value = record.value();
			String payment = DemoTracker.paymentId(value);
			rows.add(new Ledger.Row(record.key(), payment, value.substring(payment.length()).trim(),
					PaymentListener.stageOf(record.topic())));
		}
		try {
			this.ledger.insert(rows);
		}
		catch (Ledger.BookingFailedException ex) {
			int failed = ex.booked();
			System.out.printf(
					"[ledger]   %-6s not booked (%s): %s; booked the %d row(s) before it, the %d after it come "
							+ "again in a later batch%n",
					rows.get(failed).payment(), rows.get(failed).stage(), ex.getMessage(), failed,
					rows.size() - failed - 1);
			throw new BatchListenerFailedException("could not book " + rows.get(failed).payment(), ex, failed);
		}
		Map<String, Integer> failedBefore = this.ledger.failedBookings();
		rows.stream()
			.filter((row) -> failedBefore.containsKey(row.payment()))
			.forEach((row) -> System.out.printf("[ledger]   %-6s booked (%s)%n", row.payment(), row.stage()));
	}

}
