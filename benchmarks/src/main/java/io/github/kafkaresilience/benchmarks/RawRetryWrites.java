package io.github.kafkaresilience.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.lock.LockCodec;
import io.github.kafkaresilience.internal.lock.Ownership;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The raw-writes bound of a failure: the Kafka writes and reads that a record failing
 * once costs the library, made with bare clients and nothing else. It tells how much of
 * the library's cost per failed record is Kafka's own work, which no implementation of
 * the protocol avoids, and how much is the library's.
 * <p>
 * A bare {@link KafkaConsumer} poll loop (as {@link RawConsumerLoop}: client defaults,
 * auto commit) calls the handler inline. For a record whose handler throws, one plain
 * producer ({@code acks=all}, {@code linger.ms=5}) writes what a move writes, each write
 * once the broker confirmed the one before, as the protocol orders them: the lock as
 * moving to stage 1, the record to the retry topic (key, value and the protocol headers),
 * the lock as confirmed at the offset the record got. A second consumer reads the retry
 * topic once, keeps each record in memory until it is due, then calls the handler and
 * writes the lock's tombstone. A third consumer tails the lock topic from its start, as
 * the library's lock tailer does, and only counts what it reads. No lock table, no key
 * order, no offsets beyond the consumers' auto commit, no undo: the values are cheap
 * concatenations of the library's lock document and headers of about the same sizes.
 */
final class RawRetryWrites implements AutoCloseable {

	/**
	 * The writer id in the lock records' headers (the library writes its instance id).
	 */
	private static final String COORDINATOR = "raw-writes";

	private final String retryTopic;

	private final String lockTopic;

	private final String group;

	private final long delayMillis;

	private final Workload workload;

	private final KafkaProducer<byte[], byte[]> producer;

	private final AtomicLong lockRecordsRead = new AtomicLong();

	private final AtomicReference<Throwable> failure = new AtomicReference<>();

	private final List<Thread> threads = new ArrayList<>();

	private volatile boolean closed;

