package com.example.payments;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.stereotype.Component;

/**
 * Remembers what the sample sent and what the listener did with it, and builds the
 * summary printed at the end: whether each customer's payments were charged in the order
 * they were sent (checked, not assumed), attempts per stage, dead letters by reason, how
 * late the retries ran, throughput, and what the {@link Ledger} booked (every payment,
 * each customer's in the order sent).
 * <p>
 * A payment id is {@code <customer>-<sequence>}, e.g. {@code c03-7}: the 7th payment of
 * customer {@code c03}. Thread-safe: the listener runs on several worker threads.
 */
@Component
public class DemoTracker {

	private final Map<String, Long> sent = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> attemptsByStage = new ConcurrentHashMap<>();

	private final Map<String, List<Integer>> chargedByCustomer = new ConcurrentHashMap<>();

	private final Map<String, Long> charged = new ConcurrentHashMap<>();

	private final AtomicInteger duplicates = new AtomicInteger();

	private final CountDownLatch done = new CountDownLatch(1);

	private volatile Lateness worstLateness;

	private volatile Summary summary;

	/** A retry that ran later than it was due. */
	private record Lateness(Duration late, String payment, String stage) {
	}

	/**
	 * The record value of a payment.
	 * @param customer the customer, also the record key
	 * @param sequence the payment's number for this customer, from 1
	 * @param cents the amount
	 * @return the value, for example {@code c03-7 EUR 42.10}
	 */
	public static String payment(String customer, int sequence, int cents) {
		return String.format("%s-%d EUR %d.%02d", customer, sequence, cents / 100, cents % 100);
	}

	/** The payment id of a record value: its first word. */
	public static String paymentId(String value) {
		int space = value.indexOf(' ');
		return (space < 0) ? value : value.substring(0, space);
	}

	static String customerOf(String payment) {
		return payment.substring(0, payment.lastIndexOf('-'));
	}

	static int sequenceOf(String payment) {
		return Integer.parseInt(payment.substring(payment.lastIndexOf('-') + 1));
	}

	/** Records that a payment was sent. */
	public void sent(String payment) {
		this.sent.put(payment, System.nanoTime());
	}

	/**
	 * Records one more attempt at a payment.
	 * @param payment the payment id
	 * @param stage where it ran: {@code main} or a retry stage such as {@code retry.2s}
	 * @param lateness how long after it was due a retry ran, or {@code null}
	 * @return the number of this attempt, from 1
	 */
	public int attempt(String payment, String stage, Duration lateness) {
		this.attemptsByStage.computeIfAbsent(stage, (s) -> new AtomicInteger()).incrementAndGet();
		if (lateness != null) {
			synchronized (this) {
				if (this.worstLateness == null || lateness.compareTo(this.worstLateness.late()) > 0) {
					this.worstLateness = new Lateness(lateness, payment, stage);
				}
			}
		}
		return this.attempts.computeIfAbsent(payment, (p) -> new AtomicInteger()).incrementAndGet();
	}

	/** Records that a payment was charged. */
	public void charged(String customer, String payment) {
		if (this.charged.putIfAbsent(payment, System.nanoTime()) != null) {
			// at least once: a redelivered payment is counted, not listed twice
			this.duplicates.incrementAndGet();
			return;
		}
		List<Integer> sequences = this.chargedByCustomer.computeIfAbsent(customer, (c) -> new ArrayList<>());
		synchronized (sequences) {
			sequences.add(sequenceOf(payment));
		}
	}

	/** The payment ids sent so far. */
	public Set<String> sentPayments() {
		return Set.copyOf(this.sent.keySet());
	}

	public int sentCount() {
		return this.sent.size();
	}

	public int chargedCount() {
		return (int) this.charged.keySet().stream().filter(this.sent::containsKey).count();
	}

	/**
	 * Whether every payment sent has been charged or dead-lettered.
	 * @param deadLettered the number of payments that reached the dead-letter topic
	 */
	public boolean allAccountedFor(int deadLettered) {
		return !this.sent.isEmpty() && chargedCount() + deadLettered >= this.sent.size();
	}

	/**
	 * Builds the end-of-run summary.
	 * @param deadLetters the dead-lettered payments with their {@code dlq.reason}
	 * @param expected the payments meant to be dead-lettered, with their reason
	 * @param timedOut whether the sample gave up waiting
	 */
	public Summary summarize(Map<String, String> deadLetters, Map<String, String> expected, boolean timedOut) {
		return summarize(deadLetters, expected, null, timedOut);
	}

