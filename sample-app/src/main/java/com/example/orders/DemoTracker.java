package com.example.orders;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
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

import org.springframework.stereotype.Component;

/**
 * Remembers what the sample sent and what the handler did with it, and tells at the end
 * whether every key was handled in order.
 * <p>
 * Orders are values like {@code k3-7}: key {@code k3}, sequence number 7 within that key.
 * Thread-safe: the handler runs on several worker threads.
 */
@Component
public class DemoTracker {

	private final Set<String> sent = ConcurrentHashMap.newKeySet();

	private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();

	private final Map<String, List<Integer>> handledByKey = new ConcurrentHashMap<>();

	private final Set<String> handled = ConcurrentHashMap.newKeySet();

	private final AtomicInteger duplicates = new AtomicInteger();

	private final CountDownLatch done = new CountDownLatch(1);

	private volatile Summary summary;

	/**
	 * Builds the value of an order.
	 * @param key the record key
	 * @param sequence the sequence number within the key, from 1
	 * @return the record value
	 */
	public static String order(String key, int sequence) {
		return key + "-" + sequence;
	}

	static boolean isOrder(String value) {
		return value != null && value.matches(".+-\\d{1,9}");
	}

	static String keyOf(String order) {
		return order.substring(0, order.lastIndexOf('-'));
	}

	static int sequenceOf(String order) {
		return Integer.parseInt(order.substring(order.lastIndexOf('-') + 1));
	}

	/**
	 * Records that an order was sent.
	 * @param order the record value
	 */
	public void sent(String order) {
		this.sent.add(order);
	}

	/**
	 * Records one more attempt at an order.
	 * @param order the record value
	 * @return the number of this attempt, from 1
	 */
	public int attempt(String order) {
		return this.attempts.computeIfAbsent(order, (o) -> new AtomicInteger()).incrementAndGet();
	}

	/**
	 * Records that an order was handled successfully.
	 * @param key the record key
	 * @param order the record value
	 */
	public void handled(String key, String order) {
		if (!isOrder(order)) {
			return;
		}
		if (!this.handled.add(order)) {
			// At-least-once: a redelivered order is counted, not listed twice.
			this.duplicates.incrementAndGet();
			return;
		}
		List<Integer> sequences = this.handledByKey.computeIfAbsent(keyOf(order), (k) -> new ArrayList<>());
		synchronized (sequences) {
			sequences.add(sequenceOf(order));
		}
	}

	public int sentCount() {
		return this.sent.size();
	}

	public int handledCount() {
		return (int) this.handled.stream().filter(this.sent::contains).count();
	}

	/**
	 * Whether every order sent has been handled or dead-lettered.
	 * @param deadLettered the number of records that reached the dead-letter topic
	 * @return whether nothing is left to wait for
	 */
	public boolean allAccountedFor(int deadLettered) {
		return !this.sent.isEmpty() && handledCount() + deadLettered >= this.sent.size();
	}

	/**
	 * Builds the end-of-run summary.
	 * @param deadLettered the values found on the dead-letter topic
	 * @param expectedDeadLetters the orders that are meant to be dead-lettered
	 * @param timedOut whether the sample gave up waiting
	 * @return the summary
	 */
	public Summary summarize(Collection<String> deadLettered, Set<String> expectedDeadLetters, boolean timedOut) {
		List<String> lines = new ArrayList<>();
		boolean allInOrder = true;
		Map<String, List<Integer>> sentByKey = new TreeMap<>();
		for (String order : this.sent) {
			sentByKey.computeIfAbsent(keyOf(order), (k) -> new ArrayList<>()).add(sequenceOf(order));
		}
		Set<String> keys = new LinkedHashSet<>(sentByKey.keySet());
		keys.addAll(new TreeMap<>(this.handledByKey).keySet());
		for (String key : keys) {
			List<Integer> sequences = handledSequences(key);
			boolean inOrder = isIncreasing(sequences);
			allInOrder &= inOrder;
			String dead = deadLettered.stream()
				.filter((order) -> isOrder(order) && keyOf(order).equals(key))
				.map((order) -> String.valueOf(sequenceOf(order)))
				.collect(Collectors.joining(" "));
			String line = String.format("%-4s handled %-30s in order: %s", key + ":",
					sequences.stream().map(String::valueOf).collect(Collectors.joining(" ")), inOrder ? "yes" : "NO");
			if (!dead.isEmpty()) {
				line += "  (dead-lettered: " + dead + ")";
			}
			lines.add(line);
		}

		Map<String, Integer> retried = new LinkedHashMap<>();
		new TreeMap<>(this.attempts).forEach((order, count) -> {
			if (count.get() > 1) {
				retried.put(order, count.get());
			}
		});
		lines.add(String.format("records retried:       %d%s", retried.size(),
				retried.isEmpty() ? ""
						: retried.entrySet()
							.stream()
							.map((e) -> e.getKey() + " handled on attempt " + e.getValue())
							.collect(Collectors.joining(", ", " (", ")"))));
		lines.add(String.format("records dead-lettered: %d%s", deadLettered.size(),
				deadLettered.isEmpty() ? "" : " (" + String.join(", ", deadLettered) + ")"));
		if (this.duplicates.get() > 0) {
			lines.add("redelivered duplicates: " + this.duplicates.get() + " (at-least-once)");
		}

		List<String> problems = new ArrayList<>();
		if (timedOut) {
			problems.add("timed out with " + (this.sent.size() - handledCount() - deadLettered.size())
					+ " record(s) unaccounted for");
		}
		if (!allInOrder) {
			problems.add("some key was handled out of order");
		}
		Set<String> notHandled = new TreeSet<>(this.sent);
		notHandled.removeAll(this.handled);
		notHandled.removeAll(expectedDeadLetters);
		if (!timedOut && !notHandled.isEmpty()) {
			problems.add("not handled: " + String.join(", ", notHandled));
		}
		for (String expected : expectedDeadLetters) {
			if (this.sent.contains(expected) && !deadLettered.contains(expected)) {
				problems.add(expected + " did not reach the dead-letter topic");
			}
		}
		boolean ok = problems.isEmpty();
		lines.add("result: " + (ok ? "OK, every key was handled in order" : "FAILED, " + String.join("; ", problems)));
		return new Summary(ok, lines);
	}

	private List<Integer> handledSequences(String key) {
		List<Integer> sequences = this.handledByKey.getOrDefault(key, List.of());
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

	/**
	 * Publishes the final summary; {@link #awaitSummary} returns it from then on.
	 * @param summary the summary
	 */
	void finish(Summary summary) {
		this.summary = summary;
		this.done.countDown();
	}

	/**
	 * Waits for the end of the run.
	 * @param timeout how long to wait
	 * @param unit the unit of the timeout
	 * @return the summary, or {@code null} if the run has not finished in time
	 * @throws InterruptedException if interrupted while waiting
	 */
	public Summary awaitSummary(long timeout, TimeUnit unit) throws InterruptedException {
		return this.done.await(timeout, unit) ? this.summary : null;
	}

	/**
	 * The outcome of a run.
	 * @param ok whether every key was handled in order and every record is accounted for
	 * @param lines the lines to print
	 */
	public record Summary(boolean ok, List<String> lines) {

		public int exitCode() {
			return this.ok ? 0 : 1;
		}

	}

}
