package io.github.kafkaresilience.internal.listener;

import java.lang.reflect.Method;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.ShareConsumer;
import org.jspecify.annotations.Nullable;

import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.kafka.listener.adapter.ConsumerRecordMetadata;
import org.springframework.kafka.support.Acknowledgment;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.kafka.support.ShareAcknowledgment;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Payload;
import org.springframework.messaging.handler.annotation.SendTo;

/**
 * Refuses, at startup, a listener method that takes or returns what makes sense for a
 * {@code @KafkaListener} but not here: the library acknowledges and commits by itself,
 * owns the consumer, hands a record listener's method one record at a time and a batch
 * listener's method a batch, and must know when an attempt ended: when the method
 * returns, or when the result a record listener's method returned completes.
 */
final class ListenerMethodSignature {

	private ListenerMethodSignature() {
	}

	/**
	 * Checks the parameters and the return type of a listener method.
	 * @param method the listener method
	 * @param where names the method in a refusal
	 * @throws IllegalStateException naming what the method cannot have, why, and what to
	 * use instead
	 */
	static void check(Method method, String where) {
		check(method, where, false);
	}

	/**
	 * Checks the parameters and the return type of a listener method.
	 * @param method the listener method
	 * @param where names the method in a refusal
	 * @param batch whether the method is a batch listener's: it must then take the batch,
	 * as a {@code List} or {@code ConsumerRecords}
	 * @throws IllegalStateException naming what the method cannot have, why, and what to
	 * use instead
	 */
	static void check(Method method, String where, boolean batch) {
		boolean takesBatch = false;
		for (int i = 0; i < method.getParameterCount(); i++) {
			MethodParameter parameter = new MethodParameter(method, i);
			String refusal = batch ? batchRefusal(parameter) : refusal(parameter);
			if (refusal != null) {
				throw new IllegalStateException(where + " " + refusal);
			}
			takesBatch |= batch && isBatch(parameter);
		}
		if (batch && !takesBatch) {
			throw new IllegalStateException(where + " is a batch listener (batch = \"true\") but takes no batch. Take "
					+ "the records as a List of values, of ConsumerRecords or of Messages, or as ConsumerRecords; or "
					+ "remove batch = \"true\" to take one record at a time");
		}
		Class<?> returned = method.getReturnType();
		if (!AsyncResults.isAsync(method) && Future.class.isAssignableFrom(returned)) {
			throw new IllegalStateException(where + " returns " + returned.getSimpleName() + ", which cannot tell when "
					+ "it completes without blocking a thread. Return a CompletableFuture, a CompletionStage or a Mono, "
					+ "or finish the work before returning");
		}
		if (AnnotatedElementUtils.hasAnnotation(method, SendTo.class)) {
			if (batch) {
				throw new IllegalStateException(where + " has @SendTo, but batch listeners send no replies. Send the "
						+ "replies from the method, with a KafkaTemplate, or take one record at a time");
			}
			if ((returned == void.class || returned == Void.class) && !KotlinDetector.isSuspendingFunction(method)) {
				throw new IllegalStateException(where + " has @SendTo but returns " + returned.getSimpleName()
						+ ": it has no reply to send. Return the reply, or remove @SendTo");
			}
		}
	}

	private static @Nullable String refusal(MethodParameter parameter) {
		String refusal = clientRefusal(parameter, false);
		if (refusal != null) {
			return refusal;
		}
		Class<?> type = parameter.getParameterType();
		String which = which(parameter);
		if (ConsumerRecords.class.isAssignableFrom(type) || isBatchOf(parameter, ConsumerRecord.class)
				|| isBatchOf(parameter, Message.class)) {
			return "takes a batch, " + which + ", but the method is a record listener's and runs once per record. "
					+ "Set batch = \"true\" on @OrderedRetryListener to take a batch, or take one record: its value, "
					+ "the ConsumerRecord or a Message<?>";
		}
		if (Collection.class.isAssignableFrom(type) && !parameter.hasParameterAnnotation(Payload.class)
				&& !parameter.hasParameterAnnotation(Header.class)) {
			return "takes " + which + " as a batch listener does, but the method is a record listener's and runs once "
					+ "per record. Set batch = \"true\" on @OrderedRetryListener to take a batch; if the value of one "
					+ "record is itself a collection, annotate the parameter with @Payload";
		}
		return null;
	}

