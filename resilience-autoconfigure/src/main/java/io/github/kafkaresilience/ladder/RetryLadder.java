package io.github.kafkaresilience.ladder;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import io.github.kafkaresilience.lock.LockRegistry;
import io.github.kafkaresilience.support.KafkaFutures;
import io.github.kafkaresilience.support.ProducerClients;
import io.github.kafkaresilience.support.ProducerSettings;
import io.github.kafkaresilience.support.Sends;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;

/**
 * The retry ladders of this instance: plans the topics of a main topic from the configured
 * name templates, provisions them, and publishes records to retry and dead-letter topics.
 * <p>
 * Its producer sends on the records the main topics accepted, with a few headers more: when
 * a main topic accepts larger records than Kafka's default and the application did not set
 * {@code max.request.size}, the producer allows that size plus 16 KiB for the headers.
 *
 * @since 0.1.0
 */
public class RetryLadder implements RecordPublisher, DisposableBean {

	private static final Log logger = LogFactory.getLog(RetryLadder.class);

	/**
	 * Name templates of the library's topics; {@code {group}} is the listener's consumer group,
	 * {@code {topic}} the main topic and {@code {delay}} the stage delay in its shortest exact
	 * unit.
	 * @param retry retry topic template
	 * @param dlq dead-letter topic template
	 * @param locks lock topic template
	 */
	public record Naming(String retry, String dlq, String locks) {

		public static Naming defaults() {
			return new Naming(LadderPlan.DEFAULT_RETRY_TEMPLATE, LadderPlan.DEFAULT_DLQ_TEMPLATE,
					LadderPlan.DEFAULT_LOCK_TEMPLATE);
		}

	}

	/**
	 * How the ladders' topics are created and checked.
	 * @param create whether missing topics are created
	 * @param replicationFactor replication factor of created topics, -1 for the broker default
	 * @param retryRetention retention of retry topics
	 * @param dlqRetention retention of dead-letter topics
	 * @param lockSegment segment time of lock topics (compaction only cleans closed segments)
	 * @param lockDeleteRetention how long lock tombstones are kept
	 * @param checkUnscoped whether a group-scoped ladder first checks that its group has nothing
	 * waiting under the topic names of releases before group-scoped ladders
	 */
	public record Topics(boolean create, short replicationFactor, Duration retryRetention, Duration dlqRetention,
			Duration lockSegment, Duration lockDeleteRetention, boolean checkUnscoped) {

		/** Settings that check the earlier names. */
		public Topics(boolean create, short replicationFactor, Duration retryRetention, Duration dlqRetention,
				Duration lockSegment, Duration lockDeleteRetention) {
			this(create, replicationFactor, retryRetention, dlqRetention, lockSegment, lockDeleteRetention, true);
		}

	}

	private final Naming naming;

	private final TopicProvisioner provisioner;

	private final ProducerClients producers;

	private final Map<String, Object> producerConfig;

	private final Duration publishTimeout;

	private volatile @Nullable Producer<byte[], byte[]> producer;

	private final Sends sends;

	/** The largest record the producer must send, from the main topics provisioned so far. */
	private int largestRecord;

	/**
	 * @param naming the name templates of the ladders' topics
	 * @param adminConfig the configuration of the admin clients that create or check the
	 * topics of a ladder
	 * @param topics how the topics are created and checked
	 * @param producers creates the retry publisher
	 * @param instanceId the stable id of this instance, in the publisher's client id
	 * @param publishTimeout how long a publish may take before it fails
	 */
	public RetryLadder(Naming naming, Map<String, Object> adminConfig, Topics topics, ProducerClients producers,
			String instanceId, Duration publishTimeout) {
		this.naming = naming;
		this.provisioner = new TopicProvisioner(adminConfig, topics);
		this.producers = producers;
		this.producerConfig = ProducerSettings.forAwaitedWrites(producers.configuration(),
				"kafka-resilience-ladder-" + instanceId, null, publishTimeout);
		this.publishTimeout = publishTimeout;
		this.sends = new Sends("kafka-resilience-ladder-" + instanceId);
	}

