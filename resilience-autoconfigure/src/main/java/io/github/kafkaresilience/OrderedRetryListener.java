package io.github.kafkaresilience;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.aot.hint.annotation.Reflective;
import org.springframework.messaging.handler.annotation.MessageMappingReflectiveProcessor;

/**
 * Marks a method as the handler of one or more Kafka topics with ordered non-blocking
 * retries: when the method throws for a record, only that record's key stops; the record
 * and every later record with the same key travel, in order, through the delayed retry
 * topics and finally the dead-letter topic, while all other keys keep flowing.
 * <p>
 * The method is invoked as a {@code @KafkaListener} method of a record listener is (of a
 * batch listener with {@link #batch()}), with spring-kafka's handler-method factory (or
 * the one a {@code KafkaListenerConfigurer} set) and the application's
 * {@code RecordMessageConverter}: it may take the deserialized value or a
 * {@code @Payload} converted from it (validated with {@code @Valid}; nullable or
 * {@code Optional} for tombstones), {@code @Header} and {@code @Headers} parameters, the
 * {@code Message}, the {@link org.apache.kafka.clients.consumer.ConsumerRecord} and its
 * {@code ConsumerRecordMetadata}, and may return a result that completes later (see
 * {@link #attemptTimeout()}). An {@code Acknowledgment} or the {@code Consumer} fails
 * startup, and so does a batch of records unless {@link #batch()} is set. Throwing
 * {@link PermanentFailureException} (or a configured permanent exception type) sends the
 * record to the dead-letter topic without retrying; so does a payload that is not valid.
 * <p>
 * All attributes are {@code String}s so that {@code ${...}} placeholders and
 * {@code #{...}} expressions can be used.
 *
 * @since 0.1.0
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
// ahead-of-time processing registers the method for invocation and its payload for
// binding, as for @KafkaListener
@Reflective(MessageMappingReflectiveProcessor.class)
public @interface OrderedRetryListener {

	/**
	 * The listener id, used in client ids and meter tags. Defaults to the bean name and
	 * the method name.
	 * @return the listener id
	 */
	String id() default "";

	/**
	 * The main topics to consume. Each topic gets its own retry, dead-letter and lock
	 * topics.
	 * @return the topic names
	 */
	String[] topics();

	/**
	 * The consumer group. Defaults to {@code spring.kafka.consumer.group-id}, then to the
	 * {@link #id()}.
	 * @return the group id
	 */
	String groupId() default "";

	/**
	 * The delays of the retry stages for this listener, comma separated (for example
	 * {@code "30s, 5m, 1h"}); one retry topic per delay. Empty means
	 * {@code kafka.resilience.retry.delays}.
	 * @return the stage delays
	 */
	String delays() default "";

	/**
	 * The number of attempts (the first one included) before a record goes to the
	 * dead-letter topic. Empty means {@code kafka.resilience.retry.max-attempts}.
	 * @return the maximum number of attempts
	 */
	String maxAttempts() default "";

	/**
	 * The number of worker threads that run this listener's records, concurrent across
	 * keys and sequential within a key. Empty means
	 * {@code kafka.resilience.consumer.concurrency}. On virtual threads (Java 21 or
	 * later, with {@code kafka.resilience.consumer.virtual-threads} or
	 * {@code spring.threads.virtual.enabled}) it may be in the thousands.
	 * @return the number of workers
	 */
	String concurrency() default "";

	/**
	 * Whether the handler is guarded against running twice for one record: {@code "true"}
	 * or {@code "false"}. A guarded listener claims each record's idempotency key before
	 * the method runs, skips a record whose key was completed, and releases the claim
	 * when the method throws. Empty means {@code kafka.resilience.idempotency.enabled}.
	 * @return whether the listener is idempotent
	 */
	String idempotent() default "";

	/**
	 * A SpEL expression giving a record's idempotency key, evaluated on the deserialized
	 * {@link org.apache.kafka.clients.consumer.ConsumerRecord} (for example
	 * {@code "value.paymentId"}, or {@code "@fileHashes.of(value)"} with a bean). Empty
	 * means the {@link io.github.kafkaresilience.idempotency.IdempotencyKeyResolver} bean
	 * if there is one, otherwise the record's birthplace
	 * ({@code original.topic/partition/offset}), so that retries and replays of a record
	 * share its key. {@code ${...}} placeholders are resolved first.
	 * @return the key expression
	 */
	String idempotencyKey() default "";

	/**
	 * Whether the listener starts with the application: {@code "true"} or
	 * {@code "false"}, placeholders allowed. Empty means {@code "true"}. A listener that
	 * does not start with the application is started with
	 * {@link io.github.kafkaresilience.listener.OrderedRetryListenerRegistry#start(String)}.
	 * @return whether the listener starts with the application
	 */
	String autoStartup() default "";

	/**
	 * The bean name of the
	 * {@link io.github.kafkaresilience.listener.OrderedRetryContainerFactory} that
	 * creates this listener's container, so that listeners may differ in dual-write mode,
	 * bounds or delays. Empty means the auto-configured
	 * {@code orderedRetryContainerFactory}.
	 * @return the container factory bean name
	 */
	String containerFactory() default "";

	/**
	 * Kafka consumer properties for this listener's consumer, overriding the
	 * application's ({@code spring.kafka.consumer.*}), as on {@code @KafkaListener}: each
	 * entry is {@code key=value} or {@code key:value} (Java {@code Properties} format),
	 * placeholders allowed. {@code group.id} (use {@link #groupId()}),
	 * {@code enable.auto.commit} and the deserializers are the library's and fail
	 * startup, and so does an isolation level the dual-write mode cannot work with.
	 * @return the consumer properties
	 */
	String[] properties() default {};

	/**
	 * Whether the method takes a batch of records, as a
	 * {@code @KafkaListener(batch = "true")} method does: a {@code List} of values, of
	 * {@code ConsumerRecord}s or of {@code Message}s, or {@code ConsumerRecords}, with
	 * the batch forms of {@code @Header}. A batch holds records that may all run now:
	 * each the head of its key, or a later record of its key riding right behind it, in
	 * offset order (docs/PROTOCOL.md, rule 10.1); each record's outcome is its own. The
	 * method names a failed record with a {@code BatchListenerFailedException}; a batch
	 * that fails without naming one is bisected (see
	 * {@code kafka.resilience.consumer.batch-failure}). Placeholders are allowed; the
	 * default is {@code false}.
	 * @return {@code "true"} for a batch listener
	 * @since 0.1.0
	 */
	String batch() default "";

	/**
	 * The most records in one batch of a batch listener, overriding
	 * {@code kafka.resilience.consumer.batch-size}. Placeholders are allowed.
	 * @return the batch size, empty for the configured one
	 * @since 0.1.0
	 */
	String batchSize() default "";

	/**
	 * How long the result of a method that returns one that completes later (a
	 * {@code CompletableFuture}, a {@code CompletionStage}, a {@code Mono}, or a Kotlin
	 * {@code suspend} function) is waited for before the attempt fails with an
	 * {@link AttemptTimeoutException}, e.g. {@code "10s"}; empty for
	 * {@code kafka.resilience.consumer.attempt-timeout}. Refused on a method that returns
	 * once done.
	 * @since 0.1.0
	 */
	String attemptTimeout() default "";

	/**
	 * The header whose value (UTF-8) is a record's tenant: the listener then shares its
	 * workers and its partitions' in-flight bound fairly between tenants
	 * ({@code kafka.resilience.tenants.*}). At most one of {@code tenantHeader},
	 * {@code tenantExpression} and {@code tenantResolver}; none for the application's
	 * default (the {@code kafka.resilience.tenants} properties, or a
	 * {@code TenantResolver} bean), which is no tenants unless set.
	 */
	String tenantHeader() default "";

	/**
	 * A SpEL expression that gives a record's tenant, evaluated on the record as the
	 * broker holds it before it is deserialized: the record is the root object,
	 * {@code #key} is its key and {@code #headers} its headers' last values, as UTF-8
	 * text; beans are reachable with {@code @name}. E.g.
	 * {@code "#key.substring(0, #key.indexOf(':'))"}.
	 */
	String tenantExpression() default "";

	/** The name of a {@code TenantResolver} bean that finds a record's tenant. */
	String tenantResolver() default "";

	/**
	 * The most records a second handed to the method, e.g. {@code "200"}: a record waits
	 * for its turn in the queue, holding no worker. Empty for
	 * {@code kafka.resilience.rate-limit.records-per-second}, which is no limit unless
	 * set; {@code kafka.resilience.rate-limit.shared} makes it the group's.
	 */
	String rateLimit() default "";

}
