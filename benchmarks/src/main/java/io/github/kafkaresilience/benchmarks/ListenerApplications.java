package io.github.kafkaresilience.benchmarks;

import java.util.ArrayList;
import java.util.List;

import io.github.kafkaresilience.OrderedRetryListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.annotation.KafkaListener;

/**
 * The two Spring Boot applications the scenarios start: one with an
 * {@link OrderedRetryListener @OrderedRetryListener}, one with a plain
 * {@link KafkaListener @KafkaListener}. Both read raw bytes and hand every record to the
 * scenario's {@link Workload}; everything else is the defaults of Spring Boot and of the
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

}
