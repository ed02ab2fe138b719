package io.github.kafkaresilience.internal.ladder;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.internal.support.KafkaFutures;
import io.github.kafkaresilience.internal.support.ProducerClients;
import io.github.kafkaresilience.internal.support.ProducerSettings;
import io.github.kafkaresilience.internal.support.Sends;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;

/**
 * Publishes records to the retry and dead-letter topics of this instance's ladders in
 * {@code compensate} mode, with a producer of its own.
 * <p>
 * The producer sends on the records the main topics accepted, with a few headers more:
 * when a main topic accepts larger records than Kafka's default and the application did
 * not set {@code max.request.size}, the producer allows that size plus 16 KiB for the
 * headers.
 *
 * @since 0.1.0
 */
public class LadderPublisher implements RecordPublisher, DisposableBean {

	private static final Log logger = LogFactory.getLog(LadderPublisher.class);

	/**
	 * Kafka's default {@code message.max.bytes}: what a topic accepts unless configured.
	 */
	private static final int DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024 + 12;

	private final ProducerClients producers;

	private final Map<String, Object> producerConfig;

	private final Duration publishTimeout;

	private volatile @Nullable Producer<byte[], byte[]> producer;

	private final Sends sends;

	/**
	 * The largest record the producer must send, from the main topics provisioned so far.
	 */
	private int largestRecord;

	/**
	 * @param producers creates the producer
	 * @param instanceId the stable id of this instance, in the producer's client id
	 * @param publishTimeout how long a publish may take before it fails
	 */
	public LadderPublisher(ProducerClients producers, String instanceId, Duration publishTimeout) {
		this.producers = producers;
		this.producerConfig = ProducerSettings.forAwaitedWrites(producers.configuration(),
				"kafka-resilience-ladder-" + instanceId, null, publishTimeout);
		this.publishTimeout = publishTimeout;
		this.sends = new Sends("kafka-resilience-ladder-" + instanceId);
	}

	/**
	 * Notes that the producer must send on the records of a main topic that accepts
	 * records of {@code maxMessageBytes}; only a topic above Kafka's default matters.
	 */
	public synchronized void allowRecordsOf(String mainTopic, int maxMessageBytes) {
		if (maxMessageBytes <= DEFAULT_MAX_MESSAGE_BYTES) {
			return;
		}
		int needed = (int) Math.min(Integer.MAX_VALUE, (long) maxMessageBytes + ProtocolHeaders.HEADER_ALLOWANCE);
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
				logger
					.warn("Topic '" + mainTopic + "' accepts records up to " + maxMessageBytes + " bytes but the retry "
							+ "publisher already runs: records larger than it allows can be neither retried nor "
							+ "dead-lettered until the next start");
			}
		}
	}

	@Override
	public long publish(String topic, int partition, byte @Nullable [] key, byte @Nullable [] value, Headers headers) {
		ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, partition, null, key, value, headers);
		return KafkaFutures
			.await(producer().send(record), this.publishTimeout, "publish to '" + topic + "' partition " + partition)
			.offset();
	}

	@Override
	public CompletableFuture<Long> sending(String topic, int partition, byte @Nullable [] key, byte @Nullable [] value,
			Headers headers) {
		ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, partition, null, key, value, headers);
		return this.sends
			.send(producer(), record, this.publishTimeout, "publish to '" + topic + "' partition " + partition)
			.thenApply(RecordMetadata::offset);
	}

	/** {@inheritDoc} Without a partition, the producer's partitioner picks one. */
	@Override
	public CompletableFuture<Long> replying(ProducerRecord<byte[], byte[]> reply) {
		return this.sends.send(producer(), reply, this.publishTimeout, "reply to '" + reply.topic() + "'")
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
