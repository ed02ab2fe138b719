package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.confluent.parallelconsumer.ParallelConsumerOptions;
import io.confluent.parallelconsumer.ParallelConsumerOptions.CommitMode;
import io.confluent.parallelconsumer.ParallelConsumerOptions.ProcessingOrder;
import io.confluent.parallelconsumer.ParallelStreamProcessor;
import io.confluent.parallelconsumer.internal.AbstractParallelEoSStreamProcessor;
import io.confluent.parallelconsumer.reactor.ReactorProcessor;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.reactivestreams.Publisher;

/**
 * Confluent's Parallel Consumer with {@link ProcessingOrder#KEY KEY} ordering (records of
 * a key one after the other, keys concurrently), committing offsets with the consumer.
 */
final class ParallelConsumerRunner {

	private ParallelConsumerRunner() {
	}

	/** The version on the classpath, from the jar's Maven metadata. */
	static String version() {
		return Versions.ofMavenArtifact("io.confluent.parallelconsumer", "parallel-consumer-core");
	}

	/**
	 * Consumes {@code topic} in a new group until the tally is complete or the timeout
	 * passes.
	 * @param bootstrapServers the broker
	 * @param topic the topic
	 * @param group the consumer group
	 * @param concurrency the maximum number of records handled at once
	 * @param workload what to do with each record
	 * @param tally the tally the workload fills
	 * @param timeout how long to keep going at most
	 * @throws IllegalStateException when Parallel Consumer stops by itself, with its
	 * cause
	 */
	static void run(String bootstrapServers, String topic, String group, int concurrency, Workload workload,
			Tally tally, Duration timeout) throws Exception {
		try (Running running = start(bootstrapServers, topic, group, concurrency, workload)) {
			long deadline = System.nanoTime() + timeout.toNanos();
			while (!tally.await(Duration.ofMillis(100)) && System.nanoTime() - deadline < 0) {
				running.check();
			}
		}
	}

	/**
	 * Starts consuming {@code topic} in a new group, for a scenario that does more while
	 * it runs than wait for one tally (P10 sends and floods in phases): the caller
	 * {@linkplain Running#check() checks} it now and then and closes it.
	 * @param bootstrapServers the broker
	 * @param topic the topic
	 * @param group the consumer group
	 * @param concurrency the maximum number of records handled at once
	 * @param workload what to do with each record
	 * @return the running Parallel Consumer
	 */
	static Running start(String bootstrapServers, String topic, String group, int concurrency, Workload workload) {
		Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
				ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
				ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false, ConsumerConfig.CLIENT_ID_CONFIG, group);
		KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer());
		ParallelStreamProcessor<byte[], byte[]> processor;
		try {
			ParallelConsumerOptions<byte[], byte[]> options = ParallelConsumerOptions.<byte[], byte[]>builder()
				.ordering(ProcessingOrder.KEY)
				.maxConcurrency(concurrency)
				.commitMode(CommitMode.PERIODIC_CONSUMER_ASYNCHRONOUS)
				.consumer(consumer)
				.build();
			processor = ParallelStreamProcessor.createEosStreamProcessor(options);
		}
		catch (RuntimeException | LinkageError ex) {
			consumer.close();
			throw ex;
		}
		Running running = new Running(processor);
		try {
			processor.subscribe(List.of(topic));
			processor.poll((context) -> context.streamConsumerRecords().forEach((record) -> {
				try {
					workload.handle(record);
				}
				catch (RuntimeException ex) {
					throw ex;
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			}));
		}
		catch (RuntimeException | LinkageError ex) {
			running.close();
			throw ex;
		}
		return running;
	}

	/**
	 * Consumes {@code topic} with Parallel Consumer's Reactor module
	 * ({@code ReactorProcessor}, KEY ordering): each record's {@code Publisher} completes
	 * it, without a thread held while it waits.
	 * @param react gives each record's publisher
	 * @see #run(String, String, String, int, Workload, Tally, Duration)
	 */
	static void react(String bootstrapServers, String topic, String group, int concurrency,
			Function<ConsumerRecord<byte[], byte[]>, Publisher<?>> react, Tally tally, Duration timeout)
			throws Exception {
		Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
				ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
				ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false, ConsumerConfig.CLIENT_ID_CONFIG, group);
		KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer());
		ReactorProcessor<byte[], byte[]> processor;
		try {
			ParallelConsumerOptions<byte[], byte[]> options = ParallelConsumerOptions.<byte[], byte[]>builder()
				.ordering(ProcessingOrder.KEY)
				.maxConcurrency(concurrency)
				.commitMode(CommitMode.PERIODIC_CONSUMER_ASYNCHRONOUS)
				.consumer(consumer)
				.build();
			processor = new ReactorProcessor<>(options);
		}
		catch (RuntimeException | LinkageError ex) {
			consumer.close();
			throw ex;
		}
		try {
			processor.subscribe(List.of(topic));
			processor.react((context) -> react.apply(context.getSingleConsumerRecord()));
			long deadline = System.nanoTime() + timeout.toNanos();
			while (!tally.await(Duration.ofMillis(100)) && System.nanoTime() - deadline < 0) {
				if (processor.isClosedOrFailed()) {
					Exception cause = processor.getFailureCause();
					throw new IllegalStateException(
							"Parallel Consumer stopped: " + ((cause != null) ? cause : "no cause given"), cause);
				}
			}
		}
		finally {
			processor.close();
		}
	}

	/** The version of Parallel Consumer's Reactor module on the classpath. */
	static String reactorVersion() {
		return Versions.ofMavenArtifact("io.confluent.parallelconsumer", "parallel-consumer-reactor");
	}

	/** A Parallel Consumer that was started; closing it stops it. */
	static final class Running implements AutoCloseable {

		private final ParallelStreamProcessor<byte[], byte[]> processor;

		private Running(ParallelStreamProcessor<byte[], byte[]> processor) {
			this.processor = processor;
		}

		/**
		 * Throws when Parallel Consumer stopped by itself.
		 * @throws IllegalStateException when it stopped, with its cause
		 */
		void check() {
			if (this.processor.isClosedOrFailed()) {
				Exception cause = (this.processor instanceof AbstractParallelEoSStreamProcessor<?, ?> internal)
						? internal.getFailureCause() : null;
				throw new IllegalStateException(
						"Parallel Consumer stopped: " + ((cause != null) ? cause : "no cause given"), cause);
			}
		}

		@Override
		public void close() {
			this.processor.close();
		}

	}

}
