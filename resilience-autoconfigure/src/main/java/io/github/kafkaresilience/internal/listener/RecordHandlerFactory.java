package io.github.kafkaresilience.internal.listener;

import java.time.Duration;
import java.util.function.Supplier;

import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.internal.idempotency.IdempotencyGuards;
import io.github.kafkaresilience.internal.ladder.RecordPublisher;
import io.github.kafkaresilience.ladder.AsyncBatchHandler;
import io.github.kafkaresilience.ladder.AsyncRecordHandler;
import io.github.kafkaresilience.ladder.BatchHandler;
import io.github.kafkaresilience.ladder.RecordHandler;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.annotation.KafkaListenerAnnotationBeanPostProcessor;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.support.converter.BatchMessageConverter;
import org.springframework.kafka.support.converter.RecordMessageConverter;

/** Creates the handler of an endpoint for one of its main topics. */
@FunctionalInterface
public interface RecordHandlerFactory {

	RecordHandler create(ListenerEndpoint endpoint, String mainTopic);

	/**
	 * Creates the handler of a batch listener for one of its main topics.
	 * @param endpoint the listener, whose method takes a batch
	 * @param mainTopic the main topic
	 * @param failure what a call that fails without naming its failed record means
	 * @return the handler
	 */
	default BatchHandler createBatch(ListenerEndpoint endpoint, String mainTopic, BatchSettings.Failure failure) {
		throw new UnsupportedOperationException(getClass().getName() + " creates no batch handlers; listener '"
				+ endpoint.id() + "' is a batch listener");
	}

	/**
	 * Creates the handler of a batch listener whose method returns a result that
	 * completes later, for one of its main topics.
	 * @param endpoint the listener, whose method takes a batch
	 * @param mainTopic the main topic
	 * @param failure what a call that fails without naming its failed record means
	 * @param attemptTimeout how long a call's result is waited for before the call fails
	 * @return the handler
	 */
	default AsyncBatchHandler createAsyncBatch(ListenerEndpoint endpoint, String mainTopic,
			BatchSettings.Failure failure, Duration attemptTimeout) {
		throw new UnsupportedOperationException(
				getClass().getName() + " creates no batch handlers whose results " + "complete later; listener '"
						+ endpoint.id() + "' returns " + endpoint.method().getReturnType().getSimpleName());
	}

	/**
	 * Creates the handler of a listener whose method returns a result that completes
	 * later, for one of its main topics.
	 * @param endpoint the listener
	 * @param mainTopic the main topic
	 * @param attemptTimeout how long a result is waited for before the attempt fails
	 * @param replies sends the replies of a {@code @SendTo} method as a write of the
	 * record's step: in {@code transaction} mode, in its transaction
	 * @return the handler
	 */
	default AsyncRecordHandler createAsync(ListenerEndpoint endpoint, String mainTopic, Duration attemptTimeout,
			RecordPublisher replies) {
		throw new UnsupportedOperationException(
				getClass().getName() + " creates no handlers whose results " + "complete later; listener '"
						+ endpoint.id() + "' returns " + endpoint.method().getReturnType().getSimpleName());
	}

	/**
	 * Handlers that invoke each listener's method as spring-kafka invokes a record
	 * {@code @KafkaListener} method, after deserializing its records with the
	 * application's deserializers, once per idempotency key where the listener asks for
	 * it.
	 * @param kafkaListenerProcessor the application's {@code @KafkaListener} processor,
	 * whose handler-method factory is used, or {@code null} for spring-kafka's default;
	 * asked for once, when the first handler is created
	 * @param messageConverter the application's record message converter, or {@code null}
	 * @param consumerFactory the application's consumer factory, whose deserializers are
	 * used
	 * @param idempotencyGuards the guards of the listeners that ask for idempotency
	 * @return the factory
	 */
	static RecordHandlerFactory invokingListenerMethods(
			Supplier<@Nullable KafkaListenerAnnotationBeanPostProcessor<?, ?>> kafkaListenerProcessor,
			Supplier<@Nullable RecordMessageConverter> messageConverter, ConsumerFactory<?, ?> consumerFactory,
			IdempotencyGuards idempotencyGuards) {
		return invokingListenerMethods(kafkaListenerProcessor, messageConverter, () -> null, consumerFactory,
				idempotencyGuards);
	}

	/**
	 * As
	 * {@link #invokingListenerMethods(Supplier, Supplier, Supplier, ConsumerFactory, IdempotencyGuards)},
	 * with the producer factory whose serializers serialize the replies of
	 * {@code @SendTo} methods.
	 * @param producerFactory the application's producer factory
	 */
	static RecordHandlerFactory invokingListenerMethods(
			Supplier<@Nullable KafkaListenerAnnotationBeanPostProcessor<?, ?>> kafkaListenerProcessor,
			Supplier<@Nullable RecordMessageConverter> messageConverter,
			Supplier<@Nullable BatchMessageConverter> batchMessageConverter, ConsumerFactory<?, ?> consumerFactory,
			ProducerFactory<?, ?> producerFactory, IdempotencyGuards idempotencyGuards) {
		return new HandlerInvokers(kafkaListenerProcessor, messageConverter, batchMessageConverter, consumerFactory,
				producerFactory, idempotencyGuards);
	}

	/**
	 * As
	 * {@link #invokingListenerMethods(Supplier, Supplier, ConsumerFactory, IdempotencyGuards)},
	 * with the batch message converter a batch listener's records are converted with.
	 * @param batchMessageConverter the application's batch message converter, or
	 * {@code null} for a {@code BatchMessagingMessageConverter} over the record converter
	 */
	static RecordHandlerFactory invokingListenerMethods(
			Supplier<@Nullable KafkaListenerAnnotationBeanPostProcessor<?, ?>> kafkaListenerProcessor,
			Supplier<@Nullable RecordMessageConverter> messageConverter,
			Supplier<@Nullable BatchMessageConverter> batchMessageConverter, ConsumerFactory<?, ?> consumerFactory,
			IdempotencyGuards idempotencyGuards) {
		return new HandlerInvokers(kafkaListenerProcessor, messageConverter, batchMessageConverter, consumerFactory,
				idempotencyGuards);
	}

}
