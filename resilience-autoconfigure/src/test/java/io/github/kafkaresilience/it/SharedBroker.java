package io.github.kafkaresilience.it;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Assumptions;

import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

/**
 * One real broker shared by every integration test of the JVM; tests keep apart by using
 * topics of their own.
 * <p>
 * By default an in-process KRaft broker. With the system property
 * {@code kafka.broker=testcontainers} (the {@code testcontainers} Maven profile) a Kafka
 * container instead ({@link KafkaContainerBroker}); where Docker is absent, test classes
 * marked {@link UsesSharedBroker} are then skipped with the reason rather than failed.
 */
final class SharedBroker {

	/**
	 * The system property that picks the broker: {@code embedded} (the default) or
	 * {@code testcontainers}.
	 */
	static final String BROKER_PROPERTY = "kafka.broker";

	/**
	 * Settings both kinds of broker get: a new group's first rebalance waits 200 ms for
	 * more members, as a broker does (3 s by default), so that the two consumers of a
	 * listener join its first generation together rather than one rebalancing the other,
	 * a log cleaner that looks for work every second (the lock topics are compacted), a
	 * small transaction log on one broker, three partitions for topics created on first
	 * use, and for groups of the {@code consumer} protocol a session of 15 s with a
	 * heartbeat every second (the broker decides them; the classic protocol's consumers
	 * are told theirs where a test needs).
	 */
	static final Map<String, String> BROKER_SETTINGS = Map.ofEntries(
			Map.entry("group.initial.rebalance.delay.ms", "200"), Map.entry("log.cleaner.backoff.ms", "1000"),
			Map.entry("transaction.state.log.replication.factor", "1"), Map.entry("transaction.state.log.min.isr", "1"),
			Map.entry("transaction.state.log.num.partitions", "3"), Map.entry("num.partitions", "3"),
			Map.entry("group.consumer.session.timeout.ms", "15000"),
			Map.entry("group.consumer.min.session.timeout.ms", "6000"),
			Map.entry("group.consumer.heartbeat.interval.ms", "1000"),
			Map.entry("group.consumer.min.heartbeat.interval.ms", "1000"));

	private static String bootstrapServers;

	private static KafkaProducer<byte[], byte[]> producer;

	private SharedBroker() {
	}

	static synchronized String bootstrapServers() {
		if (bootstrapServers == null) {
			if (onContainer()) {
				// for a test that lacks @UsesSharedBroker: aborted (skipped) rather than
				// failed
				Assumptions.assumeTrue(KafkaContainerBroker.dockerAvailable(), KafkaContainerBroker.NO_DOCKER);
				bootstrapServers = KafkaContainerBroker.start(BROKER_SETTINGS);
				// what the in-process broker sets as well, so that both behave alike
				System.setProperty("spring.kafka.bootstrap-servers", bootstrapServers);
				System.setProperty("spring.embedded.kafka.brokers", bootstrapServers);
			}
			else {
				bootstrapServers = startEmbedded();
			}
		}
		return bootstrapServers;
	}

	/**
	 * Whether the broker tests run on a Kafka container rather than the in-process
	 * broker.
	 */
	static boolean onContainer() {
		String broker = System.getProperty(BROKER_PROPERTY, "embedded");
		if (!broker.equals("embedded") && !broker.equals("testcontainers")) {
			throw new IllegalArgumentException("-D" + BROKER_PROPERTY + "=" + broker
					+ " is not a broker the tests know; use 'embedded' or 'testcontainers'");
		}
		return broker.equals("testcontainers");
	}

	private static String startEmbedded() {
		EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 3);
		BROKER_SETTINGS.forEach(broker::brokerProperty);
		broker.afterPropertiesSet();
		Runtime.getRuntime().addShutdownHook(new Thread(broker::destroy));
		return broker.getBrokersAsString();
	}

	/**
	 * A key that the default partitioner puts in {@code partition} of a topic with
	 * {@code partitions} partitions: {@code prefix} followed by a number.
	 */
	static String keyIn(int partition, int partitions, String prefix) {
		for (int i = 0;; i++) {
			String key = prefix + i;
			if (Utils.toPositive(Utils.murmur2(key.getBytes())) % partitions == partition) {
				return key;
			}
		}
	}

	static String newTopic(int partitions) {
		String topic = "t" + UUID.randomUUID().toString().substring(0, 8);
		createTopic(topic, partitions, Map.of());
		return topic;
	}

	static void createTopic(String topic, int partitions, Map<String, String> configs) {
		try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()))) {
			admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs)))
				.all()
				.get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	static synchronized void send(String topic, String key, String value) {
		send(topic, (key != null) ? key.getBytes() : null, value.getBytes());
	}

	/** Sends records (key, value pairs) without waiting for each, then waits for all. */
	static synchronized void sendAll(String topic, List<String[]> keyValues) {
		producer();
		List<Future<?>> sent = new ArrayList<>();
		for (String[] kv : keyValues) {
			sent.add(producer
				.send(new ProducerRecord<>(topic, (kv[0] != null) ? kv[0].getBytes() : null, kv[1].getBytes())));
		}
		producer.flush();
		try {
			for (Future<?> future : sent) {
				future.get(30, TimeUnit.SECONDS);
			}
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	static synchronized void send(String topic, byte[] key, byte[] value) {
		send(new ProducerRecord<>(topic, key, value));
	}

	static synchronized void send(ProducerRecord<byte[], byte[]> record) {
		try {
			producer().send(record).get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static KafkaProducer<byte[], byte[]> producer() {
		if (producer == null) {
			Map<String, Object> config = new HashMap<>();
			config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
			config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
			producer = new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
		}
		return producer;
	}

	/**
	 * Every record of a topic (all partitions), read from the beginning to the current
	 * end.
	 */
	static List<ConsumerRecord<byte[], byte[]>> readAll(String topic) {
		return readAll(topic, false);
	}

	/**
	 * Every record of a topic (all partitions), read from the beginning to the current
	 * end.
	 * @param committedOnly whether to read as a read-committed consumer: records of
	 * aborted and still open transactions are left out
	 */
	static List<ConsumerRecord<byte[], byte[]>> readAll(String topic, boolean committedOnly) {
		return TopicTail.readAll(bootstrapServers(), topic, committedOnly);
	}

	/** The offset a group committed on a partition, or -1 when it has committed none. */
	static long committed(String group, String topic, int partition) {
		try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()))) {
			OffsetAndMetadata offset = admin.listConsumerGroupOffsets(group)
				.partitionsToOffsetAndMetadata()
				.get(30, TimeUnit.SECONDS)
				.get(new TopicPartition(topic, partition));
			return (offset != null) ? offset.offset() : -1;
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

}
