package io.github.kafkaresilience.it;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.kafkaresilience.PermanentFailureException;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import org.springframework.kafka.listener.BatchListenerFailedException;

/**
 * What the listeners of a main topic did, whichever instance ran them, and how the
 * handler fails: a value marked {@code X} fails transiently on every attempt, {@code F}
 * on the main topic only, {@code P} permanently; while {@link #down} every record fails,
 * as when the handler's dependency is down.
 */
final class HandlingJournal {

	/** One run of the handler on a record. */
	record Handling(String instance, String key, String value, String topic, int partition, boolean succeeded,
			long nanos) {
	}

	private static final Map<String, HandlingJournal> journals = new ConcurrentHashMap<>();

	private final String topic;

	private final List<Handling> handlings = new CopyOnWriteArrayList<>();

	private volatile boolean down;

	private volatile int sameKeyInOneBatch;

	private volatile int outOfOrderInOneBatch;

	private HandlingJournal(String topic) {
		this.topic = topic;
	}

	static HandlingJournal forTopic(String topic) {
		HandlingJournal journal = new HandlingJournal(topic);
		journals.put(topic, journal);
		return journal;
	}

	static HandlingJournal of(String topic) {
		return journals.get(topic);
	}

	void down(boolean down) {
		this.down = down;
	}

	/** Runs one record; returns the failure it ends with, or null. */
	RuntimeException run(String instance, ConsumerRecord<String, String> record) {
		String value = record.value();
		RuntimeException failure = null;
		if (this.down) {
			failure = new IllegalStateException("503 Service Unavailable");
		}
		else if (value.startsWith("P")) {
			failure = new PermanentFailureException("cannot handle " + value);
		}
		else if (value.startsWith("X") || (value.startsWith("F") && record.topic().equals(this.topic))) {
			failure = new IllegalStateException(value + " fails on " + record.topic());
		}
		this.handlings.add(new Handling(instance, record.key(), value, record.topic(), record.partition(),
				failure == null, System.nanoTime()));
		return failure;
	}

	/** Runs a batch as a method that names the record it failed on by its index. */
	void runBatch(String instance, List<ConsumerRecord<String, String>> records) {
		if (records.stream().map(ConsumerRecord::key).distinct().count() < records.size()) {
			this.sameKeyInOneBatch++;
		}
		Map<String, ConsumerRecord<String, String>> last = new HashMap<>();
		for (ConsumerRecord<String, String> record : records) {
			ConsumerRecord<String, String> before = last.put(record.key(), record);
			if (before != null && (!before.topic().equals(record.topic()) || before.partition() != record.partition()
					|| before.offset() >= record.offset())) {
				this.outOfOrderInOneBatch++;
			}
		}
		for (int i = 0; i < records.size(); i++) {
			RuntimeException failure = run(instance, records.get(i));
			if (failure != null) {
				throw new BatchListenerFailedException("record " + i + " failed", failure, i);
			}
		}
	}

	List<Handling> handlings() {
		return List.copyOf(this.handlings);
	}

	List<Handling> handlingsOf(String key) {
		return this.handlings.stream().filter((h) -> key.equals(h.key())).toList();
	}

	int sameKeyInOneBatch() {
		return this.sameKeyInOneBatch;
	}

	int outOfOrderInOneBatch() {
		return this.outOfOrderInOneBatch;
	}

	/** How often a value was handled successfully. */
	long successes(String value) {
		return this.handlings.stream().filter((h) -> h.succeeded() && h.value().equals(value)).count();
	}

	/** The values of some keys in the order of their first success. */
	Map<String, List<String>> firstSuccessesByKey(Collection<String> keys) {
		Map<String, List<String>> byKey = new LinkedHashMap<>();
		keys.forEach((key) -> byKey.put(key, new ArrayList<>()));
		for (Handling handling : this.handlings) {
			List<String> values = byKey.get(handling.key());
			if (handling.succeeded() && values != null && !values.contains(handling.value())) {
				values.add(handling.value());
			}
		}
		return byKey;
	}

}
