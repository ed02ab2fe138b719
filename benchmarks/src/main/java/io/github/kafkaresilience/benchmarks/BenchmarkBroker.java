package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Exit;

import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

/**
 * The one in-process KRaft broker of a suite run (spring-kafka-test's
 * {@link EmbeddedKafkaKraftBroker}), shared by every scenario and contender, with helpers
 * to create topics and fill them quickly.
 */
final class BenchmarkBroker implements AutoCloseable {

	private final EmbeddedKafkaKraftBroker broker;

	private final Admin admin;

	private final AtomicInteger topics = new AtomicInteger();

	private volatile boolean closed;

	private BenchmarkBroker(EmbeddedKafkaKraftBroker broker) {
		this.broker = broker;
		this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString()));
	}

	/**
	 * Starts a single-node broker. Transactions work on it (for
	 * {@code dual-write=transaction}), and a consumer group's first members are assigned
	 * their partitions 200 ms after the first joins (a broker's default is 3 s), so that
	 * the two consumers of an ordered-retry listener join its first generation together.
	 * @return the running broker
	 */
	static BenchmarkBroker start() {
		EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 1);
		broker.brokerProperty("group.initial.rebalance.delay.ms", "200");
		broker.brokerProperty("transaction.state.log.replication.factor", "1");
		broker.brokerProperty("transaction.state.log.min.isr", "1");
		broker.brokerProperty("transaction.state.log.num.partitions", "3");
		broker.brokerProperty("offsets.topic.num.partitions", "3");
		broker.brokerProperty("auto.create.topics.enable", "false");
		AtomicReference<BenchmarkBroker> started = new AtomicReference<>();
		// the broker deletes its data directory in a shutdown hook: on Ctrl+C stop it
		// first,
		// or the hook races with a broker still writing
		Exit.setShutdownHookAdder((name, hook) -> Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			BenchmarkBroker current = started.get();
			if (current != null) {
				current.close();
			}
			hook.run();
		}, name)));
		try {
			broker.afterPropertiesSet();
		}
		finally {
			Exit.resetShutdownHookAdder();
		}
		started.set(new BenchmarkBroker(broker));
		return started.get();
	}

	String bootstrapServers() {
		return this.broker.getBrokersAsString();
	}

	/**
	 * Creates a topic with a name that is new in this run.
	 * @param prefix the start of the name
	 * @param partitions the partition count
	 * @return the topic name
	 */
	String newTopic(String prefix, int partitions) {
		String topic = prefix + "-" + this.topics.incrementAndGet();
		createTopic(topic, partitions, Map.of());
		return topic;
	}

	void createTopic(String topic, int partitions, Map<String, String> configs) {
		try {
			this.admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs)))
				.all()
				.get(60, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not create topic '" + topic + "'", ex);
		}
	}

	/**
	 * Sends {@code count} records as fast as the broker takes them and waits until all
	 * are written.
	 * @param count how many records
	 * @param records the i-th record
	 */
	void fill(int count, IntFunction<ProducerRecord<byte[], byte[]>> records) {
		Map<String, Object> config = Map.of(ProducerConfig.LINGER_MS_CONFIG, 20, ProducerConfig.BATCH_SIZE_CONFIG,
				512 * 1024, ProducerConfig.BUFFER_MEMORY_CONFIG, 128L * 1024 * 1024);
		try (KafkaProducer<byte[], byte[]> producer = producer(config)) {
			AtomicReference<Exception> failure = new AtomicReference<>();
			for (int i = 0; i < count && failure.get() == null; i++) {
				producer.send(records.apply(i), (metadata, ex) -> {
					if (ex != null) {
						failure.compareAndSet(null, ex);
					}
				});
			}
			producer.flush();
			if (failure.get() != null) {
				throw new IllegalStateException("Could not fill a topic", failure.get());
			}
		}
	}

	/**
	 * Reads a topic from its beginning to its end as it is now and counts its records,
	 * tombstones included.
	 * @param topic the topic, which must exist
	 * @param timeout how long the reading may take at most
	 * @return the records, and how many of them are tombstones
	 */
	TopicCount count(String topic, Duration timeout) {
		Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
				ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false, ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer())) {
			List<TopicPartition> partitions = consumer.partitionsFor(topic, timeout)
				.stream()
				.map((info) -> new TopicPartition(topic, info.partition()))
				.toList();
			consumer.assign(partitions);
			consumer.seekToBeginning(partitions);
			Map<TopicPartition, Long> end = consumer.endOffsets(partitions, timeout);
			long deadline = System.nanoTime() + timeout.toNanos();
			long records = 0;
			long tombstones = 0;
			while (partitions.stream()
				.anyMatch((partition) -> consumer.position(partition, timeout) < end.get(partition))) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("Could not read topic '" + topic + "' within " + timeout);
				}
				for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
					if (record.offset() < end.get(new TopicPartition(topic, record.partition()))) {
						records++;
						if (record.value() == null) {
							tombstones++;
						}
					}
				}
			}
			return new TopicCount(records, tombstones);
		}
	}

	/**
	 * The records of a topic.
	 *
	 * @param records every record
	 * @param tombstones the records without a value
	 */
	record TopicCount(long records, long tombstones) {
	}

	/**
	 * A producer of raw bytes for this broker that sends the records of the scenarios
	 * ({@code acks=all}, which on one broker is one ack).
	 * <p>
	 * It is not idempotent: on a heavily loaded machine an idempotent producer was seen
	 * stuck on a new partition (an {@code OutOfOrderSequenceException} repeated until its
	 * batch expired). One request in flight keeps the order, and a duplicate from a retry
	 * does no harm: tallies count distinct records.
	 * @param overrides settings on top of the defaults
	 * @return a new producer; the caller closes it
	 */
	KafkaProducer<byte[], byte[]> producer(Map<String, Object> overrides) {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
		config.put(ProducerConfig.ACKS_CONFIG, "all");
		config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
		config.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
		config.putAll(overrides);
		return new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
	}

	@Override
	public synchronized void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		try {
			this.admin.close();
		}
		finally {
			this.broker.destroy();
		}
	}

}
