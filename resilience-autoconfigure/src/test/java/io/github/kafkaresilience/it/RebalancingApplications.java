package io.github.kafkaresilience.it;

import java.util.List;

import io.github.kafkaresilience.OrderedRetryListener;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * The applications of {@link IncrementalRebalanceTests}: one with a record listener, one
 * with a batch listener, each telling its {@link HandlingJournal} what it ran as instance
 * {@code test.instance} and recording its rebalances in a {@link RebalanceHistory}.
 */
final class RebalancingApplications {

	private RebalancingApplications() {
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(RecordListener.class)
	static class RecordApplication {

		@Bean
		RebalanceHistory rebalanceHistory() {
			return new RebalanceHistory();
		}

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	static class RecordListener {

		private final String topic;

		private final String instance;

		RecordListener(@Value("${test.topic}") String topic, @Value("${test.instance}") String instance) {
			this.topic = topic;
			this.instance = instance;
		}

		@OrderedRetryListener(id = "incr-${test.topic}", topics = "${test.topic}")
		void handle(ConsumerRecord<String, String> record) {
			RuntimeException failure = HandlingJournal.of(this.topic).run(this.instance, record);
			if (failure != null) {
				throw failure;
			}
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(BatchListener.class)
	static class BatchApplication {

		@Bean
		RebalanceHistory rebalanceHistory() {
			return new RebalanceHistory();
		}

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	static class BatchListener {

		private final String topic;

		private final String instance;

		BatchListener(@Value("${test.topic}") String topic, @Value("${test.instance}") String instance) {
			this.topic = topic;
			this.instance = instance;
		}

		@OrderedRetryListener(id = "incr-${test.topic}", topics = "${test.topic}", batch = "true",
				autoStartup = "${test.autostartup:true}")
		void handle(List<ConsumerRecord<String, String>> records) {
			HandlingJournal.of(this.topic).runBatch(this.instance, records);
		}

	}

}