	/**
	 * Builds the end-of-run summary, with what the ledger booked: every payment sent,
	 * each customer's in the order sent.
	 * @param deadLetters the dead-lettered payments with their {@code dlq.reason}
	 * @param expected the payments meant to be dead-lettered, with their reason
	 * @param ledger the ledger, or {@code null} to leave it out
	 * @param timedOut whether the sample gave up waiting
	 */
	public Summary summarize(Map<String, String> deadLetters, Map<String, String> expected, Ledger ledger,
			boolean timedOut) {
		List<String> lines = new ArrayList<>();
		List<String> problems = new ArrayList<>();
		Map<String, List<Integer>> sentByCustomer = new TreeMap<>();
		this.sent.keySet()
			.forEach((payment) -> sentByCustomer.computeIfAbsent(customerOf(payment), (c) -> new ArrayList<>())
				.add(sequenceOf(payment)));
		lines.add(String.format("payments:      %d sent over %d customers; %d charged, %d dead-lettered", sentCount(),
				sentByCustomer.size(), chargedCount(), deadLetters.size()));

		List<String> outOfOrder = new ArrayList<>();
		for (String customer : sentByCustomer.keySet()) {
			List<Integer> sequences = chargedSequences(customer);
			if (!isIncreasing(sequences)) {
				outOfOrder.add(customer + " ("
						+ sequences.stream().map(String::valueOf).collect(Collectors.joining(" ")) + ")");
			}
		}
		lines.add(outOfOrder.isEmpty() ? String.format(
				"order:         checked for all %d customers: each one's payments were charged in the order sent",
				sentByCustomer.size()) : "order:         OUT OF ORDER for " + String.join(", ", outOfOrder));
		if (!outOfOrder.isEmpty()) {
			problems.add("payments charged out of order");
		}

		lines.add("attempts:      " + attemptsByStage());
		Map<String, Integer> retried = new TreeMap<>();
		this.attempts.forEach((payment, count) -> {
			if (count.get() > 1 && this.charged.containsKey(payment)) {
				retried.put(payment, count.get());
			}
		});
		lines.add("retried:       " + (retried.isEmpty() ? "none"
				: retried.entrySet()
					.stream()
					.map((e) -> e.getKey() + " charged on attempt " + e.getValue())
					.collect(Collectors.joining(", "))));

		Map<String, Set<String>> byReason = new TreeMap<>();
		deadLetters.forEach((payment, reason) -> byReason.computeIfAbsent(reason, (r) -> new TreeSet<>()).add(payment));
		lines.add("dead letters:  " + (byReason.isEmpty() ? "none"
				: byReason.entrySet()
					.stream()
					.map((e) -> e.getKey() + " " + e.getValue().size() + " " + e.getValue())
					.collect(Collectors.joining(", "))));

		Lateness worst = this.worstLateness;
		lines.add("lateness:      "
				+ ((worst != null) ? String.format("the latest retry ran %d ms after it was due (%s, %s)",
						worst.late().toMillis(), worst.payment(), worst.stage()) : "no retry ran"));
		lines.add("throughput:    " + throughput(sentByCustomer.keySet(), deadLetters.keySet()));
		if (ledger != null) {
			lines.add("ledger:        " + ledger(ledger, problems));
		}
		if (this.duplicates.get() > 0) {
			lines.add("redelivered:   " + this.duplicates.get() + " payment(s) charged twice (at least once delivery)");
		}

		if (timedOut) {
			problems.add("timed out with " + (sentCount() - chargedCount() - deadLetters.size())
					+ " payment(s) unaccounted for");
		}
		Set<String> notCharged = new TreeSet<>(this.sent.keySet());
		notCharged.removeAll(this.charged.keySet());
		notCharged.removeAll(deadLetters.keySet());
		if (!timedOut && !notCharged.isEmpty()) {
			problems.add("neither charged nor dead-lettered: " + String.join(", ", notCharged));
		}
		expected.forEach((payment, reason) -> {
			if (this.sent.containsKey(payment) && !reason.equals(deadLetters.get(payment))) {
				problems.add(payment + " should be dead-lettered as " + reason + " but is "
						+ deadLetters.getOrDefault(payment, "not"));
			}
		});
		deadLetters.forEach((payment, reason) -> {
			if (!expected.containsKey(payment)) {
				problems.add(payment + " was dead-lettered (" + reason + ") unexpectedly");
			}
		});
		boolean ok = problems.isEmpty();
		lines.add("result:        " + (ok ? "OK, every customer's payments were charged in order"
				: "FAILED, " + String.join("; ", problems)));
		return new Summary(ok, lines);
	}