	private RawRetryWrites(BenchmarkBroker broker, String retryTopic, String lockTopic, String group, Duration delay,
			Workload workload) {
		this.retryTopic = retryTopic;
		this.lockTopic = lockTopic;
		this.group = group;
		this.delayMillis = delay.toMillis();
		this.workload = workload;
		this.producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 5));
	}

	/**
	 * Creates the retry topic and the compacted lock topic, and starts consuming
	 * {@code topic} in a new group, its retry topic and its lock topic, each on a thread
	 * of its own.
	 * @param broker the broker
	 * @param topic the main topic
	 * @param group the consumer group of the main topic, and the start of the other names
	 * @param partitions the partitions of the main topic, and so of the retry and lock
	 * topics
	 * @param delay how long a failed record waits in the retry topic
	 * @param workload what the handler does; a record whose handler throws is retried
	 * once
	 * @return the running bound; closing it stops it
	 */
	static RawRetryWrites start(BenchmarkBroker broker, String topic, String group, int partitions, Duration delay,
			Workload workload) {
		String retryTopic = group + "." + topic + ".retry";
		String lockTopic = group + "." + topic + ".locks";
		broker.createTopic(retryTopic, partitions, Map.of());
		broker.createTopic(lockTopic, partitions,
				Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
		RawRetryWrites raw = new RawRetryWrites(broker, retryTopic, lockTopic, group, delay, workload);
		// a send waits for its topic's metadata, which the producer's own thread fetches:
		// a first
		// send from a callback, on that thread, would wait for itself
		raw.producer.partitionsFor(retryTopic);
		raw.producer.partitionsFor(lockTopic);
		String servers = broker.bootstrapServers();
		raw.spawn("main", () -> raw.consumeMain(servers, topic));
		raw.spawn("retry", () -> raw.consumeRetries(servers));
		raw.spawn("locks", () -> raw.tailLocks(servers, partitions));
		return raw;
	}

	/**
	 * Waits until every record of the tally was handled, or a thread of the bound failed.
	 * @param tally the tally the workload fills
	 * @param timeout how long to wait at most
	 * @return whether the tally is complete
	 * @throws IllegalStateException when a thread of the bound failed
	 */
	boolean await(Tally tally, Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!tally.await(Duration.ofMillis(100))) {
			rethrow();
			if (System.nanoTime() - deadline >= 0) {
				return false;
			}
		}
		rethrow();
		return true;
	}

	/**
	 * Waits until the lock tailer has read {@code expected} lock records (three per
	 * failed record: moving, confirmed and the tombstone).
	 * @param expected how many
	 * @param timeout how long to wait at most
	 * @throws IllegalStateException when they were not read in time, or a thread of the
	 * bound failed
	 */
	void awaitLockRecords(long expected, Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (this.lockRecordsRead.get() < expected) {
			rethrow();
			if (System.nanoTime() - deadline >= 0) {
				throw new IllegalStateException("The lock tailer read " + this.lockRecordsRead.get() + " of " + expected
						+ " lock records within " + timeout.toSeconds() + " s");
			}
			if (Thread.interrupted()) {
				throw new InterruptedException();
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
		}
		rethrow();
	}

	@Override
	public void close() throws InterruptedException {
		this.closed = true;
		for (Thread thread : this.threads) {
			thread.join();
		}
		this.producer.close();
		rethrow();
	}

	private void consumeMain(String servers, String topic) throws Exception {
		try (KafkaConsumer<byte[], byte[]> consumer = consumer(servers, this.group)) {
			consumer.subscribe(List.of(topic));
			while (!this.closed) {
				for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
					try {
						this.workload.handle(record);
					}
					catch (InterruptedException ex) {
						throw ex;
					}
					catch (Exception ex) {
						move(record, ex);
					}
				}
			}
		}
	}

	/** The three writes of a move, each sent from the confirmation of the one before. */
	private void move(ConsumerRecord<byte[], byte[]> record, Exception ex) {
		int partition = record.partition();
		long offset = record.offset();
		byte[] lockId = LockCodec.encodeId(UUID.randomUUID().toString());
		Headers lockHeaders = lockHeaders(record.key());
		String now = Instant.now().toString();
		String message = (ex.getMessage() != null) ? ex.getMessage() : "";
		String exception = ex.getClass().getName();
		byte[] moving = ("{\"v\":1,\"origin\":{\"partition\":" + partition + ",\"offset\":" + offset
				+ "},\"stage\":1,\"from\":{\"stage\":0,\"offset\":" + offset
				+ "},\"retryCount\":1,\"failure\":{\"class\":\"" + ProtocolHeaders.TRANSIENT + "\",\"message\":\""
				+ message + "\",\"exception\":\"" + exception + "\",\"timestamp\":\"" + now + "\"},\"updated\":\"" + now
				+ "\"}")
			.getBytes(StandardCharsets.UTF_8);
		this.producer.send(new ProducerRecord<>(this.lockTopic, partition, null, lockId, moving, lockHeaders),
				(locked, lockFailure) -> {
					if (lockFailure != null) {
						fail(lockFailure);
						return;
					}
					Headers headers = new RecordHeaders();
					record.headers().forEach(headers::add);
					put(headers, ProtocolHeaders.ORIGINAL_TOPIC, record.topic());
					put(headers, ProtocolHeaders.ORIGINAL_PARTITION, Integer.toString(partition));
					put(headers, ProtocolHeaders.ORIGINAL_OFFSET, Long.toString(offset));
					put(headers, ProtocolHeaders.RETRY_COUNT, "1");
					put(headers, ProtocolHeaders.PREVIOUS_TOPIC, record.topic());
					headers.add(ProtocolHeaders.LOCK_ID, lockId);
					put(headers, ProtocolHeaders.ERROR_CLASS, ProtocolHeaders.TRANSIENT);
					put(headers, ProtocolHeaders.ERROR_MESSAGE, message);
					put(headers, ProtocolHeaders.ERROR_EXCEPTION, exception);
					put(headers, ProtocolHeaders.ERROR_TIMESTAMP, now);
					put(headers, Ownership.HEADER, this.group);
					this.producer.send(new ProducerRecord<>(this.retryTopic, partition, null, record.key(),
							record.value(), headers), (published, publishFailure) -> {
								if (publishFailure != null) {
									fail(publishFailure);
									return;
								}
								byte[] confirmed = ("{\"v\":1,\"origin\":{\"partition\":" + partition + ",\"offset\":"
										+ offset + "},\"stage\":1,\"at\":" + published.offset() + ",\"retryCount\":1,"
										+ "\"updated\":\"" + Instant.now() + "\"}")
									.getBytes(StandardCharsets.UTF_8);
								this.producer.send(new ProducerRecord<>(this.lockTopic, partition, null, lockId,
										confirmed, lockHeaders), (written, confirmFailure) -> {
											if (confirmFailure != null) {
												fail(confirmFailure);
											}
										});
							});
				});
	}

	/**
	 * Reads each stage record once, runs it when due, then writes its lock's tombstone.
	 */
	private void consumeRetries(String servers) throws Exception {
		PriorityQueue<ConsumerRecord<byte[], byte[]>> waiting = new PriorityQueue<>(
				Comparator.comparingLong(ConsumerRecord::timestamp));
		try (KafkaConsumer<byte[], byte[]> consumer = consumer(servers, this.group + "-retry")) {
			consumer.subscribe(List.of(this.retryTopic));
			while (!this.closed) {
				long wait = waiting.isEmpty() ? 100 : Math.max(0,
						Math.min(100, waiting.peek().timestamp() + this.delayMillis - System.currentTimeMillis()));
				for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(wait))) {
					waiting.add(record);
				}
				long now = System.currentTimeMillis();
				while (!waiting.isEmpty() && waiting.peek().timestamp() + this.delayMillis <= now) {
					ConsumerRecord<byte[], byte[]> record = waiting.poll();
					this.workload.handle(record);
					Header lockId = record.headers().lastHeader(ProtocolHeaders.LOCK_ID);
					this.producer.send(new ProducerRecord<>(this.lockTopic, record.partition(), null, lockId.value(),
							null, lockHeaders(record.key())), (released, releaseFailure) -> {
								if (releaseFailure != null) {
									fail(releaseFailure);
								}
							});
				}
			}
		}
	}

	private void tailLocks(String servers, int partitions) {
		Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers,
				ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false, ConsumerConfig.CLIENT_ID_CONFIG,
				this.group + "-locks");
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer())) {
			List<TopicPartition> assigned = new ArrayList<>();
			for (int i = 0; i < partitions; i++) {
				assigned.add(new TopicPartition(this.lockTopic, i));
			}
			consumer.assign(assigned);
			consumer.seekToBeginning(assigned);
			while (!this.closed) {
				this.lockRecordsRead.addAndGet(consumer.poll(Duration.ofMillis(100)).count());
			}
		}
	}

	private Headers lockHeaders(byte[] key) {
		Headers headers = new RecordHeaders();
		headers.add(LockCodec.BUSINESS_KEY, key);
		put(headers, LockCodec.COORDINATOR_ID, COORDINATOR);
		put(headers, Ownership.HEADER, this.group);
		return headers;
	}

	private static void put(Headers headers, String name, String value) {
		headers.add(name, value.getBytes(StandardCharsets.UTF_8));
	}

	private static KafkaConsumer<byte[], byte[]> consumer(String servers, String group) {
		Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers,
				ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
				ConsumerConfig.CLIENT_ID_CONFIG, group);
		return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
	}

	private void spawn(String name, Loop loop) {
		Thread thread = new Thread(() -> {
			try {
				loop.run();
			}
			catch (Throwable ex) {
				fail(ex);
			}
		}, "raw-writes-" + this.group + "-" + name);
		thread.setDaemon(true);
		this.threads.add(thread);
		thread.start();
	}

	private void fail(Throwable ex) {
		this.failure.compareAndSet(null, ex);
	}

	private void rethrow() {
		Throwable ex = this.failure.get();
		if (ex != null) {
			throw new IllegalStateException("The raw-writes bound failed: " + ex, ex);
		}
	}

	@FunctionalInterface
	private interface Loop {

		void run() throws Exception;

	}

}
