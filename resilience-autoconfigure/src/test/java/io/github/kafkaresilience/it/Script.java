package io.github.kafkaresilience.it;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * What the test handler does with each value (fail transiently a number of times, fail
 * permanently), and a journal of every attempt, per main topic.
 */
final class Script {

	/**
	 * One handling of a record.
	 *
	 * @param replayed whether the record was a dead letter sent back by a replay
	 */
	record Attempt(String key, String value, String topic, int retryCount, long recordTimestamp, Instant at,
			boolean succeeded, boolean replayed) {
	}

	private static final Map<String, Script> BY_TOPIC = new ConcurrentHashMap<>();

	private final Map<String, Integer> transientFailures = new ConcurrentHashMap<>();

	private final Set<String> permanentFailures = ConcurrentHashMap.newKeySet();

	private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();

	private final List<Attempt> journal = new CopyOnWriteArrayList<>();

	private final Map<String, AtomicInteger> runningByKey = new ConcurrentHashMap<>();

	private final AtomicInteger running = new AtomicInteger();

	private final AtomicInteger mostRunning = new AtomicInteger();

	private final AtomicInteger sameKeyOverlaps = new AtomicInteger();

	private volatile int maxLatencyMillis;

	static Script forTopic(String topic) {
		return BY_TOPIC.computeIfAbsent(topic, (t) -> new Script());
	}

	Script failTransiently(String value, int times) {
		this.transientFailures.put(value, times);
		return this;
	}

	Script failPermanently(String value) {
		this.permanentFailures.add(value);
		return this;
	}

	/** From now on, {@code value} succeeds whatever was scripted for it. */
	Script succeedFromNowOn(String value) {
		this.permanentFailures.remove(value);
		this.transientFailures.remove(value);
		return this;
	}

	/** Every handling takes a random time up to {@code maxMillis}. */
	Script withLatency(int maxMillis) {
		this.maxLatencyMillis = maxMillis;
		return this;
	}

	/** The most handlings that ran at the same time. */
	int mostRunningAtOnce() {
		return this.mostRunning.get();
	}

	/** How often a handling started while another of the same key was still running. */
	int sameKeyOverlaps() {
		return this.sameKeyOverlaps.get();
	}

	void handle(ConsumerRecord<String, String> record) {
		String key = String.valueOf(record.key());
		AtomicInteger ofKey = this.runningByKey.computeIfAbsent(key, (k) -> new AtomicInteger());
		if (ofKey.incrementAndGet() > 1) {
			this.sameKeyOverlaps.incrementAndGet();
		}
		this.mostRunning.accumulateAndGet(this.running.incrementAndGet(), Math::max);
		try {
			int latency = this.maxLatencyMillis;
			if (latency > 0) {
				// the handler's own work, as a test double: a random pause
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextInt(latency + 1)));
			}
			attempt(record);
		}
		finally {
			this.running.decrementAndGet();
			ofKey.decrementAndGet();
		}
	}

	private void attempt(ConsumerRecord<String, String> record) {
		String value = record.value();
		int attempt = this.attempts.computeIfAbsent(value, (v) -> new AtomicInteger()).incrementAndGet();
		String count = ProtocolHeaders.text(record.headers(), ProtocolHeaders.RETRY_COUNT);
		int retryCount = (count != null) ? Integer.parseInt(count) : 0;
		boolean fail = this.permanentFailures.contains(value)
				|| attempt <= this.transientFailures.getOrDefault(value, 0);
		this.journal.add(new Attempt(record.key(), value, record.topic(), retryCount, record.timestamp(), Instant.now(),
				!fail, record.headers().lastHeader(ProtocolHeaders.REPLAY_FROM_DLQ) != null));
		if (this.permanentFailures.contains(value)) {
			throw new PermanentFailureException("cannot handle " + value);
		}
		if (fail) {
			throw new IllegalStateException("attempt " + attempt + " of " + value + " fails");
		}
	}

	List<Attempt> journal() {
		return List.copyOf(this.journal);
	}

	int attempts(String value) {
		AtomicInteger count = this.attempts.get(value);
		return (count != null) ? count.get() : 0;
	}

	boolean succeeded(String value) {
		return this.journal.stream().anyMatch((a) -> a.value().equals(value) && a.succeeded());
	}

	/** The values of a key in the order of their first successful handling. */
	List<String> firstSuccesses(String key) {
		return this.journal.stream()
			.filter((a) -> a.succeeded() && key.equals(a.key()))
			.map(Attempt::value)
			.distinct()
			.toList();
	}

	/** Every key's values in the order of their first successful handling. */
	Map<String, List<String>> firstSuccessesByKey() {
		return this.journal.stream()
			.filter(Attempt::succeeded)
			.collect(Collectors.groupingBy(Attempt::key, Collectors.mapping(Attempt::value,
					Collectors.collectingAndThen(Collectors.toList(), (list) -> list.stream().distinct().toList()))));
	}

}
