package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.kafkaresilience.OrderedRetryListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.kafka.retrytopic.RetryTopicConfiguration;
import org.springframework.kafka.retrytopic.RetryTopicConfigurationBuilder;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

/**
 * The Spring Boot applications the scenarios start: one with an
 * {@link OrderedRetryListener @OrderedRetryListener} (and the same listener with
 * {@code tenantHeader} or {@code rateLimit}), one with a plain
 * {@link KafkaListener @KafkaListener}, and one with a plain {@code @KafkaListener} that
 * Spring Kafka's own non-blocking retries (the retry topics of {@code @RetryableTopic})
 * back; and a batch listener of each kind ({@code batch = "true"}), whose method takes a
 * {@code List} of records. All of them read raw bytes and hand every record (or every
 * call's records) to the scenario's {@link Workload} (or {@link BatchWorkload});
 * everything else is the defaults of Spring Boot, Spring Kafka and the library.
 */
final class ListenerApplications {

	private ListenerApplications() {
	}

	/**
	 * Starts an application whose {@code @OrderedRetryListener} consumes {@code topic}.
	 * @param bootstrapServers the broker
	 * @param topic the main topic
	 * @param id the listener id, also the consumer group and the instance id
	 * @param concurrency the worker threads
	 * @param workload what the handler does
	 * @param properties more properties ({@code kafka.resilience.*} and others)
	 * @return the running application
	 */
	static ConfigurableApplicationContext ordered(String bootstrapServers, String topic, String id, int concurrency,
			Workload workload, String... properties) {
		return ordered(bootstrapServers, topic, id, concurrency, workload, List.of(), properties);
	}

	/**
	 * Starts an application whose {@code @OrderedRetryListener} consumes {@code topic},
	 * with more beans (for example a {@code ResilienceObserver}).
	 * @param bootstrapServers the broker
	 * @param topic the main topic
	 * @param id the listener id, also the consumer group and the instance id
	 * @param concurrency the worker threads
	 * @param workload what the handler does
	 * @param beans more singletons for the application context
	 * @param properties more properties ({@code kafka.resilience.*} and others)
	 * @return the running application
	 */
	static ConfigurableApplicationContext ordered(String bootstrapServers, String topic, String id, int concurrency,
			Workload workload, List<?> beans, String... properties) {
		List<String> all = new ArrayList<>(List.of("kafka.resilience.instance-id=" + id));
		all.addAll(List.of(properties));
		return start(OrderedApplication.class, bootstrapServers, topic, id, concurrency, workload, beans, all);
	}

	/**
	 * Starts an application whose {@code @OrderedRetryListener} consumes {@code topic}
	 * and names how its records' tenants are found, or limits the records a second handed
	 * to its method, or both: the listener of {@link #ordered ordered} with
	 * {@code tenantHeader} and {@code rateLimit} set.
	 * @param bootstrapServers the broker
	 * @param topic the main topic
	 * @param id the listener id, also the consumer group and the instance id
	 * @param concurrency the worker threads
	 * @param tenantHeader the header whose value is a record's tenant, empty for none
	 * @param rateLimit the listener's {@code rateLimit}, records a second, empty for none
	 * @param workload what the handler does
	 * @param beans more singletons for the application context
	 * @param properties more properties ({@code kafka.resilience.*} and others)
	 * @return the running application
	 */
	static ConfigurableApplicationContext fair(String bootstrapServers, String topic, String id, int concurrency,
			String tenantHeader, String rateLimit, Workload workload, List<?> beans, String... properties) {
		List<String> all = new ArrayList<>(List.of("kafka.resilience.instance-id=" + id,
				"bench.tenant-header=" + tenantHeader, "bench.rate-limit=" + rateLimit));
		all.addAll(List.of(properties));
		return start(FairApplication.class, bootstrapServers, topic, id, concurrency, workload, beans, all);
	}

	/**
	 * Starts an application whose plain {@code @KafkaListener} consumes {@code topic},
	 * with the library switched off.
	 * @param bootstrapServers the broker
	 * @param topic the topic
	 * @param id the listener id, also the consumer group
	 * @param concurrency the consumers of the listener container
	 * @param workload what the handler does
	 * @param properties more properties
	 * @return the running application
	 */
	static ConfigurableApplicationContext plain(String bootstrapServers, String topic, String id, int concurrency,
			Workload workload, String... properties) {
		return plain(bootstrapServers, topic, id, concurrency, workload, List.of(), properties);
	}

