package io.github.kafkaresilience.internal.listener;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.listener.TenantResolver;
import org.jspecify.annotations.Nullable;

import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;

/**
 * One {@code @OrderedRetryListener} method with its attributes resolved.
 *
 * @param id the listener id
 * @param groupId the consumer group
 * @param topics the main topics
 * @param delays the stage delays, {@code null} for the configured default
 * @param maxAttempts the attempts, {@code null} for the configured default
 * @param concurrency the worker count, {@code null} for the configured default
 * @param idempotent whether the listener is guarded, {@code null} for the configured
 * default
 * @param idempotencyKey the key expression, {@code null} for the default key
 * @param autoStartup whether the listener starts with the application
 * @param bean the bean holding the method
 * @param method the listener method
 * @param containerFactory the name of the {@link OrderedRetryContainerFactory} bean that
 * creates its container, {@code null} for the application's default one
 * @param consumerProperties settings of its consumer on top of the application's
 * @param batch whether the method takes a batch of records
 * @param batchSize the most records in one batch, {@code null} for the configured default
 * @param attemptTimeout how long a result that completes later is waited for,
 * {@code null} for the configured default
 * @param replyTopic the topic of the method's {@code @SendTo}, resolved (an expression
 * evaluated per reply stays as it is; empty for the request's
 * {@code KafkaHeaders.REPLY_TOPIC}), or {@code null} when it sends no replies
 * @param tenantResolver finds the tenant of its records, {@code null} for the factory's
 * @param rateLimit the most records a second handed to it, {@code null} for the factory's
 * @since 0.1.0
 */
public record ListenerEndpoint(String id, String groupId, List<String> topics, @Nullable List<Duration> delays,
		@Nullable Integer maxAttempts, @Nullable Integer concurrency, @Nullable Boolean idempotent,
		@Nullable String idempotencyKey, boolean autoStartup, Object bean, Method method,
		@Nullable String containerFactory, Map<String, String> consumerProperties, boolean batch,
		@Nullable Integer batchSize, @Nullable Duration attemptTimeout, @Nullable String replyTopic,
		@Nullable TenantResolver tenantResolver, @Nullable Double rateLimit) {

	public ListenerEndpoint {
		topics = List.copyOf(topics);
		delays = (delays != null) ? List.copyOf(delays) : null;
		consumerProperties = Map.copyOf(consumerProperties);
	}

	/** An endpoint whose results that complete later are waited for as configured. */
	public ListenerEndpoint(String id, String groupId, List<String> topics, @Nullable List<Duration> delays,
			@Nullable Integer maxAttempts, @Nullable Integer concurrency, @Nullable Boolean idempotent,
			@Nullable String idempotencyKey, boolean autoStartup, Object bean, Method method,
			@Nullable String containerFactory, Map<String, String> consumerProperties, boolean batch,
			@Nullable Integer batchSize) {
		this(id, groupId, topics, delays, maxAttempts, concurrency, idempotent, idempotencyKey, autoStartup, bean,
				method, containerFactory, consumerProperties, batch, batchSize, null, null, null, null);
	}

	/**
	 * Whether the container runs the method's attempts as results that complete later: it
	 * returns one (a {@code CompletionStage}, a {@code Mono}) or is a Kotlin
	 * {@code suspend} function, and an attempt ends when it completes; or it sends
	 * replies ({@code @SendTo}), which are written with the record's step.
	 */
	public boolean async() {
		return AsyncResults.isAsync(this.method) || this.replyTopic != null;
	}

	/**
	 * An endpoint of the default container factory, with the application's consumer
	 * settings.
	 */
	public ListenerEndpoint(String id, String groupId, List<String> topics, @Nullable List<Duration> delays,
			@Nullable Integer maxAttempts, @Nullable Integer concurrency, @Nullable Boolean idempotent,
			@Nullable String idempotencyKey, boolean autoStartup, Object bean, Method method) {
		this(id, groupId, topics, delays, maxAttempts, concurrency, idempotent, idempotencyKey, autoStartup, bean,
				method, null, Map.of());
	}

	/** A record listener's endpoint. */
	public ListenerEndpoint(String id, String groupId, List<String> topics, @Nullable List<Duration> delays,
			@Nullable Integer maxAttempts, @Nullable Integer concurrency, @Nullable Boolean idempotent,
			@Nullable String idempotencyKey, boolean autoStartup, Object bean, Method method,
			@Nullable String containerFactory, Map<String, String> consumerProperties) {
		this(id, groupId, topics, delays, maxAttempts, concurrency, idempotent, idempotencyKey, autoStartup, bean,
				method, containerFactory, consumerProperties, false, null);
	}

	/** An endpoint that starts with the application. */
	public ListenerEndpoint(String id, String groupId, List<String> topics, @Nullable List<Duration> delays,
			@Nullable Integer maxAttempts, @Nullable Integer concurrency, @Nullable Boolean idempotent,
			@Nullable String idempotencyKey, Object bean, Method method) {
		this(id, groupId, topics, delays, maxAttempts, concurrency, idempotent, idempotencyKey, true, bean, method);
	}

}
