package io.github.kafkaresilience.listener;

import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;

import io.github.kafkaresilience.idempotency.IdempotencyGuards;
import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.ladder.AsyncRecordHandler;
import io.github.kafkaresilience.ladder.BatchHandler;
import io.github.kafkaresilience.ladder.RecordHandler;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanUtils;
import org.springframework.kafka.annotation.KafkaListenerAnnotationBeanPostProcessor;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.support.converter.BatchMessageConverter;
import org.springframework.kafka.support.converter.RecordMessageConverter;
import org.springframework.util.ClassUtils;
import org.springframework.util.function.SingletonSupplier;

/**
 * Creates the {@link HandlerInvoker} of each listener and main topic: the method invoked as
 * spring-kafka invokes {@code @KafkaListener} methods, the application's deserializers and
 * the listener's idempotency guard.
 */
final class HandlerInvokers implements OrderedRetryContainerFactory.RecordHandlerFactory {

	private final Supplier<ListenerMessaging> messaging;

	private final ConsumerFactory<?, ?> consumerFactory;

	private final IdempotencyGuards idempotencyGuards;

	HandlerInvokers(Supplier<@Nullable KafkaListenerAnnotationBeanPostProcessor<?, ?>> kafkaListenerProcessor,
			Supplier<@Nullable RecordMessageConverter> messageConverter,
			Supplier<@Nullable BatchMessageConverter> batchMessageConverter, ConsumerFactory<?, ?> consumerFactory,
			IdempotencyGuards idempotencyGuards) {
		// asked for when the first handler is created, as the listeners start: the
		// KafkaListenerConfigurers have run by then
		this.messaging = SingletonSupplier.of(
				() -> ListenerMessaging.asForKafkaListeners(kafkaListenerProcessor.get(), messageConverter.get(),
					batchMessageConverter.get()));
		this.consumerFactory = consumerFactory;
		this.idempotencyGuards = idempotencyGuards;
	}

	@Override
	public BatchHandler createBatch(ListenerEndpoint endpoint, String mainTopic, BatchSettings.Failure failure) {
		return new BatchHandlerInvoker(endpoint,
				new RecordReader(mainTopic, deserializer(this.consumerFactory, true),
						deserializer(this.consumerFactory, false)),
				this.messaging.get(), this.idempotencyGuards.guard(endpoint.id(), endpoint.idempotent(),
						endpoint.idempotencyKey(), mainTopic),
				failure);
	}

	@Override
	public RecordHandler create(ListenerEndpoint endpoint, String mainTopic) {
		// a method that returns once done has no result to wait for
		return invoker(endpoint, mainTopic, Duration.ZERO);
	}

	@Override
	public AsyncRecordHandler createAsync(ListenerEndpoint endpoint, String mainTopic, Duration attemptTimeout) {
		return invoker(endpoint, mainTopic, attemptTimeout);
	}

	private HandlerInvoker invoker(ListenerEndpoint endpoint, String mainTopic, Duration attemptTimeout) {
		return new HandlerInvoker(endpoint, mainTopic, this.messaging.get(), deserializer(this.consumerFactory, true),
				deserializer(this.consumerFactory, false), this.idempotencyGuards.guard(endpoint.id(),
						endpoint.idempotent(), endpoint.idempotencyKey(), mainTopic),
				attemptTimeout);
	}

	/**
	 * The application's key or value deserializer: the instance its consumer factory was
	 * given, or else one of the configured class (a {@link StringDeserializer} when none is
	 * configured), configured with the factory's properties.
	 */
	static Deserializer<?> deserializer(ConsumerFactory<?, ?> factory, boolean isKey) {
		if (factory instanceof DefaultKafkaConsumerFactory<?, ?> defaultFactory) {
			Deserializer<?> instance = isKey ? defaultFactory.getKeyDeserializer() : defaultFactory.getValueDeserializer();
			if (instance != null) {
				return instance;
			}
		}
		Map<String, Object> config = factory.getConfigurationProperties();
		Object configured = config.get(isKey ? ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG
				: ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
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
