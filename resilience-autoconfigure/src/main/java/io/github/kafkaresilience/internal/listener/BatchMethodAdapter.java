package io.github.kafkaresilience.internal.listener;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.kafka.listener.adapter.BatchMessagingMessageListenerAdapter;
import org.springframework.kafka.listener.adapter.HandlerAdapter;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.messaging.Message;
import org.springframework.messaging.support.MessageBuilder;

/**
 * Invokes a batch listener method the way spring-kafka invokes the method of a
 * {@code @KafkaListener(batch = "true")}: the records become one message through the
 * batch message converter (or a list of messages, one per record through the record
 * message converter, for a {@code List<Message<?>>} parameter), unless the method takes
 * the records themselves, as a {@code List<ConsumerRecord>} or as
 * {@code ConsumerRecords}; the resolvers of the handler-method factory give each
 * parameter.
 * <p>
 * Conversion and invocation are two steps, so that records the converter cannot read are
 * told apart from a method that fails. There is no acknowledgment, consumer or reply.
 */
final class BatchMethodAdapter extends BatchMessagingMessageListenerAdapter<Object, Object> {

	@SuppressWarnings("this-escape")
	BatchMethodAdapter(Object bean, Method method, ListenerMessaging messaging) {
		super(bean, method);
		setBatchMessageConverter(messaging.batchMessageConverter());
		setMessageConverter(messaging.messageConverter());
		setHandlerMethod(
				new HandlerAdapter(messaging.handlerMethodFactory().createInvocableHandlerMethod(bean, method)));
	}

	/**
	 * What the method is given for the records: the records as {@code ConsumerRecords},
	 * when it takes them so, else their list.
	 * @param records the deserialized records, in the order of the batch
	 * @return the data and the records in the order the method sees them
	 */
	Data data(List<ConsumerRecord<Object, Object>> records) {
		if (!isConsumerRecords()) {
			// the method gets a list of its own: were it to reorder or empty the list,
			// the
			// records it names would still be found in the order it got them
			return new Data(new ArrayList<>(records), records);
		}
		Map<TopicPartition, List<ConsumerRecord<Object, Object>>> byPartition = new LinkedHashMap<>();
		for (ConsumerRecord<Object, Object> record : records) {
			byPartition
				.computeIfAbsent(new TopicPartition(record.topic(), record.partition()), (tp) -> new ArrayList<>())
				.add(record);
		}
		ConsumerRecords<Object, Object> polled = new ConsumerRecords<>(byPartition, Map.of());
		List<ConsumerRecord<Object, Object>> order = new ArrayList<>(records.size());
		polled.forEach(order::add);
		return new Data(polled, order);
	}

	/**
	 * The message the method's parameters are resolved from.
	 * @param records the deserialized records, in the order the method sees them
	 * @return the message, or a placeholder when the method takes the records themselves
	 * @throws RuntimeException what the converter throws for records it cannot convert
	 */
	Message<?> toMessage(List<ConsumerRecord<Object, Object>> records) {
		if (isConsumerRecords() || isConsumerRecordList()) {
			return NULL_MESSAGE;
		}
		if (isMessageList()) {
			List<Message<?>> messages = new ArrayList<>(records.size());
			for (ConsumerRecord<Object, Object> record : records) {
				messages.add(toMessagingMessage(record, null, null));
			}
			return MessageBuilder.withPayload(messages).build();
		}
		return toMessagingMessage(records, null, null);
	}

	/**
	 * The records the batch converter could not convert: it reports them in the
	 * {@code KafkaHeaders.CONVERSION_FAILURES} header, by index, and leaves their
	 * payloads empty.
	 * @param message what {@link #toMessage} gave
	 * @return the index and failure of each record the converter failed on
	 */
	static Map<Integer, Throwable> conversionFailures(Message<?> message) {
		Object failures = message.getHeaders().get(KafkaHeaders.CONVERSION_FAILURES);
		Map<Integer, Throwable> failed = new LinkedHashMap<>();
		if (failures instanceof List<?> list) {
			for (int i = 0; i < list.size(); i++) {
				if (list.get(i) instanceof Throwable failure) {
					failed.put(i, failure);
				}
			}
		}
		return failed;
	}

	/**
	 * Invokes the method.
	 * @param data what {@link #data} gave
	 * @param message its message, from {@link #toMessage}
	 * @return what the method returned
	 * @throws ListenerExecutionFailedException when a parameter cannot be resolved or the
	 * method throws; its cause says which
	 */
	@Nullable Object invoke(Data data, Message<?> message) {
		return invokeHandler(data.data(), null, message, null);
	}

	/**
	 * What the method is given.
	 *
	 * @param data the records, as a list or as {@code ConsumerRecords}
	 * @param order the records in the order the method sees them
	 */
	record Data(Object data, List<ConsumerRecord<Object, Object>> order) {
	}

}