	/**
	 * What the ledger booked of the payments sent, and whether each customer's are in the
	 * order sent; adds to {@code problems} what is wrong.
	 */
	private String ledger(Ledger ledger, List<String> problems) {
		List<Ledger.Entry> entries = ledger.entries();
		List<Ledger.Insert> inserts = ledger.inserts();
		int booked = ledger.bookedOf(this.sent.keySet());
		Map<String, List<Integer>> byCustomer = new TreeMap<>();
		entries.stream()
			.filter((entry) -> this.sent.containsKey(entry.payment()))
			.forEach((entry) -> byCustomer.computeIfAbsent(entry.customer(), (c) -> new ArrayList<>())
				.add(sequenceOf(entry.payment())));
		List<String> outOfOrder = new ArrayList<>();
		byCustomer.forEach((customer, sequences) -> {
			if (!isIncreasing(sequences)) {
				outOfOrder.add(customer + " ("
						+ sequences.stream().map(String::valueOf).collect(Collectors.joining(" ")) + ")");
			}
		});
		if (booked < sentCount()) {
			problems.add("the ledger booked " + booked + " of " + sentCount() + " payments");
		}
		if (!outOfOrder.isEmpty()) {
			problems.add("ledger booked out of order for " + String.join(", ", outOfOrder));
		}
		Map<String, Ledger.Entry> byPayment = new TreeMap<>();
		entries.forEach((entry) -> byPayment.put(entry.payment(), entry));
		StringBuilder line = new StringBuilder(String.format(
				"%d of %d payments booked, %s, by %d batch insert%s of up to %d rows", booked, sentCount(),
				outOfOrder.isEmpty() ? "each customer's in the order sent" : "OUT OF ORDER", inserts.size(),
				(inserts.size() == 1) ? "" : "s", inserts.stream().mapToInt(Ledger.Insert::rows).max().orElse(0)));
		ledger.failedBookings().forEach((payment, failures) -> {
			Ledger.Entry entry = byPayment.get(payment);
			line.append("; ")
				.append(payment)
				.append((entry != null) ? " booked on attempt " + (failures + 1) + " (" + entry.stage() + ")"
						: " failed " + failures + " time(s), not booked");
		});
		if (ledger.skipped() > 0) {
			line.append("; ")
				.append(ledger.skipped())
				.append(" row(s) skipped, booked already (at least once delivery)");
		}
		return line.toString();
	}

	private String attemptsByStage() {
		Map<String, Integer> counts = new TreeMap<>((a, b) -> Long.compare(rank(a), rank(b)));
		this.attemptsByStage.forEach((stage, count) -> counts.put(stage, count.get()));
		return counts.entrySet().stream().map((e) -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "));
	}

	/** {@code main} first, then the stages by their delay. */
	private static long rank(String stage) {
		if (stage.equals("main")) {
			return -1;
		}
		try {
			return DurationStyle.detectAndParse(stage.substring(stage.indexOf('.') + 1)).toMillis();
		}
		catch (IllegalArgumentException ex) {
			return Long.MAX_VALUE;
		}
	}

	/**
	 * Overall, and for the customers that met no failure: they show what a failing
	 * customer costs the others, which with ordered non-blocking retries should be
	 * nothing.
	 */
	private String throughput(Set<String> customers, Set<String> deadLettered) {
		if (this.sent.isEmpty() || this.charged.isEmpty()) {
			return "nothing charged";
		}
		long first = this.sent.values().stream().mapToLong(Long::longValue).min().orElseThrow();
		long last = this.charged.values().stream().mapToLong(Long::longValue).max().orElseThrow();
		Set<String> troubled = new TreeSet<>();
		this.attempts.forEach((payment, count) -> {
			if (count.get() > 1) {
				troubled.add(customerOf(payment));
			}
		});
		deadLettered.forEach((payment) -> troubled.add(customerOf(payment)));
		List<String> healthy = customers.stream().filter((customer) -> !troubled.contains(customer)).toList();
		long healthyLast = this.charged.entrySet()
			.stream()
			.filter((e) -> healthy.contains(customerOf(e.getKey())))
			.mapToLong(Map.Entry::getValue)
			.max()
			.orElse(first);
		long healthyCount = this.charged.keySet().stream().filter((p) -> healthy.contains(customerOf(p))).count();
		return String.format(
				"%d payments in %.1f s overall, retries included; the %d customers without failures "
						+ "were all charged %.1f s after the first send (%d payments)",
				chargedCount(), seconds(last - first), healthy.size(), seconds(healthyLast - first), healthyCount);
	}

	private static double seconds(long nanos) {
		return nanos / 1e9;
	}

	private List<Integer> chargedSequences(String customer) {
		List<Integer> sequences = this.chargedByCustomer.getOrDefault(customer, List.of());
		synchronized (sequences) {
			return new ArrayList<>(sequences);
		}
	}

	static boolean isIncreasing(List<Integer> sequences) {
		for (int i = 1; i < sequences.size(); i++) {
			if (sequences.get(i) <= sequences.get(i - 1)) {
				return false;
			}
		}
		return true;
	}

	/** Publishes the final summary; {@link #awaitSummary} returns it from then on. */
	void finish(Summary summary) {
		this.summary = summary;
		this.done.countDown();
	}

	/**
	 * Waits for the end of the run.
	 * @return the summary, or {@code null} if the run has not finished in time
	 */
	public Summary awaitSummary(long timeout, TimeUnit unit) throws InterruptedException {
		return this.done.await(timeout, unit) ? this.summary : null;
	}

	/**
	 * The outcome of a run.
	 *
	 * @param ok whether every customer was charged (and, with a ledger, booked) in order
	 * and every payment is accounted for
	 * @param lines the lines to print
	 */
	public record Summary(boolean ok, List<String> lines) {

		public int exitCode() {
			return this.ok ? 0 : 1;
		}

	}

}
