package io.github.kafkaresilience.it;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.ladder.RetryHeaders;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * What the test handler does with each value (fail transiently a number of times, fail
 * permanently), and a journal of every attempt, per main topic.
 */
final class Script {

	record Attempt(String key, String value, String topic, int retryCount, long recordTimestamp, Instant at,
			boolean succeeded) {
	}

	private static final Map<String, Script> BY_TOPIC = new ConcurrentHashMap<>();

	private final Map<String, Integer> transientFailures = new ConcurrentHashMap<>();

	private final Set<String> permanentFailures = ConcurrentHashMap.newKeySet();

	private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();

	private final List<Attempt> journal = new CopyOnWriteArrayList<>();

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

	void handle(ConsumerRecord<String, String> record) {
		String value = record.value();
		int attempt = this.attempts.computeIfAbsent(value, (v) -> new AtomicInteger()).incrementAndGet();
		String count = RetryHeaders.text(record.headers(), RetryHeaders.RETRY_COUNT);
		int retryCount = (count != null) ? Integer.parseInt(count) : 0;
		boolean fail = this.permanentFailures.contains(value) || attempt <= this.transientFailures.getOrDefault(value, 0);
		this.journal.add(new Attempt(record.key(), value, record.topic(), retryCount, record.timestamp(), Instant.now(), !fail));
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
