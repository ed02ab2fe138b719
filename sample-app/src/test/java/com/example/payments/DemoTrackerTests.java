package com.example.payments;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DemoTrackerTests {

	private final DemoTracker tracker = new DemoTracker();

	@Test
	void reportsOrderAttemptsDeadLettersAndLatenessWhenAllIsAccountedFor() {
		send("c01", 3);
		send("c02", 3);
		this.tracker.attempt("c01-1", "main", null);
		this.tracker.attempt("c01-1", "retry.2s", Duration.ofMillis(40));
		this.tracker.attempt("c01-1", "retry.10s", Duration.ofMillis(7));
		this.tracker.charged("c01", "c01-1");
		charge("c02-1", "c01-2", "c02-3", "c01-3");
		assertThat(this.tracker.allAccountedFor(0)).isFalse();
		assertThat(this.tracker.allAccountedFor(1)).isTrue();

		DemoTracker.Summary summary = this.tracker.summarize(Map.of("c02-2", "permanent"), Map.of("c02-2", "permanent"),
				false);

		assertThat(summary.ok()).as(String.join("\n", summary.lines())).isTrue();
		assertThat(summary.exitCode()).isZero();
		assertThat(summary.lines()).contains("payments:      6 sent over 2 customers; 5 charged, 1 dead-lettered",
				"order:         checked for all 2 customers: each one's payments were charged in the order sent",
				"attempts:      main 5, retry.2s 1, retry.10s 1", "retried:       c01-1 charged on attempt 3",
				"dead letters:  permanent 1 [c02-2]",
				"lateness:      the latest retry ran 40 ms after it was due (c01-1, retry.2s)");
		assertThat(summary.lines()).anySatisfy((line) -> assertThat(line).startsWith("throughput:    5 payments in ")
			.contains("the 0 customers without failures"));
	}

	@Test
	void failsWhenACustomerIsChargedOutOfOrder() {
		send("c01", 2);
		charge("c01-2", "c01-1");

		DemoTracker.Summary summary = this.tracker.summarize(Map.of(), Map.of(), false);

		assertThat(summary.ok()).isFalse();
		assertThat(summary.exitCode()).isEqualTo(1);
		assertThat(summary.lines()).contains("order:         OUT OF ORDER for c01 (2 1)");
	}

	@Test
	void redeliveriesAreCountedAndDoNotBreakTheOrder() {
		send("c01", 3);
		charge("c01-1", "c01-2", "c01-2", "c01-3");

		DemoTracker.Summary summary = this.tracker.summarize(Map.of(), Map.of(), false);

		assertThat(summary.ok()).isTrue();
		assertThat(summary.lines()).anySatisfy((line) -> assertThat(line).contains("redelivered:   1 payment(s)"));
	}

	@Test
	void failsOnTimeoutOnAMissingAndOnAnUnexpectedDeadLetter() {
		send("c01", 2);
		charge("c01-2");

		assertThat(this.tracker.summarize(Map.of(), Map.of(), true).ok()).isFalse();
		assertThat(this.tracker.summarize(Map.of("c01-1", "exhausted"), Map.of(), false).ok()).isFalse();
		assertThat(this.tracker.summarize(Map.of(), Map.of("c01-1", "exhausted"), false).ok()).isFalse();
		assertThat(this.tracker.summarize(Map.of("c01-1", "permanent"), Map.of("c01-1", "exhausted"), false).ok())
			.isFalse();
		assertThat(this.tracker.summarize(Map.of("c01-1", "exhausted"), Map.of("c01-1", "exhausted"), false).ok())
			.isTrue();
	}

	@Test
	void reportsWhatTheLedgerBookedAndFailsUntilItBookedEveryPayment() {
		send("c06", 6);
		charge("c06-1", "c06-2", "c06-3", "c06-4", "c06-5", "c06-6");
		Ledger ledger = new Ledger();
		ledger.insert(List.of(row("c06-1", "main"), row("c06-2", "main")));
		assertThatThrownBy(() -> ledger.insert(List.of(row("c06-3", "main"), row("c06-4", "main"),
				row(Ledger.BUSY_ONCE_PAYMENT, "main"), row("c06-6", "main"))))
			.isInstanceOfSatisfying(Ledger.BookingFailedException.class, (ex) -> assertThat(ex.booked()).isEqualTo(2));

		DemoTracker.Summary partial = this.tracker.summarize(Map.of(), Map.of(), ledger, true);

		assertThat(partial.ok()).isFalse();
		assertThat(partial.lines())
			.contains("ledger:        4 of 6 payments booked, each customer's in the order sent, "
					+ "by 2 batch inserts of up to 4 rows; c06-5 failed 1 time(s), not booked")
			.anySatisfy((line) -> assertThat(line).contains("the ledger booked 4 of 6 payments"));

		// the failed row again, from the first retry stage, and a redelivered row
		ledger.insert(List.of(row(Ledger.BUSY_ONCE_PAYMENT, "retry.2s"), row("c06-4", "retry.2s")));
		ledger.insert(List.of(row("c06-6", "retry.2s")));
		DemoTracker.Summary summary = this.tracker.summarize(Map.of(), Map.of(), ledger, false);

		assertThat(summary.ok()).as(String.join("\n", summary.lines())).isTrue();
		assertThat(summary.lines())
			.contains("ledger:        6 of 6 payments booked, each customer's in the order sent, "
					+ "by 4 batch inserts of up to 4 rows; c06-5 booked on attempt 2 (retry.2s); 1 row(s) skipped, booked "
					+ "already (at least once delivery)");
		assertThat(ledger.entries()).extracting(Ledger.Entry::insert).containsExactly(1, 1, 2, 2, 3, 4);
	}

	@Test
	void failsWhenTheLedgerBookedACustomerOutOfOrder() {
		send("c01", 2);
		charge("c01-1", "c01-2");
		Ledger ledger = new Ledger();
		ledger.insert(List.of(row("c01-2", "main"), row("c01-1", "main")));

		DemoTracker.Summary summary = this.tracker.summarize(Map.of(), Map.of(), ledger, false);

		assertThat(summary.ok()).isFalse();
		assertThat(summary.lines())
			.contains("ledger:        2 of 2 payments booked, OUT OF ORDER, by 1 batch insert of up to 2 rows")
			.anySatisfy((line) -> assertThat(line).contains("ledger booked out of order for c01 (2 1)"));
	}

	private static Ledger.Row row(String payment, String stage) {
		return new Ledger.Row(DemoTracker.customerOf(payment), payment, "EUR 12.34", stage);
	}

	private void send(String customer, int count) {
		for (int sequence = 1; sequence <= count; sequence++) {
			this.tracker.sent(DemoTracker.paymentId(DemoTracker.payment(customer, sequence, 1234)));
		}
	}

	private void charge(String... payments) {
		for (String payment : payments) {
			this.tracker.attempt(payment, "main", null);
			this.tracker.charged(DemoTracker.customerOf(payment), payment);
		}
	}

}