	/**
	 * Starts an application whose plain {@code @KafkaListener} consumes {@code topic},
	 * with the library switched off and more beans: a {@code CommonErrorHandler} among
	 * them is the one Spring Boot gives the listener's container.
	 * @param bootstrapServers the broker
	 * @param topic the topic
	 * @param id the listener id, also the consumer group
	 * @param concurrency the consumers of the listener container
	 * @param workload what the handler does
	 * @param beans more singletons for the application context
	 * @param properties more properties
	 * @return the running application
	 */
	static ConfigurableApplicationContext plain(String bootstrapServers, String topic, String id, int concurrency,
			Workload workload, List<?> beans, String... properties) {
		// a poll timeout like the library's (100 ms) only makes stopping quicker: polls
		// return at
		// once while records are waiting
		List<String> all = new ArrayList<>(List.of("kafka.resilience.enabled=false",
				"spring.kafka.listener.immediate-stop=true", "spring.kafka.listener.poll-timeout=100ms"));
		all.addAll(List.of(properties));
		return start(PlainApplication.class, bootstrapServers, topic, id, concurrency, workload, beans, all);
	}

	/**
	 * Starts an application whose {@code @OrderedRetryListener(batch = "true")} consumes
	 * {@code topic}: its method takes a {@code List} of records.
	 * @param bootstrapServers the broker
	 * @param topic the main topic
	 * @param id the listener id, also the consumer group and the instance id
	 * @param concurrency the worker threads, which run the calls
	 * @param workload what one call of the method does
	 * @param properties more properties ({@code kafka.resilience.*} and others)
	 * @return the running application
	 */
	static ConfigurableApplicationContext orderedBatch(String bootstrapServers, String topic, String id,
			int concurrency, BatchWorkload workload, String... properties) {
		List<String> all = new ArrayList<>(List.of("kafka.resilience.instance-id=" + id));
		all.addAll(List.of(properties));
		return start(OrderedBatchApplication.class, bootstrapServers, topic, id, concurrency, workload, List.of(), all);
	}

	/**
	 * Starts an application whose plain {@code @KafkaListener(batch = "true")} consumes
	 * {@code topic}, with the library switched off: Spring Boot's
	 * {@code ConcurrentKafkaListenerContainerFactory} made a batch listener factory
	 * ({@code spring.kafka.listener.type=batch}, which calls
	 * {@code setBatchListener(true)}), and a {@code CommonErrorHandler} among the beans
	 * is the one it gives the container.
	 * @param bootstrapServers the broker
	 * @param topic the topic
	 * @param id the listener id, also the consumer group
	 * @param concurrency the consumers of the listener container
	 * @param workload what one call of the method does
	 * @param beans more singletons for the application context
	 * @param properties more properties
	 * @return the running application
	 */
	static ConfigurableApplicationContext plainBatch(String bootstrapServers, String topic, String id, int concurrency,
			BatchWorkload workload, List<?> beans, String... properties) {
		List<String> all = new ArrayList<>(
				List.of("kafka.resilience.enabled=false", "spring.kafka.listener.immediate-stop=true",
						"spring.kafka.listener.poll-timeout=100ms", "spring.kafka.listener.type=batch"));
		all.addAll(List.of(properties));
		return start(PlainBatchApplication.class, bootstrapServers, topic, id, concurrency, workload, beans, all);
	}

	/**
	 * Starts an application whose plain {@code @KafkaListener} consumes {@code topic}
	 * with Spring Kafka's non-blocking retries, the library switched off: a record that
	 * fails goes to one retry topic per delay in turn, then to a dead-letter topic. The
	 * retry and dead-letter topics get the partitions of the main topic (as the library's
	 * retry topics do), and each of their containers the concurrency of the main one
	 * (Spring Kafka's default).
	 * <p>
	 * The retries are configured with a {@link RetryTopicConfiguration} bean rather than
	 * the {@code @RetryableTopic} annotation: both set up the same retry topics, but the
	 * annotation's back-off can only grow by a multiplier, and the bean's takes the stage
	 * delays as they are. Neither needs {@code @EnableKafkaRetryTopic}: when it is
	 * absent, Spring Kafka's listener post-processor creates the retry topic
	 * infrastructure itself (Spring Boot does not create it, and only adds a
	 * configuration of its own with {@code spring.kafka.retry.topic.enabled=true}).
	 * @param bootstrapServers the broker
	 * @param topic the main topic
	 * @param id the listener id, also the consumer group
	 * @param concurrency the consumers of each listener container (main, retry and
	 * dead-letter topics)
	 * @param delays the stage delays in order: a record is attempted once more than there
	 * are delays
	 * @param partitions the partitions of the retry and dead-letter topics
	 * @param workload what the handler does
	 * @param properties more properties
	 * @return the running application
	 */
	static ConfigurableApplicationContext retryable(String bootstrapServers, String topic, String id, int concurrency,
			List<Duration> delays, int partitions, Workload workload, String... properties) {
		// the retry topics' template writes the records as the listener read them: raw
		// bytes
		List<String> all = new ArrayList<>(List.of("kafka.resilience.enabled=false",
				"spring.kafka.listener.immediate-stop=true", "spring.kafka.listener.poll-timeout=100ms",
				"spring.kafka.producer.key-serializer=" + ByteArraySerializer.class.getName(),
				"spring.kafka.producer.value-serializer=" + ByteArraySerializer.class.getName()));
		all.addAll(List.of(properties));
		return start(RetryableApplication.class, bootstrapServers, topic, id, concurrency, workload,
				List.of(new RetryStages(topic, List.copyOf(delays), partitions)), all);
	}

