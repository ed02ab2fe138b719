package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.kafkaresilience.OrderedRetryListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.annotation.BackOff;
import org.springframework.kafka.annotation.EnableKafkaRetryTopic;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.annotation.RetryableTopic;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The Spring Boot applications the scenarios start: one with an
 * {@link OrderedRetryListener @OrderedRetryListener}, one with a plain
 * {@link KafkaListener @KafkaListener}, and one with a {@code @KafkaListener} whose failed
 * records Spring Kafka's {@link RetryableTopic @RetryableTopic} retries (what an application
 * uses instead of the library). All read raw bytes and hand every record to the scenario's
 * {@link Workload}; everything else is the defaults of Spring Boot, Spring Kafka and the
 * library.
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
	 * Starts an application whose {@code @OrderedRetryListener} consumes {@code topic}, with
	 * more beans (for example a {@code ResilienceObserver}).
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
	 * Starts an application whose plain {@code @KafkaListener} consumes {@code topic}, with
	 * the library switched off.
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
		// a poll timeout like the library's (100 ms) only makes stopping quicker: polls return at
		// once while records are waiting
		List<String> all = new ArrayList<>(List.of("kafka.resilience.enabled=false",
				"spring.kafka.listener.immediate-stop=true", "spring.kafka.listener.poll-timeout=100ms"));
		all.addAll(List.of(properties));
		return start(PlainApplication.class, bootstrapServers, topic, id, concurrency, workload, List.of(), all);
	}

	/**
	 * Starts an application whose {@code @KafkaListener} consumes {@code topic} with
	 * {@code @RetryableTopic}, the library switched off: a failed record is published to a retry
	 * topic and consumed again once its delay has passed, with no regard for the order of its
	 * key. Spring Kafka takes the delays of its retry topics as a first delay, a multiplier and
	 * a maximum, so only a list of delays that grows by one factor can be given.
	 * @param bootstrapServers the broker
	 * @param topic the main topic
	 * @param id the listener id, also the consumer group (the retry topics' listeners get
	 * Spring Kafka's suffixes)
	 * @param concurrency the consumers of each listener container (the main topic's, each
	 * retry topic's and the dead-letter topic's)
	 * @param workload what the handler does
	 * @param delays the delays of the retries, one per retry topic
	 * @param partitions the partitions of the retry and dead-letter topics Spring Kafka creates
	 * @param properties more properties
	 * @return the running application
	 * @throws IllegalArgumentException when the delays do not grow by one factor
	 */
	static ConfigurableApplicationContext retryable(String bootstrapServers, String topic, String id, int concurrency,
			Workload workload, List<Duration> delays, int partitions, String... properties) {
		// the records go back to Kafka as they came: the template that publishes them writes bytes
		List<String> all = new ArrayList<>(List.of("kafka.resilience.enabled=false",
				"spring.kafka.listener.immediate-stop=true", "spring.kafka.listener.poll-timeout=100ms",
				"spring.kafka.producer.key-serializer=" + ByteArraySerializer.class.getName(),
				"spring.kafka.producer.value-serializer=" + ByteArraySerializer.class.getName()));
		all.addAll(retryableBackOff(delays));
		all.add("bench.retry.partitions=" + partitions);
		all.addAll(List.of(properties));
		return start(RetryableApplication.class, bootstrapServers, topic, id, concurrency, workload, List.of(), all);
	}

	/**
	 * The {@code @RetryableTopic} settings that give these delays: one attempt more than there
	 * are delays, the first delay, the factor between one delay and the next, and the last
	 * delay as the maximum.
	 * @param delays the delays, at least one
	 * @return the {@code bench.retry.*} properties the handler's annotation reads
	 * @throws IllegalArgumentException when the delays do not grow by one factor of at least 1
	 */
	static List<String> retryableBackOff(List<Duration> delays) {
		if (delays.isEmpty()) {
			throw new IllegalArgumentException("@RetryableTopic needs at least one delay");
		}
		long first = delays.get(0).toMillis();
		double multiplier = (delays.size() > 1) ? (double) delays.get(1).toMillis() / first : 1.0;
		long delay = first;
		for (int i = 0; i < delays.size(); i++) {
			if (first < 1 || multiplier < 1.0 || Math.abs(delays.get(i).toMillis() - delay) > 1) {
				throw new IllegalArgumentException("@RetryableTopic takes a first delay, a factor of at least 1 and a "
						+ "maximum: it cannot give the delays " + delays);
			}
			delay = Math.round(delay * multiplier);
		}
		return List.of("bench.retry.attempts=" + (delays.size() + 1), "bench.retry.delay=" + first,
				"bench.retry.multiplier=" + multiplier,
				"bench.retry.max-delay=" + delays.get(delays.size() - 1).toMillis());
	}

	private static ConfigurableApplicationContext start(Class<?> application, String bootstrapServers, String topic,
			String id, int concurrency, Workload workload, List<?> beans, List<String> properties) {
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
	@Import(PlainHandler.class)
	static class PlainApplication {

	}

	/**
	 * {@code @EnableKafkaRetryTopic} needs a task scheduler, to resume a retry topic's
	 * partition once its next record is due; {@code @EnableScheduling} has Spring Boot create
	 * one.
	 */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableKafkaRetryTopic
	@EnableScheduling
	@Import(RetryableHandler.class)
	static class RetryableApplication {

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

	static class RetryableHandler {

		private final Workload workload;

		RetryableHandler(Workload workload) {
			this.workload = workload;
		}

		@RetryableTopic(attempts = "${bench.retry.attempts}",
				backOff = @BackOff(delayString = "${bench.retry.delay}", multiplierString = "${bench.retry.multiplier}",
						maxDelayString = "${bench.retry.max-delay}"),
				numPartitions = "${bench.retry.partitions}")
		@KafkaListener(id = "${bench.listener-id}", topics = "${bench.topic}", groupId = "${bench.listener-id}",
				concurrency = "${bench.concurrency}")
		void handle(ConsumerRecord<byte[], byte[]> record) throws Exception {
			this.workload.handle(record);
		}

	}

}
