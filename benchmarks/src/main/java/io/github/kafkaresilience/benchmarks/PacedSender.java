package io.github.kafkaresilience.benchmarks;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Sends records at a steady rate on a thread of its own until it is stopped, record n on
 * key n modulo the keys, each value carrying its sequence number and the time it was
 * handed to the producer (a {@link Records#timedValue timed value}), or records that a
 * {@link Maker} makes. For a run whose length depends on what happens meanwhile (P9R
 * sends until the roll is over, P10 until a flood is handled): {@link #sent()} tells
 * which records were sent before a moment and which after it.
 */
final class PacedSender {

	private final KafkaProducer<byte[], byte[]> producer;

	private final String topic;

	private final int rate;

	private final Maker maker;

	private final int capacity;

	private final AtomicInteger sent = new AtomicInteger();

	private final AtomicReference<Exception> failure = new AtomicReference<>();

	private final Thread thread;

	private volatile boolean running = true;

	private volatile long behindNanos;

	/**
	 * @param broker the broker
	 * @param topic the topic
	 * @param rate records per second
	 * @param keys distinct keys, taken in turn
	 * @param valueBytes the size of each value
	 * @param capacity the most records it sends before stopping by itself
	 */
	PacedSender(BenchmarkBroker broker, String topic, int rate, int keys, int valueBytes, int capacity) {
		this(broker, topic, "p9r-sender", rate, capacity, (n, sentNanos) -> new ProducerRecord<>(topic,
				Records.key("key-" + (n % keys)), Records.timedValue(n, sentNanos, valueBytes)));
	}

	/**
	 * @param broker the broker
	 * @param topic the topic, which every record the maker makes is sent to
	 * @param name the name of the sending thread
	 * @param rate records per second
	 * @param capacity the most records it sends before stopping by itself
	 * @param maker makes record n, handed to the producer at the given time
	 */
	PacedSender(BenchmarkBroker broker, String topic, String name, int rate, int capacity, Maker maker) {
		// no linger, as in P3L: a record leaves as soon as the previous request is
		// answered
		this.producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0));
		this.topic = topic;
		this.rate = rate;
		this.maker = maker;
		this.capacity = capacity;
		this.thread = new Thread(this::send, name);
		this.thread.setDaemon(true);
	}

	/** Starts sending. */
	void start() {
		this.producer.partitionsFor(this.topic);
		this.thread.start();
	}

	/**
	 * Records handed to the producer so far: every record from this number on is sent
	 * later.
	 */
	int sent() {
		return this.sent.get();
	}

	/** Whether it stopped by itself, having sent as many records as it may. */
	boolean exhausted() {
		return this.sent.get() >= this.capacity;
	}

	/**
	 * Stops sending, waits until the producer has sent what it was given, and closes it.
	 * @return how many records were sent
	 * @throws IllegalStateException if a record could not be sent
	 */
	int stop() throws InterruptedException {
		this.running = false;
		this.thread.join();
		try {
			this.producer.flush();
		}
		finally {
			this.producer.close();
		}
		Exception failure = this.failure.get();
		if (failure != null) {
			throw new IllegalStateException("A record could not be sent", failure);
		}
		return this.sent.get();
	}

	/** How far, at most, a record was handed over after its due time, in milliseconds. */
	double behindMillis() {
		return this.behindNanos / 1e6;
	}

	private void send() {
		long start = System.nanoTime();
		long behind = 0;
		int next = 0;
		try {
			while (this.running && next < this.capacity) {
				long elapsed = System.nanoTime() - start;
				long due = Math.min(this.capacity, elapsed * this.rate / 1_000_000_000L + 1);
				for (; next < due && this.running; next++) {
					long now = System.nanoTime();
					behind = Math.max(behind, now - (start + next * 1_000_000_000L / this.rate));
					this.producer.send(this.maker.make(next, now), (metadata, ex) -> {
						if (ex != null) {
							this.failure.compareAndSet(null, ex);
						}
					});
					this.sent.set(next + 1);
				}
				this.behindNanos = behind;
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
			}
		}
		catch (RuntimeException ex) {
			this.failure.compareAndSet(null, ex);
		}
	}

	/** Makes the records a sender sends. */
	@FunctionalInterface
	interface Maker {

		/**
		 * Makes record {@code n}.
		 * @param n the records sent before it
		 * @param sentNanos {@link System#nanoTime()} just before it is handed to the
		 * producer
		 * @return the record
		 */
		ProducerRecord<byte[], byte[]> make(int n, long sentNanos);

	}

}