	/**
	 * Waits until every listener container of an application has been assigned every
	 * partition of its topics: for an application without sync barriers, the moment it
	 * consumes everything it will.
	 * @param context the application
	 * @param partitions the partitions of each topic
	 * @param timeout how long to wait at most
	 * @return whether every container has all its partitions
	 */
	static boolean awaitAssignment(ConfigurableApplicationContext context, int partitions, Duration timeout)
			throws InterruptedException {
		KafkaListenerEndpointRegistry registry = context.getBean(KafkaListenerEndpointRegistry.class);
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!registry.getListenerContainers().stream().allMatch((container) -> assigned(container, partitions))) {
			if (System.nanoTime() - deadline > 0) {
				return false;
			}
			TimeUnit.MILLISECONDS.sleep(10);
		}
		return true;
	}

	/**
	 * Waits until every listener container of an application has been assigned every
	 * partition of its topics, and every consumer of a container has partitions of its
	 * own (those beyond the partitions excepted): a group whose first member still holds
	 * every partition has not settled yet.
	 * @param context the application
	 * @param partitions the partitions of each topic
	 * @param timeout how long to wait at most
	 * @return whether every container has all its partitions, spread over its consumers
	 */
	static boolean awaitSpreadAssignment(ConfigurableApplicationContext context, int partitions, Duration timeout)
			throws InterruptedException {
		KafkaListenerEndpointRegistry registry = context.getBean(KafkaListenerEndpointRegistry.class);
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!registry.getListenerContainers()
			.stream()
			.allMatch((container) -> assigned(container, partitions) && spread(container))) {
			if (System.nanoTime() - deadline > 0) {
				return false;
			}
			TimeUnit.MILLISECONDS.sleep(10);
		}
		return true;
	}

	/**
	 * Starts the listener containers of an application started with
	 * {@code spring.kafka.listener.auto-startup=false} paused, and resumes them once
	 * every consumer of each has partitions of its own: a container's first consumer is
	 * otherwise assigned every partition and consumes them all alone until the group's
	 * next rebalance, a heartbeat later. A paused consumer keeps polling, so the group
	 * settles meanwhile, and it takes no record until it is resumed.
	 * @param context the application
	 * @param partitions the partitions of each topic
	 * @param timeout how long to wait for the group at most
	 * @return whether every container had all its partitions, spread over its consumers;
	 * the containers are resumed either way
	 */
	static boolean startSettled(ConfigurableApplicationContext context, int partitions, Duration timeout)
			throws InterruptedException {
		KafkaListenerEndpointRegistry registry = context.getBean(KafkaListenerEndpointRegistry.class);
		for (MessageListenerContainer container : registry.getListenerContainers()) {
			container.pause();
			container.start();
		}
		try {
			return awaitSpreadAssignment(context, partitions, timeout);
		}
		finally {
			registry.getListenerContainers().forEach(MessageListenerContainer::resume);
		}
	}

	private static boolean spread(MessageListenerContainer container) {
		if (!(container instanceof ConcurrentMessageListenerContainer<?, ?> concurrent)) {
			return true;
		}
		Collection<TopicPartition> all = container.getAssignedPartitions();
		int consumers = concurrent.getContainers().size();
		long withPartitions = concurrent.getContainers()
			.stream()
			.filter((child) -> child.getAssignedPartitions() != null && !child.getAssignedPartitions().isEmpty())
			.count();
		return all != null && withPartitions >= Math.min(consumers, all.size());
	}

	private static boolean assigned(MessageListenerContainer container, int partitions) {
		String[] topics = container.getContainerProperties().getTopics();
		Collection<TopicPartition> assigned = container.getAssignedPartitions();
		return topics != null && assigned != null && assigned.size() == topics.length * partitions;
	}

	// workload: the Workload or BatchWorkload that the application's handler takes
	private static ConfigurableApplicationContext start(Class<?> application, String bootstrapServers, String topic,
			String id, int concurrency, Object workload, List<?> beans, List<String> properties) {
		ApplicationContextInitializer<ConfigurableApplicationContext> registerWorkload = (context) -> {
			context.getBeanFactory().registerSingleton("benchmarkWorkload", workload);
			for (int i = 0; i < beans.size(); i++) {
				context.getBeanFactory().registerSingleton("benchmarkBean" + i, beans.get(i));
			}
		};
		return new SpringApplicationBuilder(application).web(WebApplicationType.NONE)
			.initializers(registerWorkload)
			.registerShutdownHook(false)
			.properties("spring.kafka.bootstrap-servers=" + bootstrapServers, "bench.topic=" + topic,
					"bench.listener-id=" + id, "bench.concurrency=" + concurrency,
					"spring.kafka.consumer.auto-offset-reset=earliest",
					"spring.kafka.consumer.key-deserializer=" + ByteArrayDeserializer.class.getName(),
					"spring.kafka.consumer.value-deserializer=" + ByteArrayDeserializer.class.getName(),
					"spring.main.banner-mode=off", "spring.main.log-startup-info=false")
			.properties(properties.toArray(String[]::new))
			.run();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(OrderedHandler.class)
	static class OrderedApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(FairHandler.class)
	static class FairApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(PlainHandler.class)
	static class PlainApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(OrderedBatchHandler.class)
	static class OrderedBatchApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(PlainBatchHandler.class)
	static class PlainBatchApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(PlainHandler.class)
	static class RetryableApplication {

		@Bean
		RetryTopicConfiguration benchmarkRetryTopics(KafkaTemplate<?, ?> template, RetryStages stages) {
			return RetryTopicConfigurationBuilder.newInstance()
				.includeTopic(stages.topic())
				.maxAttempts(stages.delays().size() + 1)
				.customBackoff(new StageBackOff(stages.delays()))
				.autoCreateTopicsWith(stages.partitions(), (short) 1)
				.create(template);
		}

	}

	/**
	 * The retry stages of a {@link #retryable retryable} application.
	 *
	 * @param topic the main topic
	 * @param delays the stage delays in order
	 * @param partitions the partitions of the retry and dead-letter topics
	 */
	record RetryStages(String topic, List<Duration> delays, int partitions) {
	}

	/**
	 * A back-off that gives each stage's delay once, in order, then stops: Spring Kafka
	 * takes one retry topic per value, so the retry topics get exactly the stage delays.
	 */
	record StageBackOff(List<Duration> delays) implements BackOff {

		@Override
		public BackOffExecution start() {
			Iterator<Duration> next = this.delays.iterator();
			return () -> next.hasNext() ? next.next().toMillis() : BackOffExecution.STOP;
		}

	}

	static class OrderedHandler {

		private final Workload workload;

		OrderedHandler(Workload workload) {
			this.workload = workload;
		}

		@OrderedRetryListener(id = "${bench.listener-id}", topics = "${bench.topic}", groupId = "${bench.listener-id}",
				concurrency = "${bench.concurrency}")
		void handle(ConsumerRecord<byte[], byte[]> record) throws Exception {
			this.workload.handle(record);
		}

	}

	/** The listener of {@link OrderedHandler} with tenants or a rate limit. */
	static class FairHandler {

		private final Workload workload;

		FairHandler(Workload workload) {
			this.workload = workload;
		}

		@OrderedRetryListener(id = "${bench.listener-id}", topics = "${bench.topic}", groupId = "${bench.listener-id}",
				concurrency = "${bench.concurrency}", tenantHeader = "${bench.tenant-header}",
				rateLimit = "${bench.rate-limit}")
		void handle(ConsumerRecord<byte[], byte[]> record) throws Exception {
			this.workload.handle(record);
		}

	}

	static class PlainHandler {

		private final Workload workload;

		PlainHandler(Workload workload) {
			this.workload = workload;
		}

		@KafkaListener(id = "${bench.listener-id}", topics = "${bench.topic}", groupId = "${bench.listener-id}",
				concurrency = "${bench.concurrency}")
		void handle(ConsumerRecord<byte[], byte[]> record) throws Exception {
			this.workload.handle(record);
		}

	}

	/**
	 * The method is the one a {@code @KafkaListener(batch = "true")} would have; only the
	 * annotation differs.
	 */
	static class OrderedBatchHandler {

		private final BatchWorkload workload;

		OrderedBatchHandler(BatchWorkload workload) {
			this.workload = workload;
		}

		@OrderedRetryListener(id = "${bench.listener-id}", topics = "${bench.topic}", groupId = "${bench.listener-id}",
				concurrency = "${bench.concurrency}", batch = "true")
		void handle(List<ConsumerRecord<byte[], byte[]>> records) throws Exception {
			this.workload.handle(records);
		}

	}

	static class PlainBatchHandler {

		private final BatchWorkload workload;

		PlainBatchHandler(BatchWorkload workload) {
			this.workload = workload;
		}

		@KafkaListener(id = "${bench.listener-id}", topics = "${bench.topic}", groupId = "${bench.listener-id}",
				concurrency = "${bench.concurrency}", batch = "true")
		void handle(List<ConsumerRecord<byte[], byte[]>> records) throws Exception {
			this.workload.handle(records);
		}

	}

}
