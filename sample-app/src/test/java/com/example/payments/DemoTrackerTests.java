package com.example.payments;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

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
