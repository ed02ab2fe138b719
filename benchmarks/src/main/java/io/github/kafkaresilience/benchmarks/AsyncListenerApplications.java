package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

import io.github.kafkaresilience.OrderedRetryListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.annotation.KafkaListener;

/**
 * The applications of P2A, whose listener methods return a result that completes later:
 * an {@code @OrderedRetryListener} returning a {@code CompletableFuture} or a
 * {@code Mono}, and a plain {@code @KafkaListener} returning the same
 * {@code CompletableFuture} (spring-kafka then acknowledges out of order as each
 * completes). The {@link AsyncWork} bean gives the result.
 */
final class AsyncListenerApplications {

	private AsyncListenerApplications() {
	}

	/**
	 * What every contender's result does: completes after a fixed wait, standing for a
	 * call to another service made without a thread, and counts the record.
	 */
	static final class AsyncWork implements AutoCloseable {

		private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "p2a-completer");
			thread.setDaemon(true);
			return thread;
		});

		private final Duration wait;

		private final LongConsumer record;

		/**
		 * @param wait how long after the call a result completes
		 * @param record counts a record by its sequence number once its result completed
		 */
		AsyncWork(Duration wait, LongConsumer record) {
			this.wait = wait;
			this.record = record;
		}

		/** A future a scheduled executor completes after the wait. */
		CompletableFuture<Void> future(ConsumerRecord<byte[], byte[]> record) {
			CompletableFuture<Void> result = new CompletableFuture<>();
			this.timer.schedule(() -> {
				this.record.accept(Records.seq(record.value()));
				result.complete(null);
			}, this.wait.toNanos(), TimeUnit.NANOSECONDS);
			return result;
		}

		/** {@code Mono.delay}, on Reactor's parallel scheduler. */
		Mono<Void> mono(ConsumerRecord<byte[], byte[]> record) {
			return Mono.delay(this.wait).doOnNext((tick) -> this.record.accept(Records.seq(record.value()))).then();
		}

		@Override
		public void close() {
			this.timer.shutdownNow();
		}

	}

	/** The kinds of application. */
	enum Kind {

		ORDERED_FUTURE(OrderedFutureApplication.class), ORDERED_MONO(OrderedMonoApplication.class),
		PLAIN_FUTURE(PlainFutureApplication.class);

		private final Class<?> application;

		Kind(Class<?> application) {
			this.application = application;
		}

	}

	/**
	 * Starts an application of {@code kind} consuming {@code topic}.
	 * @param bootstrapServers the broker
	 * @param topic the main topic
	 * @param id the listener id, also the consumer group and the instance id
	 * @param concurrency the library's workers, or the plain listener's consumers
	 * @param work what the results do
	 * @param properties more properties
	 * @return the running application
	 */
	static ConfigurableApplicationContext start(Kind kind, String bootstrapServers, String topic, String id,
			int concurrency, AsyncWork work, String... properties) {
		ApplicationContextInitializer<ConfigurableApplicationContext> registerWork = (
				context) -> context.getBeanFactory().registerSingleton("benchmarkAsyncWork", work);
		return new SpringApplicationBuilder(kind.application).web(WebApplicationType.NONE)
			.initializers(registerWork)
			.registerShutdownHook(false)
			.properties("spring.kafka.bootstrap-servers=" + bootstrapServers, "bench.topic=" + topic,
					"bench.listener-id=" + id, "bench.concurrency=" + concurrency, "kafka.resilience.instance-id=" + id,
					"spring.kafka.consumer.auto-offset-reset=earliest",
					"spring.kafka.consumer.key-deserializer=" + ByteArrayDeserializer.class.getName(),
					"spring.kafka.consumer.value-deserializer=" + ByteArrayDeserializer.class.getName(),
					"spring.main.banner-mode=off", "spring.main.log-startup-info=false")
			.properties(properties)
			.run();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(OrderedFutureHandler.class)
	static class OrderedFutureApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(OrderedMonoHandler.class)
	static class OrderedMonoApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(PlainFutureHandler.class)
	static class PlainFutureApplication {

	}

	static class OrderedFutureHandler {

		private final AsyncWork work;

		OrderedFutureHandler(AsyncWork work) {
			this.work = work;
		}

		@OrderedRetryListener(id = "${bench.listener-id}", topics = "${bench.topic}", groupId = "${bench.listener-id}",
				concurrency = "${bench.concurrency}")
		CompletableFuture<Void> handle(ConsumerRecord<byte[], byte[]> record) {
			return this.work.future(record);
		}

	}

	static class OrderedMonoHandler {

		private final AsyncWork work;

		OrderedMonoHandler(AsyncWork work) {
			this.work = work;
		}

		@OrderedRetryListener(id = "${bench.listener-id}", topics = "${bench.topic}", groupId = "${bench.listener-id}",
				concurrency = "${bench.concurrency}")
		Mono<Void> handle(ConsumerRecord<byte[], byte[]> record) {
			return this.work.mono(record);
		}

	}

	/** The same method as {@link OrderedFutureHandler}'s; only the annotation differs. */
	static class PlainFutureHandler {

		private final AsyncWork work;

		PlainFutureHandler(AsyncWork work) {
			this.work = work;
		}

		@KafkaListener(id = "${bench.listener-id}", topics = "${bench.topic}", groupId = "${bench.listener-id}",
				concurrency = "${bench.concurrency}")
		CompletableFuture<Void> handle(ConsumerRecord<byte[], byte[]> record) {
			return this.work.future(record);
		}

	}

}