	/** The ladder of a consumer group on a main topic. */
	public LadderPlan plan(String group, String mainTopic, List<Duration> delays, @Nullable Integer maxAttempts) {
		return LadderPlan.of(group, mainTopic, delays, maxAttempts, this.naming.retry(), this.naming.dlq(),
				this.naming.locks());
	}

	/**
	 * The startup check of a ladder's ownership (docs/PROTOCOL.md, "Topics"): refuses to start when another
	 * consumer group wrote live locks to its lock topic or records among the latest of its
	 * retry and dead-letter partitions.
	 * @param plan the ladder, whose lock tailer runs
	 * @param locks the ladder's locks
	 * @param consumers creates a consumer outside any group, reading from the earliest offset
	 * @param timeout how long the lock tailer may take to catch up, and the latest records to
	 * be read
	 * @throws LadderStartupException naming the groups, the topics and the fix when another
	 * group wrote to them
	 */
	public void checkOwnership(LadderPlan plan, LockRegistry locks, Supplier<Consumer<byte[], byte[]>> consumers,
			Duration timeout) {
		new OwnershipCheck(consumers, timeout).check(plan, locks);
	}

	/**
	 * Creates or checks the topics of a plan.
	 * @return the partition count shared by all of them
	 */
	public int provision(LadderPlan plan) {
		TopicProvisioner.Provisioned provisioned = this.provisioner.provisionLadder(plan);
		allowRecordsOf(plan.mainTopic(), provisioned.maxMessageBytes());
		return provisioned.partitions();
	}

	/**
	 * Notes that the producer must send on the records of a main topic that accepts records
	 * of {@code maxMessageBytes}; only a topic above Kafka's default matters.
	 */
	private synchronized void allowRecordsOf(String mainTopic, int maxMessageBytes) {
		if (maxMessageBytes <= TopicProvisioner.DEFAULT_MAX_MESSAGE_BYTES) {
			return;
		}
		int needed = (int) Math.min(Integer.MAX_VALUE, (long) maxMessageBytes + TopicProvisioner.HEADER_ALLOWANCE);
		if (this.producerConfig.containsKey(ProducerConfig.MAX_REQUEST_SIZE_CONFIG)) {
			int configured = ProducerSettings.maxRequestSize(this.producerConfig);
			if (configured < maxMessageBytes) {
				logger.warn("Topic '" + mainTopic + "' accepts records up to " + maxMessageBytes
						+ " bytes but spring.kafka.producer.properties.max.request.size is " + configured
						+ ": a larger record can be neither retried nor dead-lettered, and its partition stops. Raise it "
						+ "to " + needed + " or more");
			}
			return;
		}
		if (needed > this.largestRecord) {
			this.largestRecord = needed;
			if (this.producer != null) {
				logger.warn("Topic '" + mainTopic + "' accepts records up to " + maxMessageBytes + " bytes but the retry "
						+ "publisher already runs: records larger than it allows can be neither retried nor "
						+ "dead-lettered until the next start");
			}
		}
	}

	@Override
	public long publish(String topic, int partition, byte @Nullable [] key, byte @Nullable [] value, Headers headers) {
		ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, partition, null, key, value, headers);
		return KafkaFutures.await(producer().send(record), this.publishTimeout,
				"publish to '" + topic + "' partition " + partition).offset();
	}

	@Override
	public CompletableFuture<Long> sending(String topic, int partition, byte @Nullable [] key, byte @Nullable [] value,
			Headers headers) {
		ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, partition, null, key, value, headers);
		return this.sends.send(producer(), record, this.publishTimeout, "publish to '" + topic + "' partition " + partition)
			.thenApply(RecordMetadata::offset);
	}

	@Override
	public void destroy() {
		this.sends.close();
		Producer<byte[], byte[]> current = this.producer;
		if (current != null) {
			this.producers.close(current, Duration.ofSeconds(5));
		}
	}

	private Producer<byte[], byte[]> producer() {
		Producer<byte[], byte[]> current = this.producer;
		if (current == null) {
			synchronized (this) {
				current = this.producer;
				if (current == null) {
					current = this.producers.create(ProducerSettings.sending(this.producerConfig, this.largestRecord));
					this.producer = current;
				}
			}
		}
		return current;
	}

}
