package io.github.kafkaresilience.autoconfigure;

import io.github.kafkaresilience.internal.support.StartupFailures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whether the listeners' workers are virtual threads:
 * {@code kafka.resilience.consumer.virtual-threads} when set,
 * {@code spring.threads.virtual.enabled} otherwise (on Java 21 or later, as Boot reads
 * it), and an explicit request for them refused at startup before Java 21, with Boot's
 * description and action.
 */
class VirtualThreadsConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, OrderedRetryAutoConfiguration.class))
		.withPropertyValues("spring.kafka.bootstrap-servers=localhost:1");

	@Test
	void byDefaultThePropertyIsUnsetAndTheWorkersArePlatformThreads() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(ResilienceProperties.class).getConsumer().getVirtualThreads()).isNull();
			assertThat(virtualWorkers(context)).isFalse();
		});
	}

	@Test
	void falseKeepsPlatformThreadsEvenWhenBootsVirtualThreadsAreOn() {
		this.runner
			.withPropertyValues("kafka.resilience.consumer.virtual-threads=false",
					"spring.threads.virtual.enabled=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(ResilienceProperties.class).getConsumer().getVirtualThreads()).isFalse();
				assertThat(virtualWorkers(context)).isFalse();
			});
	}

	@Test
	@EnabledForJreRange(min = JRE.JAVA_21)
	void onJava21BootsVirtualThreadsMakeTheWorkersVirtual() {
		this.runner.withPropertyValues("spring.threads.virtual.enabled=true").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(virtualWorkers(context)).isTrue();
		});
	}

	@Test
	@EnabledForJreRange(min = JRE.JAVA_21)
	void onJava21ThePropertyAloneMakesTheWorkersVirtual() {
		this.runner
			.withPropertyValues("kafka.resilience.consumer.virtual-threads=true",
					"kafka.resilience.consumer.concurrency=2000")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(ResilienceProperties.class).getConsumer().getVirtualThreads()).isTrue();
				assertThat(context.getBean(ResilienceProperties.class).getConsumer().getConcurrency()).isEqualTo(2000);
				assertThat(virtualWorkers(context)).isTrue();
			});
	}

	@Test
	@EnabledForJreRange(max = JRE.JAVA_20)
	void beforeJava21BootsVirtualThreadsMeanPlatformThreads() {
		this.runner.withPropertyValues("spring.threads.virtual.enabled=true").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(virtualWorkers(context)).isFalse();
		});
	}

	@Test
	@EnabledForJreRange(max = JRE.JAVA_20)
	void beforeJava21ThePropertyFailsStartupSayingWhatToDo() {
		this.runner.withPropertyValues("kafka.resilience.consumer.virtual-threads=true").run((context) -> {
			assertThat(context).hasFailed();
			FailureAnalysis analysis = StartupFailures.analysis(context.getStartupFailure());
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription())
				.isEqualTo("kafka.resilience.consumer.virtual-threads is true, but virtual "
						+ "threads need Java 21 or later and this application runs on Java "
						+ System.getProperty("java.version") + ".");
			assertThat(analysis.getAction()).startsWith("Run the application on Java 21 or later, or remove "
					+ "kafka.resilience.consumer.virtual-threads (or set it to false)");
			assertThat(analysis.getCause()).isInstanceOf(VirtualThreadsUnavailableException.class);
		});
	}

	@Test
	void theAnalyzerLeavesOtherFailuresToOtherAnalyzers() {
		assertThat(new VirtualThreadsFailureAnalyzer().analyze(new IllegalStateException("something else"))).isNull();
	}

	/**
	 * What the auto-configuration decided, from the context's properties and environment.
	 */
	private static boolean virtualWorkers(AssertableApplicationContext context) {
		return OrderedRetryContainerFactoryConfiguration
			.virtualWorkers(context.getBean(ResilienceProperties.class).getConsumer(), context.getEnvironment());
	}

}