	/** Why a batch listener's method cannot take a parameter, or {@code null}. */
	private static @Nullable String batchRefusal(MethodParameter parameter) {
		String refusal = clientRefusal(parameter, true);
		if (refusal != null) {
			return refusal;
		}
		if (ConsumerRecordMetadata.class.isAssignableFrom(parameter.getParameterType())) {
			// spring-kafka gives it to record listeners only: every call would fail to
			// resolve it
			return "takes ConsumerRecordMetadata, " + which(parameter) + ", which describes one record, but the "
					+ "method is a batch listener's and gets a batch. Take the records as a List of ConsumerRecords, "
					+ "or the lists of their headers, e.g. @Header(KafkaHeaders.OFFSET) List<Long>";
		}
		return null;
	}

	/** Whether a parameter takes the batch itself, not one of its headers. */
	private static boolean isBatch(MethodParameter parameter) {
		Class<?> type = parameter.getParameterType();
		return ConsumerRecords.class.isAssignableFrom(type)
				|| (List.class.isAssignableFrom(type) && !parameter.hasParameterAnnotation(Header.class));
	}

	private static String which(MethodParameter parameter) {
		return "parameter " + (parameter.getParameterIndex() + 1) + " (" + parameter.getParameterType().getSimpleName()
				+ ")";
	}

	/**
	 * Why no listener method can take a parameter (the acknowledgment, the consumer), or
	 * {@code null}.
	 */
	private static @Nullable String clientRefusal(MethodParameter parameter, boolean batch) {
		Class<?> type = parameter.getParameterType();
		String header = headerName(parameter);
		String which = which(parameter);
		if (Acknowledgment.class.isAssignableFrom(type) || ShareAcknowledgment.class.isAssignableFrom(type)
				|| KafkaHeaders.ACKNOWLEDGMENT.equals(header)) {
			return "takes an acknowledgment, " + which + ", but the library commits a record's offset itself, once the "
					+ "record has run, moved to a retry topic or been dead-lettered. Remove the parameter: return "
					+ "normally to acknowledge the record, throw to retry it";
		}
		if (Consumer.class.isAssignableFrom(type) || ShareConsumer.class.isAssignableFrom(type)
				|| KafkaHeaders.CONSUMER.equals(header)) {
			return "takes the consumer, " + which + ", but the method runs on a worker thread while the library's poll "
					+ "thread uses the consumer, which is not thread-safe, and a seek, pause or commit would go around "
					+ "the library's bookkeeping of offsets and locks. Remove the parameter; "
					+ (batch ? "for the records' topics, partitions and offsets take the List of ConsumerRecords or "
							+ "@Header(KafkaHeaders.OFFSET) List<Long>"
							: "for the record's topic, partition and offset take ConsumerRecordMetadata, the "
									+ "ConsumerRecord or @Header(KafkaHeaders.OFFSET)");
		}
		return null;
	}

	private static boolean isBatchOf(MethodParameter parameter, Class<?> element) {
		ResolvableType collection = ResolvableType.forMethodParameter(parameter).asCollection();
		if (collection == ResolvableType.NONE) {
			return false;
		}
		Class<?> elementType = collection.getGeneric(0).resolve();
		return elementType != null && element.isAssignableFrom(elementType);
	}

	private static @Nullable String headerName(MethodParameter parameter) {
		Header header = parameter.getParameterAnnotation(Header.class);
		if (header == null) {
			return null;
		}
		return !header.name().isEmpty() ? header.name() : header.value();
	}

}
