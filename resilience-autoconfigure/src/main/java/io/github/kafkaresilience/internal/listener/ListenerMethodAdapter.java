package io.github.kafkaresilience.internal.listener;

import java.lang.reflect.Method;
import java.util.List;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.kafka.listener.adapter.HandlerAdapter;
import org.springframework.kafka.listener.adapter.RecordMessagingMessageListenerAdapter;
import org.springframework.messaging.Message;

/**
 * Invokes a listener method the way spring-kafka invokes the method of a record
 * {@code @KafkaListener}: the record becomes a {@link Message} through the record message
 * converter (unless no parameter needs one), and the resolvers of the handler-method
 * factory give each parameter from it, the record itself and its
 * {@code ConsumerRecordMetadata}.
 * <p>
 * Conversion and invocation are two steps, so that a record the converter cannot read is
 * told apart from a method that fails. There is no acknowledgment or consumer; the
 * method's return value is awaited when it is a result that completes later, and makes
 * the replies of a {@code @SendTo} method.
 */
final class ListenerMethodAdapter extends RecordMessagingMessageListenerAdapter<Object, Object> {

	/**
	 * Takes down the replies of a {@code @SendTo} method, or {@code null} for a method
	 * that sends none.
	 */
	private final @Nullable Replies replies;

	private final Method listenerMethod;

	@SuppressWarnings("this-escape")
	ListenerMethodAdapter(Object bean, Method method, ListenerMessaging messaging) {
		this(bean, method, messaging, null, null);
	}

	/**
	 * @param replyTopic the resolved topic of the method's {@code @SendTo}, empty for the
	 * request's {@code KafkaHeaders.REPLY_TOPIC}, {@code null} when it sends no reply
	 * @param replies takes the replies down, for a method that sends them
	 */
	@SuppressWarnings("this-escape")
	ListenerMethodAdapter(Object bean, Method method, ListenerMessaging messaging, @Nullable String replyTopic,
			@Nullable Replies replies) {
		super(bean, method);
		this.listenerMethod = method;
		setMessageConverter(messaging.messageConverter());
		setHandlerMethod(
				new HandlerAdapter(messaging.handlerMethodFactory().createInvocableHandlerMethod(bean, method)));
		if (replyTopic != null && replies != null) {
			setReplyTopic(replyTopic);
			setReplyTemplate(replies);
			this.replies = replies;
		}
		else {
			this.replies = null;
		}
	}

	/** The listener method. */
	Method method() {
		return this.listenerMethod;
	}

	/** Whether the method sends replies ({@code @SendTo}). */
	boolean replies() {
		return this.replies != null;
	}

	/**
	 * The replies to a record that the method's result makes, as spring-kafka makes those
	 * of a {@code @KafkaListener}'s: none for a {@code null} result.
	 * @param result what the method returned, or its completed result's value
	 * @param record the deserialized record
	 * @param message its message, from {@link #toMessage}
	 * @return the replies, serialized
	 */
	List<ProducerRecord<byte[], byte[]>> replies(@Nullable Object result, ConsumerRecord<Object, Object> record,
			Message<?> message) {
		Replies replies = this.replies;
		if (replies == null || result == null) {
			return List.of();
		}
		return replies.take(() -> handleResult(result, record, null, null, message));
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
