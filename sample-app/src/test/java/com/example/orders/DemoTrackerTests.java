package com.example.orders;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DemoTrackerTests {

	private final DemoTracker tracker = new DemoTracker();

	@Test
	void reportsEveryKeyInOrderWhenAllIsHandledOrDeadLettered() {
		send("k1", 3);
		send("k2", 3);
		this.tracker.attempt("k1-1");
		handle("k1-1", "k2-1", "k1-2", "k2-3", "k1-3");
		assertThat(this.tracker.allAccountedFor(0)).isFalse();
		assertThat(this.tracker.allAccountedFor(1)).isTrue();

		DemoTracker.Summary summary = this.tracker.summarize(List.of("k2-2"), Set.of("k2-2"), false);

		assertThat(summary.ok()).isTrue();
		assertThat(summary.exitCode()).isZero();
		assertThat(summary.lines()).anySatisfy((line) -> assertThat(line).startsWith("k1:").contains("1 2 3")
				.contains("in order: yes"));
		assertThat(summary.lines()).anySatisfy((line) -> assertThat(line).startsWith("k2:").contains("1 3")
				.contains("in order: yes").contains("dead-lettered: 2"));
		assertThat(summary.lines()).anySatisfy((line) -> assertThat(line).startsWith("records retried:")
				.contains("1 (k1-1 handled on attempt 2)"));
		assertThat(summary.lines()).anySatisfy((line) -> assertThat(line).startsWith("records dead-lettered: 1"));
	}

	@Test
	void failsWhenAKeyIsOutOfOrder() {
		send("k1", 2);
		handle("k1-2", "k1-1");

		DemoTracker.Summary summary = this.tracker.summarize(List.of(), Set.of(), false);

		assertThat(summary.ok()).isFalse();
		assertThat(summary.exitCode()).isEqualTo(1);
		assertThat(summary.lines()).anySatisfy((line) -> assertThat(line).contains("in order: NO"));
	}

	@Test
	void redeliveriesDoNotBreakTheOrder() {
		send("k1", 3);
		handle("k1-1", "k1-2", "k1-2", "k1-3");

		DemoTracker.Summary summary = this.tracker.summarize(List.of(), Set.of(), false);

		assertThat(summary.ok()).isTrue();
		assertThat(summary.lines()).anySatisfy((line) -> assertThat(line).contains("redelivered duplicates: 1"));
	}

	@Test
	void failsOnTimeoutAndOnAnUnexpectedDeadLetter() {
		send("k1", 2);
		handle("k1-2");

		assertThat(this.tracker.summarize(List.of(), Set.of(), true).ok()).isFalse();
		assertThat(this.tracker.summarize(List.of("k1-1"), Set.of(), false).ok()).isFalse();
		assertThat(this.tracker.summarize(List.of(), Set.of("k1-1"), false).ok()).isFalse();
	}

	private void send(String key, int count) {
		for (int sequence = 1; sequence <= count; sequence++) {
			this.tracker.sent(DemoTracker.order(key, sequence));
		}
	}

	private void handle(String... orders) {
		for (String order : orders) {
			this.tracker.attempt(order);
			this.tracker.handled(DemoTracker.keyOf(order), order);
		}
	}

}
