package io.github.kafkaresilience.observation;

import java.util.function.Supplier;

import io.github.kafkaresilience.ladder.HandlerResult;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.support.micrometer.KafkaRecordReceiverContext;

/**
 * The context of an attempt's observation: spring-kafka's context of a record a listener
 * receives (the record as it was read, with its raw key and value, the listener id and
 * the consumer group), plus the stage the record was read from and, once the listener
 * method has run, the attempt's outcome.
 *
 * @since 0.1.0
 */
public class AttemptContext extends KafkaRecordReceiverContext {

	private final int stage;

	private volatile HandlerResult.@Nullable Outcome outcome;

	/**
	 * @param record the record as it was read, with the headers it arrived with
	 * @param listenerId the listener's id
	 * @param clientId the consumer's client id, or {@code null}
	 * @param groupId the listener's consumer group
	 * @param clusterId the Kafka cluster id, asked for once here
	 * @param stage the stage the record was read from, 0 for the main topic
	 */
	public AttemptContext(ConsumerRecord<?, ?> record, String listenerId, @Nullable String clientId, String groupId,
			Supplier<String> clusterId, int stage) {
		super(record, listenerId, clientId, groupId, clusterId);
		this.stage = stage;
	}

	/**
	 * The stage the record was read from: 0 for the main topic, 1 for the first retry
	 * topic.
	 */
	public int getStage() {
		return this.stage;
	}

	/**
	 * What the listener method gave: {@code null} while it runs, and when the attempt
	 * ended without a result (the record is routed again).
	 */
	public HandlerResult.@Nullable Outcome getOutcome() {
		return this.outcome;
	}

	/** Sets what the listener method gave. */
	public void setOutcome(HandlerResult.Outcome outcome) {
		this.outcome = outcome;
	}

}
