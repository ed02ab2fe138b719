package io.github.kafkaresilience.internal.listener;

import org.jspecify.annotations.Nullable;

import org.springframework.kafka.annotation.KafkaListenerAnnotationBeanPostProcessor;
import org.springframework.kafka.config.KafkaListenerEndpointRegistrar;
import org.springframework.kafka.support.converter.BatchMessageConverter;
import org.springframework.kafka.support.converter.BatchMessagingMessageConverter;
import org.springframework.kafka.support.converter.MessagingMessageConverter;
import org.springframework.kafka.support.converter.RecordMessageConverter;
import org.springframework.messaging.handler.annotation.support.MessageHandlerMethodFactory;

/**
 * What an {@code @OrderedRetryListener} method is invoked through, the same a
 * {@code @KafkaListener} method of a record listener gets: the handler-method factory
 * (its argument resolvers, the conversion of a payload to the parameter's type, the
 * validation of {@code @Valid} payloads) and the converter that turns a record into a
 * message.
 *
 * @param handlerMethodFactory creates the invocable method whose resolvers give each
 * parameter
 * @param messageConverter turns the deserialized record into the message the parameters
 * are resolved from
 * @param batchMessageConverter turns the deserialized records of a batch into the message
 * the parameters of a batch listener are resolved from
 * @since 0.1.0
 */
record ListenerMessaging(MessageHandlerMethodFactory handlerMethodFactory, RecordMessageConverter messageConverter,
		BatchMessageConverter batchMessageConverter) {

	/**
	 * The handler-method factory and converter {@code @KafkaListener} methods get: the
	 * factory of spring-kafka's annotation processor (its default, with the validator and
	 * argument resolvers a {@code KafkaListenerConfigurer} gave the
	 * {@link KafkaListenerEndpointRegistrar}, or the factory it set), and the
	 * application's converter, {@link MessagingMessageConverter} without one. The
	 * processor's factory is final only once the configurers ran, after the singletons of
	 * the context were created: ask for it no earlier.
	 * @param processor the application's {@code @KafkaListener} processor, or
	 * {@code null} without one ({@code @EnableKafka}): spring-kafka's default factory is
	 * used then
	 * @param messageConverter the application's record message converter, or {@code null}
	 * @return how to invoke listener methods
	 */
	static ListenerMessaging asForKafkaListeners(@Nullable KafkaListenerAnnotationBeanPostProcessor<?, ?> processor,
			@Nullable RecordMessageConverter messageConverter) {
		return asForKafkaListeners(processor, messageConverter, null);
	}

	/**
	 * As
	 * {@link #asForKafkaListeners(KafkaListenerAnnotationBeanPostProcessor, RecordMessageConverter)},
	 * with the batch converter a batch {@code @KafkaListener} gets from Spring Boot: the
	 * application's, or else a {@link BatchMessagingMessageConverter} over the record
	 * converter.
	 * @param batchMessageConverter the application's batch message converter, or
	 * {@code null}
	 * @return how to invoke listener methods
	 */
	static ListenerMessaging asForKafkaListeners(@Nullable KafkaListenerAnnotationBeanPostProcessor<?, ?> processor,
			@Nullable RecordMessageConverter messageConverter, @Nullable BatchMessageConverter batchMessageConverter) {
		// an unregistered processor only holds spring-kafka's default factory, created
		// when first asked
		KafkaListenerAnnotationBeanPostProcessor<?, ?> kafkaListeners = (processor != null) ? processor
				: new KafkaListenerAnnotationBeanPostProcessor<>();
		RecordMessageConverter records = (messageConverter != null) ? messageConverter
				: new MessagingMessageConverter();
		BatchMessageConverter batches = (batchMessageConverter != null) ? batchMessageConverter
				: new BatchMessagingMessageConverter(records);
		return new ListenerMessaging(kafkaListeners.getMessageHandlerMethodFactory(), records, batches);
	}

	/**
	 * spring-kafka's defaults: its default handler-method factory, without a validator,
	 * and {@link MessagingMessageConverter}.
	 * @return how to invoke listener methods without the application's settings
	 */
	static ListenerMessaging defaults() {
		return asForKafkaListeners(null, null);
	}

}
