package io.github.kafkaresilience.internal.listener;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.AttemptTimeoutException;
import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.idempotency.Claim;
import io.github.kafkaresilience.internal.idempotency.IdempotencyGuard;
import io.github.kafkaresilience.ladder.AsyncRecordHandler;
import io.github.kafkaresilience.ladder.AsyncRecordHandler.Finished;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.RecordHandler;
import io.github.kafkaresilience.internal.ladder.RecordPublisher;
import io.github.kafkaresilience.internal.support.Futures;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.kafka.support.KafkaUtils;
import org.springframework.kafka.support.serializer.DeserializationException;
import org.springframework.kafka.support.serializer.ErrorHandlingDeserializer;
import org.springframework.messaging.Message;
import org.springframework.messaging.converter.MessageConversionException;
import org.springframework.messaging.handler.invocation.MethodArgumentResolutionException;

/**
 * Deserializes a record with the application's deserializers and invokes the listener
 * method through spring-kafka's messaging infrastructure, as a {@code @KafkaListener}
 * method is invoked ({@link ListenerMessaging}): the parameters may be the payload,
 * headers, the {@link Message}, the {@link ConsumerRecord} or its metadata.
 * <p>
 * A record that cannot be read is reported as poison and the method does not run: a
 * deserializer threw, an {@link ErrorHandlingDeserializer} reported its delegate's
 * failure in an exception header (the poison's failure is then that
 * {@link DeserializationException}, with the delegate's exception as its cause), or the
 * record message converter failed. A parameter that cannot be resolved from a record that
 * could be read (a payload of another type than the parameter's that cannot be converted,
 * a {@code @Valid} payload that is not valid, a tombstone for a required payload) is a
 * permanent failure; any other failure is the method's own exception. With an
 * {@link IdempotencyGuard}, the method runs only for records whose idempotency key was
 * not completed before.
 * <p>
 * Records are deserialized as if read from their main topic, also when they come from a
 * retry topic, so that topic-based schema lookups keep working. The method is told where
 * the record was read: on a retry, {@code KafkaHeaders.RECEIVED_TOPIC} and {@code OFFSET}
 * name the retry topic and the record's offset there, and the {@code original.*} headers
 * its birthplace.
 * <p>
 * The deserializers, the idempotency key and the method see a copy of the record's
 * headers: a deserializer may remove headers (the JSON deserializer removes its type
 * headers) or add some, and the method sees them as the deserializers left them, as a
 * {@code @KafkaListener} does. The {@link Delivery}'s own headers stay as the record
 * arrived: its retries and its dead letter carry them, and its next attempt deserializes
 * from them again.
 *
 * @since 0.1.0
 */
final class HandlerInvoker implements RecordHandler, AsyncRecordHandler {

	private final ListenerMethodAdapter method;

	private final String description;

	private final String groupId;

	private final RecordReader reader;

	private final @Nullable IdempotencyGuard guard;

	/** How long a result that completes later is waited for. */
	private final Duration attemptTimeout;

	/**
	 * Sends the replies of a {@code @SendTo} method, in the record's step; {@code null}
	 * for others.
	 */
	private final @Nullable RecordPublisher replyPublisher;

	/**
	 * How a {@code @SendTo} method's replies are made and sent.
	 *
	 * @param replies makes them as spring-kafka makes a {@code @KafkaListener}'s, with
	 * the application's serializers
	 * @param publisher sends them as a write of the record's step (in {@code transaction}
	 * mode, in its transaction)
	 */
	record ReplyRoute(Replies replies, RecordPublisher publisher) {
	}

	/**
	 * @param endpoint the listener, with its method and consumer group
	 * @param mainTopic the main topic, the topic records are deserialized for
	 * @param messaging what the method is invoked through
	 * @param keyDeserializer the application's key deserializer
	 * @param valueDeserializer the application's value deserializer
	 * @param guard runs the method once per idempotency key, or {@code null}
	 * @param attemptTimeout how long a result that completes later is waited for
	 */
	HandlerInvoker(ListenerEndpoint endpoint, String mainTopic, ListenerMessaging messaging,
			Deserializer<?> keyDeserializer, Deserializer<?> valueDeserializer, @Nullable IdempotencyGuard guard,
			Duration attemptTimeout) {
		this(endpoint, mainTopic, messaging, keyDeserializer, valueDeserializer, guard, attemptTimeout, null);
	}

