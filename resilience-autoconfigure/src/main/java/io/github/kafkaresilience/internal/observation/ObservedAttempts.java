package io.github.kafkaresilience.internal.observation;

import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.ladder.AttemptObservation;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.ladder.RecordPublisher;
import io.github.kafkaresilience.internal.support.Futures;
import io.github.kafkaresilience.observation.AttemptContext;
import io.github.kafkaresilience.observation.AttemptObservationConvention;
import io.github.kafkaresilience.observation.DefaultAttemptObservationConvention;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.record.TimestampType;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.support.micrometer.KafkaListenerObservation;
import org.springframework.kafka.support.micrometer.KafkaRecordSenderContext;
import org.springframework.kafka.support.micrometer.KafkaTemplateObservation;
import org.springframework.kafka.support.micrometer.KafkaTemplateObservation.DefaultKafkaTemplateObservationConvention;

/**
 * Observes the attempts of one listener's records on one main topic with Micrometer, as
 * spring-kafka observes a {@code @KafkaListener}: each attempt is a
 * {@link KafkaListenerObservation#LISTENER_OBSERVATION listener observation} of the
 * record as it was read, whose parent a tracer takes from the record's headers, and which
 * is the current observation while the listener method runs. The sends that carry a
 * record from an attempt to its next stage or to the dead-letter topic are
 * {@link KafkaTemplateObservation#TEMPLATE_OBSERVATION template observations}, children
 * of the attempt: a tracer writes their context into the record's headers, so the next
 * attempt continues the trace.
 *
 * @since 0.1.0
 */
public class ObservedAttempts implements AttemptObservation {

	/** The name of the observation of a batch listener's call. */
	public static final String BATCH_OBSERVATION = "kafka.resilience.batch.call";

	/** The key of the id a batch's observation and its records' attempts carry. */
	public static final String BATCH_ID = "kafka.resilience.batch.id";

	/** The {@code spring.kafka.template.name} of the library's sends. */
	public static final String SENDER_NAME = "kafka-resilience";

	private final ObservationRegistry registry;

	private final @Nullable AttemptObservationConvention convention;

	private final String listenerId;

	private final String groupId;

	private final Supplier<String> clusterId;

