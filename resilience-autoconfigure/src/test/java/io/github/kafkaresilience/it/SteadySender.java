package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Sends records to a topic at a steady pace until closed (after which {@link #sent()}
 * holds exactly the records sent), round robin over a number of keys: the {@code n}th
 * record has key {@code k-<n mod keys>} and value
 * {@code k-<n mod keys>:<n div keys>:<rule>}. Steady traffic, as a service gets it, is
 * what keeps showing an outage once every key is held.
 */
final class SteadySender implements AutoCloseable {

	private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

	private final List<String[]> sent = new CopyOnWriteArrayList<>();

	private int next;

	private volatile boolean stopped;

	/**
	 * @param topic the topic
	 * @param keys how many keys
	 * @param every the pause between two records
	 * @param rule the last part of every value
	 */
	SteadySender(String topic, int keys, Duration every, String rule) {
		this.timer.scheduleAtFixedRate(() -> {
			if (this.stopped) {
				return;
			}
			int n = this.next++;
			String key = "k-" + (n % keys);
			String[] record = { key, key + ":" + (n / keys) + ":" + rule };
			SharedBroker.send(topic, record[0], record[1]);
			this.sent.add(record);
		}, 0, every.toMillis(), TimeUnit.MILLISECONDS);
	}

	/** The records sent so far, in the order sent. */
	List<String[]> sent() {
		return List.copyOf(this.sent);
	}

	/** The values sent so far, by key, in the order sent. */
	Map<String, List<String>> sentByKey() {
		Map<String, List<String>> byKey = new LinkedHashMap<>();
		this.sent.forEach((record) -> byKey.computeIfAbsent(record[0], (key) -> new ArrayList<>()).add(record[1]));
		return byKey;
	}

	@Override
	public void close() {
		// lets a send under way finish, so that every record sent is in sent() and no
		// other is
		this.stopped = true;
		this.timer.shutdown();
		try {
			this.timer.awaitTermination(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	static Duration pace(int perSecond) {
		return Duration.ofMillis(1000 / perSecond);
	}

}