	/**
	 * As above, for a method that may send replies.
	 * @param replies makes and sends the replies of a {@code @SendTo} method, or
	 * {@code null} for an invoker that sends none (the router's handler of a listener
	 * whose attempts the container runs: it is never called)
	 */
	HandlerInvoker(ListenerEndpoint endpoint, String mainTopic, ListenerMessaging messaging,
			Deserializer<?> keyDeserializer, Deserializer<?> valueDeserializer, @Nullable IdempotencyGuard guard,
			Duration attemptTimeout, @Nullable ReplyRoute replies) {
		this.method = new ListenerMethodAdapter(endpoint.bean(), endpoint.method(), messaging, endpoint.replyTopic(),
				(replies != null) ? replies.replies() : null);
		this.replyPublisher = (replies != null) ? replies.publisher() : null;
		this.description = endpoint.method().getDeclaringClass().getName() + "." + endpoint.method().getName();
		this.groupId = endpoint.groupId();
		this.reader = new RecordReader(mainTopic, keyDeserializer, valueDeserializer);
		this.guard = guard;
		this.attemptTimeout = attemptTimeout;
	}

	@Override
	public HandlerResult handle(Delivery delivery) {
		RecordReader.Read read = this.reader.read(delivery);
		ConsumerRecord<Object, Object> record = read.record();
		if (record == null) {
			return Objects.requireNonNull(read.poison()); // a record that cannot be read
		}
		// the converter and the method read the group from the thread, as on a listener
		// container's thread
		KafkaUtils.setConsumerGroupId(this.groupId);
		try {
			Message<?> message;
			try {
				message = this.method.toMessage(record);
			}
			catch (RuntimeException ex) {
				return HandlerResult.poison(ex);
			}
			return (this.guard != null) ? this.guard.run(record, () -> invoke(record, message))
					: invoke(record, message);
		}
		finally {
			KafkaUtils.clearConsumerGroupId();
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The record is read, its claim taken and the method called on the calling thread;
	 * the attempt ends when the method's result completes, or fails with an
	 * {@link AttemptTimeoutException} (and the result is cancelled) when it did not
	 * complete within the attempt timeout. The claim is completed or released by the
	 * {@link Completion}, on the worker that finishes the attempt.
	 */
	@Override
	public CompletableFuture<Completion> start(Delivery delivery) {
		RecordReader.Read read = this.reader.read(delivery);
		ConsumerRecord<Object, Object> record = read.record();
		if (record == null) {
			return CompletableFuture.completedFuture(Completion.of(Objects.requireNonNull(read.poison())));
		}
		KafkaUtils.setConsumerGroupId(this.groupId);
		try {
			Message<?> message;
			try {
				message = this.method.toMessage(record);
			}
			catch (RuntimeException ex) {
				return CompletableFuture.completedFuture(Completion.of(HandlerResult.poison(ex)));
			}
			Claim claim = null;
			if (this.guard != null) {
				IdempotencyGuard.Admission admission = this.guard.admit(record);
				claim = admission.claim();
				if (claim == null) {
					return CompletableFuture
						.completedFuture(Completion.of(Objects.requireNonNull(admission.decided())));
				}
			}
			Claim claimed = claim;
			return call(record, message).thenApply((called) -> () -> finish(record, message, claimed, called));
		}
		finally {
			KafkaUtils.clearConsumerGroupId();
		}
	}

	/**
	 * Finishes an attempt once the method's result completed, on a worker, in the
	 * record's step: makes the replies of a successful {@code @SendTo} method (an attempt
	 * whose replies cannot be made fails), completes or releases the record's claim, then
	 * sends the replies.
	 */
	private Finished finish(ConsumerRecord<Object, Object> record, Message<?> message, @Nullable Claim claim,
			Called called) {
		HandlerResult result = called.result();
		List<ProducerRecord<byte[], byte[]>> replies = List.of();
		if (result.outcome() == HandlerResult.Outcome.SUCCESS && this.method.replies()) {
			try {
				replies = this.method.replies(called.value(), record, message);
			}
			catch (RuntimeException ex) {
				result = HandlerResult.failed(ex);
			}
		}
		if (claim != null && this.guard != null) {
			result = this.guard.finish(claim, result);
		}
		RecordPublisher publisher = this.replyPublisher;
		if (result.outcome() != HandlerResult.Outcome.SUCCESS || replies.isEmpty() || publisher == null) {
			return Finished.of(result);
		}
		CompletableFuture<?>[] sent = replies.stream()
			.map((reply) -> Futures.call(() -> publisher.replying(reply)))
			.toArray(CompletableFuture<?>[]::new);
		return new Finished(result, CompletableFuture.allOf(sent));
	}

	/**
	 * How a call of the method went once its result completed.
	 *
	 * @param result success, or the failure
	 * @param value the result's value on success, what a {@code @SendTo} method replies
	 * with
	 */
	private record Called(HandlerResult result, @Nullable Object value) {
	}

	/**
	 * Calls the method; the future completes, never exceptionally, with how its result
	 * completed.
	 */
	private CompletableFuture<Called> call(ConsumerRecord<Object, Object> record, Message<?> message) {
		Object returned;
		try {
			returned = this.method.invoke(record, message);
		}
		catch (ListenerExecutionFailedException ex) {
			return CompletableFuture
				.completedFuture(new Called(HandlerResult.failed(failure(ex, this.description)), null));
		}
		catch (Error ex) {
			return CompletableFuture.completedFuture(new Called(HandlerResult.failed(ex), null));
		}
		if (!AsyncResults.isAsync(this.method.method())) {
			return CompletableFuture.completedFuture(new Called(HandlerResult.success(), returned)); // a
																										// @SendTo
																										// method
																										// that
																										// returns
																										// once
																										// done
		}
		return AsyncResults.outcome(AsyncResults.toFuture(returned, this.description), this.attemptTimeout,
				(value, failure) -> (failure != null) ? new Called(HandlerResult.failed(failure), null)
						: new Called(HandlerResult.success(), value),
				() -> new Called(HandlerResult.failed(new AttemptTimeoutException(
						"The result of listener method " + this.description + " for " + record.topic() + "-"
								+ record.partition() + "@" + record.offset()
								+ " did not complete within the attempt timeout of " + this.attemptTimeout,
						this.attemptTimeout)), null));
	}

	private HandlerResult invoke(ConsumerRecord<Object, Object> record, Message<?> message) {
		try {
			this.method.invoke(record, message);
			return HandlerResult.success();
		}
		catch (ListenerExecutionFailedException ex) {
			return HandlerResult.failed(failure(ex, this.description));
		}
		catch (Error ex) {
			// an error the method threw fails its attempt, as an exception does
			return HandlerResult.failed(ex);
		}
	}

	/**
	 * The failure of an invocation: a parameter that cannot be resolved from the record
	 * fails every attempt alike, and is permanent (spring-kafka's error handlers do not
	 * retry these either); otherwise the method's own exception.
	 */
	static Throwable failure(ListenerExecutionFailedException ex, String description) {
		Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
		// spring-kafka wraps a conversion failure in one more, which says nothing
		if (cause instanceof MessageConversionException
				&& cause.getCause() instanceof MessageConversionException inner) {
			cause = inner;
		}
		// a @Valid payload that is not valid, or a required one that is a tombstone, is a
		// MethodArgumentNotValidException, one of these
		if (cause instanceof MethodArgumentResolutionException || cause instanceof MessageConversionException) {
			return new PermanentFailureException(
					"Listener method " + description + " cannot take the record: " + cause.getMessage(), cause);
		}
		return cause;
	}

}