	/**
	 * @param registry where the observations go
	 * @param convention names and tags the attempts' observations, or {@code null} for
	 * the registry's convention, or {@link DefaultAttemptObservationConvention}
	 * @param listenerId the listener's id
	 * @param groupId the listener's consumer group
	 * @param clusterId the Kafka cluster id, asked for by every observation, so it should
	 * remember it ({@code KafkaAdmin#clusterId()} does)
	 */
	public ObservedAttempts(ObservationRegistry registry, @Nullable AttemptObservationConvention convention,
			String listenerId, String groupId, Supplier<String> clusterId) {
		this.registry = registry;
		this.convention = convention;
		this.listenerId = listenerId;
		this.groupId = groupId;
		this.clusterId = clusterId;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * An attempt the registry does not observe (it has no handler, or a predicate
	 * declines it) is {@link Attempt#NONE}: its sends are not observed either.
	 */
	@Override
	public Attempt start(Delivery record, int stage) {
		return start(record, stage, Batch.NONE);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The attempt carries the batch's id as {@value #BATCH_ID}.
	 */
	@Override
	public Attempt start(Delivery record, int stage, Batch batch) {
		Observation observation = KafkaListenerObservation.LISTENER_OBSERVATION.observation(this.convention,
				DefaultAttemptObservationConvention.INSTANCE, () -> new AttemptContext(consumerRecord(record),
						this.listenerId, null, this.groupId, this.clusterId, stage),
				this.registry);
		if (observation.isNoop()) {
			return Attempt.NONE;
		}
		String batchId = batch.id();
		if (batchId != null) {
			observation.highCardinalityKeyValue(BATCH_ID, batchId);
		}
		observation.start();
		return new ObservedAttempt(observation, observation.openScope(), (AttemptContext) observation.getContext());
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The batch is an observation named {@value #BATCH_OBSERVATION}, tagged with the
	 * listener, its group, the number of records and an id ({@value #BATCH_ID}) that each
	 * of its records' attempts carries too.
	 */
	@Override
	public Batch startBatch(int records) {
		String id = UUID.randomUUID().toString();
		Observation observation = Observation.createNotStarted(BATCH_OBSERVATION, this.registry)
			.contextualName(this.listenerId + " batch")
			.lowCardinalityKeyValue("spring.kafka.listener.id", this.listenerId)
			.lowCardinalityKeyValue("messaging.kafka.consumer.group", this.groupId)
			.highCardinalityKeyValue("messaging.batch.message_count", Integer.toString(records))
			.highCardinalityKeyValue(BATCH_ID, id);
		if (observation.isNoop()) {
			return Batch.NONE;
		}
		observation.start();
		Observation.Scope scope = observation.openScope();
		return new Batch() {

			@Override
			public String id() {
				return id;
			}

			@Override
			public void ended(@Nullable Throwable failure) {
				if (failure != null) {
					observation.error(failure);
				}
				scope.close();
				observation.stop();
			}

		};
	}

	/** The record as it was read: raw key and value, and the headers it arrived with. */
	private static ConsumerRecord<byte[], byte[]> consumerRecord(Delivery record) {
		return new ConsumerRecord<>(record.topic(), record.partition(), record.offset(), record.timestamp(),
				TimestampType.CREATE_TIME, ConsumerRecord.NULL_SIZE, ConsumerRecord.NULL_SIZE, record.key(),
				record.value(), record.headers(), Optional.empty());
	}

	private final class ObservedAttempt implements Attempt {

		private final Observation observation;

		private final Observation.Scope scope;

		private final AttemptContext context;

		/**
		 * Whether the scope was closed: when the handler returned a result that completes
		 * later.
		 */
		private boolean scopeClosed;

		ObservedAttempt(Observation observation, Observation.Scope scope, AttemptContext context) {
			this.observation = observation;
			this.scope = scope;
			this.context = context;
		}

		@Override
		public void ended(HandlerResult result) {
			this.context.setOutcome(result.outcome());
			Throwable failure = result.failure();
			if (failure != null) {
				this.observation.error(failure);
			}
			stop();
		}

		@Override
		public void failed(Throwable ex) {
			this.observation.error(ex);
			stop();
		}

		@Override
		public void called() {
			closeScope();
		}

		private void stop() {
			closeScope();
			this.observation.stop();
		}

		/** Closes the attempt's scope, on the thread that opened it, once. */
		private void closeScope() {
			if (!this.scopeClosed) {
				this.scopeClosed = true;
				this.scope.close();
			}
		}

		/**
		 * Observes the send as a child of this attempt, as {@code KafkaTemplate} observes
		 * its sends; starting the observation writes its context into the record's
		 * headers, replacing the propagation headers the record arrived with.
		 */
		@Override
		public CompletableFuture<Long> sending(RecordPublisher publisher, String topic, int partition,
				byte @Nullable [] key, byte @Nullable [] value, Headers headers) {
			ProducerRecord<byte @Nullable [], byte @Nullable []> record = new ProducerRecord<>(topic, partition, null,
					key, value, headers);
			Observation send = KafkaTemplateObservation.TEMPLATE_OBSERVATION
				.observation(null, DefaultKafkaTemplateObservationConvention.INSTANCE,
						() -> new KafkaRecordSenderContext(record, SENDER_NAME, ObservedAttempts.this.clusterId),
						ObservedAttempts.this.registry)
				.parentObservation(this.observation)
				.start();
			CompletableFuture<Long> sent;
			try (Observation.Scope ignored = send.openScope()) {
				sent = publisher.sending(topic, partition, key, value, record.headers());
			}
			catch (RuntimeException | Error ex) {
				send.error(ex);
				send.stop();
				throw ex;
			}
			sent.whenComplete((offset, ex) -> {
				if (ex != null) {
					send.error(Futures.cause(ex));
				}
				send.stop();
			});
			return sent;
		}

	}

}
