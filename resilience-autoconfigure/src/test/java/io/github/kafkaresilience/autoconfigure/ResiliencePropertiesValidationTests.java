package io.github.kafkaresilience.autoconfigure;

import io.github.kafkaresilience.internal.support.StartupFailures;
import org.assertj.core.api.AbstractStringAssert;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bad {@code kafka.resilience.*} value fails startup when the properties are bound, and
 * Boot's failure report names the property, the value and what is wrong with it.
 */
class ResiliencePropertiesValidationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, OrderedRetryAutoConfiguration.class))
		.withPropertyValues("spring.kafka.bootstrap-servers=localhost:1");

	@Test
	void theDefaultsAreValid() {
		this.runner.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aDurationBelowItsMinimumNamesThePropertyAndTheMinimum() {
		this.runner.withPropertyValues("kafka.resilience.consumer.poll-timeout=0ms")
			.run(refused("kafka.resilience.consumer.pollTimeout", "must be at least 1ms"));
		this.runner.withPropertyValues("kafka.resilience.consumer.park-after=500ms")
			.run(refused("kafka.resilience.consumer.parkAfter", "must be at least 1s"));
		this.runner.withPropertyValues("kafka.resilience.reaper.grace=-1s")
			.run(refused("kafka.resilience.reaper.grace", "must be at least 0ms"));
	}

	@Test
	void aRetryDelayThatIsNotPositiveNamesItsPositionInTheList() {
		this.runner.withPropertyValues("kafka.resilience.retry.delays=30s,0s")
			.run(refused("kafka.resilience.retry.delays[1]", "must be at least 1ms"));
	}

	@Test
	void noRetryDelaysAtAllIsValid() {
		// every record that fails goes to the dead-letter topic
		this.runner.withPropertyValues("kafka.resilience.retry.delays=", "kafka.resilience.retry.max-attempts=1")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aCountBelowOneNamesTheProperty() {
		this.runner.withPropertyValues("kafka.resilience.consumer.concurrency=0")
			.run(refused("kafka.resilience.consumer.concurrency", "must be greater than or equal to 1"));
		this.runner.withPropertyValues("kafka.resilience.consumer.max-in-flight-per-partition=0")
			.run(refused("kafka.resilience.consumer.maxInFlightPerPartition", "must be greater than or equal to 1"));
		this.runner.withPropertyValues("kafka.resilience.retry.max-attempts=0")
			.run(refused("kafka.resilience.retry.maxAttempts", "must be greater than or equal to 1"));
		this.runner.withPropertyValues("kafka.resilience.endpoint.oldest-locks=-1")
			.run(refused("kafka.resilience.endpoint.oldestLocks", "must be greater than or equal to 0"));
	}

	@Test
	void aReplayRateThatIsNotPositiveNamesTheProperty() {
		this.runner.withPropertyValues("kafka.resilience.replay.rate=0")
			.run(refused("kafka.resilience.replay.rate", "must be greater than 0"));
	}

	@Test
	void aPollGapShareOutsideZeroToOneNamesTheProperty() {
		this.runner.withPropertyValues("kafka.resilience.health.poll-gap-warning=1.5")
			.run(refused("kafka.resilience.health.pollGapWarning",
					"must be a share of max.poll.interval.ms, at most 1"));
		this.runner.withPropertyValues("kafka.resilience.health.poll-gap-warning=0")
			.run(refused("kafka.resilience.health.pollGapWarning", "must be a share of max.poll.interval.ms above 0"));
	}

	@Test
	void aTemplateThatCannotGiveATopicNameNamesTheCharactersAndPlaceholdersAllowed() {
		this.runner.withPropertyValues("kafka.resilience.topics.retry-template=retry/{topic}/{delay}")
			.run(refused("kafka.resilience.topics.retryTemplate",
					"must be made of letters, digits, '.', '_', '-' and the placeholders {group}, {topic} and {delay}"));
		this.runner.withPropertyValues("kafka.resilience.topics.dlq-template={group}.{topic}.dlq.{delay}")
			.run(refused("kafka.resilience.topics.dlqTemplate",
					"must be made of letters, digits, '.', '_', '-' and the placeholders {group} and {topic}"));
	}

	@Test
	void anIdempotencyRetentionNotLongerThanTheLeaseIsReportedOnTheRetention() {
		this.runner
			.withPropertyValues("kafka.resilience.idempotency.lease=10m", "kafka.resilience.idempotency.retention=10m")
			.run(refused("kafka.resilience.idempotency.retention",
					"must be longer than kafka.resilience.idempotency.lease"));
		this.runner.withPropertyValues("kafka.resilience.idempotency.lease=0s")
			.run(refused("kafka.resilience.idempotency.lease", "must be at least 1ms"));
	}

	@Test
	void anUnknownCommandNamesTheOnlyOne() {
		this.runner.withPropertyValues("kafka.resilience.command=reply")
			.run(refused("kafka.resilience.command",
					"is not a command: the only one is 'replay'; remove the property to run the listeners"));
		this.runner.withPropertyValues("kafka.resilience.command=")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aJitterOutsideZeroToOneNamesTheProperty() {
		this.runner.withPropertyValues("kafka.resilience.retry.jitter=1.5")
			.run(refused("kafka.resilience.retry.jitter", "must be a share of each stage's delay, at most 1"));
		this.runner.withPropertyValues("kafka.resilience.retry.jitter=0.2")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aBadOutageSettingNamesTheProperty() {
		this.runner.withPropertyValues("kafka.resilience.outage.failure-rate=1.2")
			.run(refused("kafka.resilience.outage.failureRate", "must be a share of the attempts, at most 1"));
		this.runner.withPropertyValues("kafka.resilience.outage.listeners.orders.minimum-keys=0")
			.run(refused("kafka.resilience.outage.listeners[orders].minimumKeys",
					"must be greater than or equal to 1"));
	}

	@Test
	void outageSettingsThatCannotWorkTogetherFailTheStartNamingTheListener() {
		this.runner.withPropertyValues("kafka.resilience.outage.listeners.orders.minimum-keys=30")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining(
						"kafka.resilience.outage: minimum-keys must be between 1 and minimum-attempts (20), "
								+ "was 30 (kafka.resilience.outage.listeners.orders)"));
		this.runner
			.withPropertyValues("kafka.resilience.outage.listeners.orders.enabled=false",
					"kafka.resilience.outage.listeners.payments.probe-interval=5s")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void withoutABeanValidationProviderTheApplicationStillStarts() {
		// the constraints are optional: the starter brings a provider, the auto-configure
		// module does not need one
		this.runner.withClassLoader(new FilteredClassLoader("jakarta.validation", "org.hibernate.validator"))
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(ResilienceProperties.class));
	}

	@Test
	void everyBadValueIsReportedAtOnce() {
		this.runner
			.withPropertyValues("kafka.resilience.consumer.concurrency=0", "kafka.resilience.locks.write-timeout=0s")
			.run((context) -> description(context).contains("Property: kafka.resilience.consumer.concurrency")
				.contains("Property: kafka.resilience.locks.writeTimeout"));
	}

	/**
	 * Startup failed, and Boot's report names the property and the reason. Boot names a
	 * property of a nested group by its path in the properties class (for example
	 * {@code kafka.resilience.consumer.pollTimeout}), which relaxed binding also accepts.
	 */
	private static ContextConsumer<AssertableApplicationContext> refused(String property, String reason) {
		return (context) -> description(context).contains("Property: " + property + "\n").contains("Reason: " + reason);
	}

	private static AbstractStringAssert<?> description(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		FailureAnalysis analysis = StartupFailures.analysis(context.getStartupFailure());
		assertThat(analysis).as("Boot's failure analysis").isNotNull();
		assertThat(analysis.getAction()).isEqualTo("Update your application's configuration");
		return assertThat(analysis.getDescription()).startsWith("Binding to target ");
	}

}
