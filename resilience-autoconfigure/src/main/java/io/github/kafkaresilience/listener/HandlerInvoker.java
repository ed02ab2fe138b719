package io.github.kafkaresilience.listener;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Optional;

import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.idempotency.IdempotencyGuard;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.RecordHandler;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.Deserializer;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.support.serializer.DeserializationException;
import org.springframework.kafka.support.serializer.ErrorHandlingDeserializer;
import org.springframework.util.ReflectionUtils;

/**
 * Deserializes a record with the application's deserializers and invokes the listener
 * method with the {@link ConsumerRecord} or just its value. A record that cannot be
 * deserialized is reported as poison and the method does not run: a deserializer threw, or an
 * {@link ErrorHandlingDeserializer} reported its delegate's failure in an exception header (the
 * poison's failure is then that {@link DeserializationException}, with the delegate's
 * exception as its cause). With an {@link IdempotencyGuard}, the method runs only for records
 * whose idempotency key was not completed before.
 * <p>
 * Records are deserialized as if read from their main topic, also when they come from a retry
 * topic, so that topic-based schema lookups keep working.
 * <p>
 * The deserializers, the idempotency key and the method see a copy of the record's headers:
 * a deserializer may remove headers (the JSON deserializer removes its type headers) or add
 * some, and the method sees them as the deserializers left them, as a {@code @KafkaListener}
 * does. The {@link Delivery}'s own headers stay as the record arrived: its retries and its
 * dead letter carry them, and its next attempt deserializes from them again.
 *
 * @since 0.1.0
 */
public class HandlerInvoker implements RecordHandler {

	private final Object bean;

	private final Method method;

	private final boolean takesRecord;

	private final String mainTopic;

	private final Deserializer<?> keyDeserializer;

	private final Deserializer<?> valueDeserializer;

	private final @Nullable IdempotencyGuard guard;

	public HandlerInvoker(Object bean, Method method, String mainTopic, Deserializer<?> keyDeserializer,
			Deserializer<?> valueDeserializer) {
		this(bean, method, mainTopic, keyDeserializer, valueDeserializer, null);
	}

	/**
	 * @param bean the bean holding the listener method
	 * @param method the listener method
	 * @param mainTopic the main topic, the topic records are deserialized for
	 * @param keyDeserializer the application's key deserializer
	 * @param valueDeserializer the application's value deserializer
	 * @param guard runs the method once per idempotency key, or {@code null}
	 */
	public HandlerInvoker(Object bean, Method method, String mainTopic, Deserializer<?> keyDeserializer,
			Deserializer<?> valueDeserializer, @Nullable IdempotencyGuard guard) {
		if (method.getParameterCount() != 1) {
			throw new IllegalStateException("@OrderedRetryListener method " + method
					+ " must take exactly one parameter: a ConsumerRecord or the record value");
		}
		this.bean = bean;
		this.method = method;
		this.takesRecord = ConsumerRecord.class.isAssignableFrom(method.getParameterTypes()[0]);
		this.mainTopic = mainTopic;
		this.keyDeserializer = keyDeserializer;
		this.valueDeserializer = valueDeserializer;
		this.guard = guard;
		ReflectionUtils.makeAccessible(method);
	}

	@Override
	public HandlerResult handle(Delivery delivery) {
		Headers headers = new RecordHeaders(delivery.headers().toArray());
		Object key;
		Object value;
		try {
			key = (delivery.key() != null) ? this.keyDeserializer.deserialize(this.mainTopic, headers, delivery.key())
					: null;
			value = (delivery.value() != null)
					? this.valueDeserializer.deserialize(this.mainTopic, headers, delivery.value()) : null;
		}
		catch (RuntimeException ex) {
			return HandlerResult.poison(ex);
		}
		DeserializationException reported = DeserializerExceptionHeaders.reported(delivery.headers(), headers,
				delivery.key(), delivery.value());
		if (reported != null) {
			return HandlerResult.poison(reported);
		}
		if (!this.takesRecord && value != null && !wrap(this.method.getParameterTypes()[0]).isInstance(value)) {
			return HandlerResult.failed(new PermanentFailureException("Listener method " + this.method.getName()
					+ " takes " + this.method.getParameterTypes()[0].getName() + " but the value deserializer gave "
					+ value.getClass().getName()));
		}
		// the record is built only for a method that takes it or for the guard, which keys by it
		ConsumerRecord<?, ?> record = (this.takesRecord || this.guard != null) ? record(delivery, headers, key, value)
				: null;
		Object argument = this.takesRecord ? record : value;
		return (this.guard != null) ? this.guard.run(record, () -> invoke(argument)) : invoke(argument);
	}

	private static ConsumerRecord<?, ?> record(Delivery delivery, Headers headers, @Nullable Object key,
			@Nullable Object value) {
		return new ConsumerRecord<>(delivery.topic(), delivery.partition(), delivery.offset(), delivery.timestamp(),
				TimestampType.CREATE_TIME, ConsumerRecord.NULL_SIZE, ConsumerRecord.NULL_SIZE, key, value, headers,
				Optional.empty());
	}

	private HandlerResult invoke(@Nullable Object argument) {
		try {
			this.method.invoke(this.bean, argument);
			return HandlerResult.success();
		}
		catch (InvocationTargetException ex) {
			return HandlerResult.failed(ex.getTargetException());
		}
		catch (IllegalAccessException | IllegalArgumentException ex) {
			return HandlerResult.failed(new PermanentFailureException("Cannot invoke listener method " + this.method, ex));
		}
	}

	private static Class<?> wrap(Class<?> type) {
		if (!type.isPrimitive()) {
			return type;
		}
		return java.lang.invoke.MethodType.methodType(type).wrap().returnType();
	}

}
