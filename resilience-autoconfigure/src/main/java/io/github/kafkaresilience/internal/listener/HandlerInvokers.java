package io.github.kafkaresilience.internal.listener;

import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.idempotency.IdempotencyGuards;
import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.ladder.AsyncBatchHandler;
import io.github.kafkaresilience.ladder.AsyncRecordHandler;
import io.github.kafkaresilience.internal.idempotency.IdempotencyGuard;
import io.github.kafkaresilience.ladder.BatchHandler;
import io.github.kafkaresilience.ladder.RecordHandler;
import io.github.kafkaresilience.internal.ladder.RecordPublisher;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanUtils;
import org.springframework.kafka.annotation.KafkaListenerAnnotationBeanPostProcessor;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.support.converter.BatchMessageConverter;
import org.springframework.kafka.support.converter.RecordMessageConverter;
import org.springframework.util.ClassUtils;
import org.springframework.util.function.SingletonSupplier;

/**
 * Creates the {@link HandlerInvoker} of each listener and main topic: the method invoked
 * as spring-kafka invokes {@code @KafkaListener} methods, the application's deserializers
 * and the listener's idempotency guard.
 */
public final class HandlerInvokers implements RecordHandlerFactory {

	private final Supplier<ListenerMessaging> messaging;

	private final ConsumerFactory<?, ?> consumerFactory;

	private final IdempotencyGuards idempotencyGuards;

	/**
	 * Whose serializers serialize the replies of {@code @SendTo} methods, or
	 * {@code null}.
	 */
	private final @Nullable ProducerFactory<?, ?> producerFactory;

	public HandlerInvokers(Supplier<@Nullable KafkaListenerAnnotationBeanPostProcessor<?, ?>> kafkaListenerProcessor,
			Supplier<@Nullable RecordMessageConverter> messageConverter,
			Supplier<@Nullable BatchMessageConverter> batchMessageConverter, ConsumerFactory<?, ?> consumerFactory,
			IdempotencyGuards idempotencyGuards) {
		this(kafkaListenerProcessor, messageConverter, batchMessageConverter, consumerFactory, null, idempotencyGuards);
	}

	public HandlerInvokers(Supplier<@Nullable KafkaListenerAnnotationBeanPostProcessor<?, ?>> kafkaListenerProcessor,
			Supplier<@Nullable RecordMessageConverter> messageConverter,
			Supplier<@Nullable BatchMessageConverter> batchMessageConverter, ConsumerFactory<?, ?> consumerFactory,
			@Nullable ProducerFactory<?, ?> producerFactory, IdempotencyGuards idempotencyGuards) {
		this.producerFactory = producerFactory;
		// asked for when the first handler is created, as the listeners start: the
		// KafkaListenerConfigurers have run by then
		this.messaging = SingletonSupplier.of(() -> ListenerMessaging.asForKafkaListeners(kafkaListenerProcessor.get(),
				messageConverter.get(), batchMessageConverter.get()));
		this.consumerFactory = consumerFactory;
		this.idempotencyGuards = idempotencyGuards;
	}

	@Override
	public BatchHandler createBatch(ListenerEndpoint endpoint, String mainTopic, BatchSettings.Failure failure) {
		return batchInvoker(endpoint, mainTopic, failure, Duration.ZERO);
	}

	@Override
	public AsyncBatchHandler createAsyncBatch(ListenerEndpoint endpoint, String mainTopic,
			BatchSettings.Failure failure, Duration attemptTimeout) {
		return batchInvoker(endpoint, mainTopic, failure, attemptTimeout);
	}

	private BatchHandlerInvoker batchInvoker(ListenerEndpoint endpoint, String mainTopic, BatchSettings.Failure failure,
			Duration attemptTimeout) {
		return new BatchHandlerInvoker(endpoint,
				new RecordReader(mainTopic, deserializer(this.consumerFactory, true),
						deserializer(this.consumerFactory, false)),
				this.messaging.get(), guard(endpoint, mainTopic), failure, attemptTimeout);
	}

	@Override
	public RecordHandler create(ListenerEndpoint endpoint, String mainTopic) {
		// a method that returns once done has no result to wait for
		return invoker(endpoint, mainTopic, Duration.ZERO);
	}

	@Override
	public AsyncRecordHandler createAsync(ListenerEndpoint endpoint, String mainTopic, Duration attemptTimeout,
			RecordPublisher replies) {
		HandlerInvoker.ReplyRoute route = null;
		if (endpoint.replyTopic() != null) {
			if (this.producerFactory == null) {
				throw new IllegalStateException("Listener '" + endpoint.id() + "' has @SendTo, but its handlers were "
						+ "created without a ProducerFactory to make its replies with");
			}
			route = new HandlerInvoker.ReplyRoute(
					new Replies(this.producerFactory, this.messaging.get().messageConverter()), replies);
		}
		return new HandlerInvoker(endpoint, mainTopic, this.messaging.get(), deserializer(this.consumerFactory, true),
				deserializer(this.consumerFactory, false), guard(endpoint, mainTopic), attemptTimeout, route);
	}

	private HandlerInvoker invoker(ListenerEndpoint endpoint, String mainTopic, Duration attemptTimeout) {
		return new HandlerInvoker(endpoint, mainTopic, this.messaging.get(), deserializer(this.consumerFactory, true),
				deserializer(this.consumerFactory, false), guard(endpoint, mainTopic), attemptTimeout);
	}

	private @Nullable IdempotencyGuard guard(ListenerEndpoint endpoint, String mainTopic) {
		return this.idempotencyGuards.guard(endpoint.id(), endpoint.idempotent(), endpoint.idempotencyKey(), mainTopic);
	}

	/**
	 * The application's key or value deserializer: the instance its consumer factory was
	 * given, or else one of the configured class (a {@link StringDeserializer} when none
	 * is configured), configured with the factory's properties.
	 */
	static Deserializer<?> deserializer(ConsumerFactory<?, ?> factory, boolean isKey) {
		if (factory instanceof DefaultKafkaConsumerFactory<?, ?> defaultFactory) {
			Deserializer<?> instance = isKey ? defaultFactory.getKeyDeserializer()
					: defaultFactory.getValueDeserializer();
			if (instance != null) {
				return instance;
			}
		}
		Map<String, Object> config = factory.getConfigurationProperties();
		Object configured = config
			.get(isKey ? ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG : ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
		Deserializer<?> deserializer = instantiate(configured);
		deserializer.configure(config, isKey);
		return deserializer;
	}

	private static Deserializer<?> instantiate(@Nullable Object configured) {
		if (configured == null) {
			return new StringDeserializer();
		}
		if (configured instanceof Deserializer<?> instance) {
			return instance;
		}
		Class<?> type = (configured instanceof Class<?> cls) ? cls
				: ClassUtils.resolveClassName(configured.toString().trim(), HandlerInvokers.class.getClassLoader());
		return (Deserializer<?>) BeanUtils.instantiateClass(type);
	}

}
