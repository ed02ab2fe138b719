package io.github.kafkaresilience.listener;

import java.lang.reflect.Method;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.kafka.listener.adapter.HandlerAdapter;
import org.springframework.kafka.listener.adapter.RecordMessagingMessageListenerAdapter;
import org.springframework.messaging.Message;

/**
 * Invokes a listener method the way spring-kafka invokes the method of a record
 * {@code @KafkaListener}: the record becomes a {@link Message} through the record message
 * converter (unless no parameter needs one), and the resolvers of the handler-method factory
 * give each parameter from it, the record itself and its {@code ConsumerRecordMetadata}.
 * <p>
 * Conversion and invocation are two steps, so that a record the converter cannot read is
 * told apart from a method that fails. There is no acknowledgment, consumer or reply: the
 * method's return value is only awaited, when it is a result that completes later.
 */
final class ListenerMethodAdapter extends RecordMessagingMessageListenerAdapter<Object, Object> {

	@SuppressWarnings("this-escape")
	ListenerMethodAdapter(Object bean, Method method, ListenerMessaging messaging) {
		super(bean, method);
		setMessageConverter(messaging.messageConverter());
		setHandlerMethod(new HandlerAdapter(messaging.handlerMethodFactory().createInvocableHandlerMethod(bean, method)));
	}

	/**
	 * The message the method's parameters are resolved from.
	 * @param record the deserialized record
	 * @return the message, or a placeholder when no parameter needs one
	 * @throws RuntimeException what the converter throws for a value it cannot convert
	 */
	Message<?> toMessage(ConsumerRecord<Object, Object> record) {
		return isConversionNeeded() ? toMessagingMessage(record, null, null) : NULL_MESSAGE;
	}

	/**
	 * Invokes the method.
	 * @param record the deserialized record
	 * @param message its message, from {@link #toMessage}
	 * @return what the method returned: for a Kotlin {@code suspend} function, the
	 * {@code Mono} of its result
	 * @throws ListenerExecutionFailedException when a parameter cannot be resolved or the
	 * method throws; its cause says which
	 */
	@Nullable Object invoke(ConsumerRecord<Object, Object> record, Message<?> message) {
		return invokeHandler(record, null, message, null);
	}

}
