package io.github.kafkaresilience.autoconfigure;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.internal.actuate.KafkaResilienceEndpoint;
import io.github.kafkaresilience.internal.actuate.ResilienceHealthIndicator;
import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.internal.topics.LadderTopics;
import io.github.kafkaresilience.internal.ladder.LadderPublisher;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;
import io.github.kafkaresilience.internal.support.ConsumerSettings;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.OrderedRetryListenerAnnotationBeanPostProcessor;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.container.SyncBarrier;
import io.github.kafkaresilience.internal.ladder.AttemptObservation;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.listener.ListenerEndpoint;
import io.github.kafkaresilience.internal.listener.AttemptObservationFactory;
import io.github.kafkaresilience.internal.listener.ContainerAssemblies;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.metrics.LockMetrics;
import io.github.kafkaresilience.observation.AttemptContext;
import io.github.kafkaresilience.observation.AttemptObservationConvention;
import io.github.kafkaresilience.observation.DefaultAttemptObservationConvention;
import io.github.kafkaresilience.internal.observation.ObservedAttempts;
import io.github.kafkaresilience.internal.support.ConsumerClients;
import io.github.kafkaresilience.internal.support.ProducerClients;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The auto-configuration of ordered retries, without a broker: nothing connects while no
 * listener is registered.
 */
class OrderedRetryAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, OrderedRetryAutoConfiguration.class))
		.withPropertyValues("spring.kafka.bootstrap-servers=localhost:1");

	// --- defaults

	@Test
	void everyBeanIsConfiguredByDefault() {
		this.runner.run((context) -> assertThat(context).hasNotFailed()
			.hasSingleBean(LockCoordinator.class)
			.hasSingleBean(LadderTopics.class)
			.hasSingleBean(LadderPublisher.class)
			.hasSingleBean(SyncBarrier.class)
			.hasSingleBean(FailureClassifier.class)
			.hasSingleBean(ListenerRegistry.class)
			.hasSingleBean(OrderedRetryListenerAnnotationBeanPostProcessor.class)
			.hasSingleBean(LockMetrics.class)
			.hasSingleBean(ResilienceProperties.class));
	}

	@Test
	void theRegistryStartsWithoutEndpointsAndWithoutABroker() {
		this.runner.run((context) -> {
			ListenerRegistry registry = context.getBean(ListenerRegistry.class);
			assertThat(registry.endpoints()).isEmpty();
			assertThat(registry.isRunning()).isTrue();
			assertThat(context.getBean(LockCoordinator.class).registries()).isEmpty();
		});
	}

	@Test
	void defaultPropertiesMatchTheDocumentedDefaults() {
		this.runner.run((context) -> {
			ResilienceProperties properties = context.getBean(ResilienceProperties.class);
			assertThat(properties.isEnabled()).isTrue();
			assertThat(properties.getRetry().getDelays()).containsExactly(Duration.ofSeconds(30), Duration.ofMinutes(5),
					Duration.ofHours(1));
			assertThat(properties.getRetry().getMaxAttempts()).isNull();
			assertThat(properties.getRetry().getPermanentExceptions()).isEmpty();
			assertThat(properties.getTopics().isCreate()).isTrue();
			assertThat(properties.getTopics().getRetryTemplate()).isEqualTo("{group}.{topic}.retry.{delay}");
			assertThat(properties.getTopics().getDlqTemplate()).isEqualTo("{group}.{topic}.dlq");
			assertThat(properties.getTopics().getLockTemplate()).isEqualTo("{group}.{topic}.locks");
			assertThat(properties.getConsumer().getConcurrency()).isPositive();
		});
	}

	@Test
	void theDefaultClassifierOnlyTreatsPermanentFailureExceptionAsPermanent() {
		this.runner.run((context) -> {
			FailureClassifier classifier = context.getBean(FailureClassifier.class);
			assertThat(classifier.isPermanent(new PermanentFailureException("x"))).isTrue();
			assertThat(classifier.isPermanent(new IllegalArgumentException())).isFalse();
		});
	}

	@Test
	void theInstanceIdDefaultsToAStableNonBlankValue() {
		this.runner.run((context) -> {
			String first = context.getBean(LockCoordinator.class).instanceId();
			assertThat(first).isNotBlank();
			this.runner.run((again) -> assertThat(again.getBean(LockCoordinator.class).instanceId()).isEqualTo(first));
		});
	}

	@Test
	void theLadderTopicsAreNamedFromTheDefaultTemplates() {
		this.runner.run((context) -> assertThat(context.getBean(LadderTopics.class)
			.plan("billing", "orders", List.of(Duration.ofSeconds(30)), null)
			.ownTopics()).containsExactly("billing.orders.retry.30s", "billing.orders.dlq", "billing.orders.locks"));
	}

	// --- backing off

	@Test
	void aUserLockCoordinatorWins() {
		this.runner
			.withBean("userLockCoordinator", LockCoordinator.class,
					() -> new LockCoordinator("user", ConsumerClients.of(Map.of()), ProducerClients.of(Map.of()),
							Duration.ofMillis(100), Duration.ofSeconds(1)))
			.run((context) -> {
				assertThat(context).hasSingleBean(LockCoordinator.class).hasBean("userLockCoordinator");
				assertThat(context.getBean(LockCoordinator.class).instanceId()).isEqualTo("user");
				assertThat(context).hasSingleBean(LockMetrics.class).hasSingleBean(ListenerRegistry.class);
			});
	}

	@Test
	void aUserLadderTopicsAndPublisherWin() {
		this.runner
			.withBean("userLadderTopics", LadderTopics.class,
					() -> new LadderTopics(LadderTopics.Naming.defaults(), Map.of(),
							new LadderTopics.Topics(false, (short) -1, Duration.ofDays(1), Duration.ofDays(1),
									Duration.ofMinutes(1), Duration.ofHours(1))))
			.withBean("userLadderPublisher", LadderPublisher.class,
					() -> new LadderPublisher(ProducerClients.of(Map.of()), "user", Duration.ofSeconds(1)))
			.run((context) -> assertThat(context).hasSingleBean(LadderTopics.class)
				.hasBean("userLadderTopics")
				.hasSingleBean(LadderPublisher.class)
				.hasBean("userLadderPublisher")
				.hasSingleBean(ListenerRegistry.class));
	}

	@Test
	void aUserSyncBarrierWins() {
		SyncBarrier barrier = new SyncBarrier();
		this.runner.withBean("userSyncBarrier", SyncBarrier.class, () -> barrier)
			.run((context) -> assertThat(context).hasSingleBean(SyncBarrier.class)
				.getBean(SyncBarrier.class)
				.isSameAs(barrier));
	}

	@Test
	void aUserFailureClassifierWins() {
		FailureClassifier classifier = new FailureClassifier(List.of(IllegalStateException.class));
		this.runner.withBean("userFailureClassifier", FailureClassifier.class, () -> classifier)
			.withPropertyValues("kafka.resilience.retry.permanent-exceptions=java.lang.IllegalArgumentException")
			.run((context) -> assertThat(context).hasSingleBean(FailureClassifier.class)
				.getBean(FailureClassifier.class)
				.isSameAs(classifier));
	}

	@Test
	void aUserRegistryWins() {
		this.runner.withUserConfiguration(UserRegistryConfiguration.class)
			.run((context) -> assertThat(context).hasSingleBean(ListenerRegistry.class)
				.getBean(ListenerRegistry.class)
				.isInstanceOf(UserRegistry.class));
	}

	@Test
	void userLockMetricsWin() {
		this.runner.withUserConfiguration(UserLockMetricsConfiguration.class)
			.run((context) -> assertThat(context).hasSingleBean(LockMetrics.class).hasBean("userLockMetrics"));
	}

	// --- clients

	@Test
	void theLibrarysClientsComeFromTheApplicationsFactoriesUnderTheirBeanNames() {
		List<String> announced = new CopyOnWriteArrayList<>();
		this.runner.withBean("ordersConsumers", ConsumerFactory.class, () -> {
			DefaultKafkaConsumerFactory<Object, Object> factory = new DefaultKafkaConsumerFactory<>(
					Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:1"));
			factory.addListener(new ConsumerFactory.Listener<>() {

				@Override
				public void consumerAdded(String id, Consumer<Object, Object> consumer) {
					announced.add(id);
				}

			});
			return factory;
		}).withBean("ordersProducers", ProducerFactory.class, () -> {
			DefaultKafkaProducerFactory<Object, Object> factory = new DefaultKafkaProducerFactory<>(
					Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:1"));
			factory.addListener(new ProducerFactory.Listener<>() {

				@Override
				public void producerAdded(String id, Producer<Object, Object> producer) {
					announced.add(id);
				}

			});
			return factory;
		}).run((context) -> {
			ResilienceClients clients = context.getBean(ResilienceClients.class);
			Map<String, Object> consumerConfig = clients.consumers().configuration();
			consumerConfig.put(ConsumerConfig.CLIENT_ID_CONFIG, "kafka-resilience-tailer-a-1");
			Map<String, Object> producerConfig = clients.producers().configuration();
			producerConfig.put(ProducerConfig.CLIENT_ID_CONFIG, "kafka-resilience-locks-a");

			clients.consumers().create(consumerConfig).close(CloseOptions.timeout(Duration.ZERO));
			clients.producers().close(clients.producers().create(producerConfig), Duration.ZERO);

			assertThat(announced).containsExactly("ordersConsumers.kafka-resilience-tailer-a-1",
					"ordersProducers.kafka-resilience-locks-a");
		});
	}

	@Test
	void inTransactionModeAListenersConsumerReadsCommittedRecordsOnly() throws Exception {
		ListenerEndpoint endpoint = new ListenerEndpoint("orders", "billing", List.of("orders"), null, null, null, null,
				null, new Object(), Object.class.getMethod("toString"));
		this.runner.withPropertyValues("spring.kafka.consumer.isolation-level=read-uncommitted")
			.run((context) -> assertThat(context.getBean(ContainerAssemblies.class)
				.of(context.getBean(OrderedRetryContainerFactory.class))
				.consumers(endpoint)
				.listenerConfiguration()).containsEntry(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted"));
		this.runner
			.withPropertyValues("spring.kafka.consumer.isolation-level=read-uncommitted",
					"kafka.resilience.dual-write=transaction")
			.run((context) -> assertThat(context.getBean(ContainerAssemblies.class)
				.of(context.getBean(OrderedRetryContainerFactory.class))
				.consumers(endpoint)
				.listenerConfiguration()).containsEntry(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
	}

	@Test
	void theLibrarysOwnConsumersOutsideTheGroupReadCommittedRecordsOnlyInEitherMode() {
		assertThat(
				ConsumerSettings.groupless(Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted"), "tailer"))
			.containsEntry(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
	}

	// --- properties

	@Test
	void retryPropertiesBind() {
		this.runner.withPropertyValues("kafka.resilience.retry.delays=1s,2s", "kafka.resilience.retry.max-attempts=5",
				"kafka.resilience.retry.permanent-exceptions=java.lang.IllegalArgumentException,java.io.IOException")
			.run((context) -> {
				ResilienceProperties.Retry retry = context.getBean(ResilienceProperties.class).getRetry();
				assertThat(retry.getDelays()).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2));
				assertThat(retry.getMaxAttempts()).isEqualTo(5);
				assertThat(retry.getPermanentExceptions()).containsExactly(IllegalArgumentException.class,
						IOException.class);
			});
	}

	@Test
	void configuredPermanentExceptionsReachTheClassifier() {
		this.runner.withPropertyValues("kafka.resilience.retry.permanent-exceptions=java.lang.IllegalArgumentException")
			.run((context) -> {
				FailureClassifier classifier = context.getBean(FailureClassifier.class);
				assertThat(classifier.isPermanent(new IllegalArgumentException())).isTrue();
				assertThat(classifier.isPermanent(new NumberFormatException())).isTrue();
				assertThat(classifier.isPermanent(new RuntimeException(new IllegalArgumentException()))).isTrue();
				assertThat(classifier.isPermanent(new IllegalStateException())).isFalse();
			});
	}

	@Test
	void anUnknownPermanentExceptionClassFailsStartup() {
		this.runner.withPropertyValues("kafka.resilience.retry.permanent-exceptions=com.example.NoSuchException")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("kafka.resilience.retry.permanent-exceptions"));
	}

	@Test
	void topicPropertiesBind() {
		this.runner
			.withPropertyValues("kafka.resilience.topics.create=false", "kafka.resilience.topics.replication-factor=3",
					"kafka.resilience.topics.retry-template=retry.{topic}.{delay}",
					"kafka.resilience.topics.dlq-template=dlq.{topic}",
					"kafka.resilience.topics.lock-template=locks.{topic}", "kafka.resilience.topics.retry-retention=2d",
					"kafka.resilience.topics.dlq-retention=90d", "kafka.resilience.topics.lock-segment=1m",
					"kafka.resilience.topics.lock-delete-retention=2h")
			.run((context) -> {
				ResilienceProperties.Topics topics = context.getBean(ResilienceProperties.class).getTopics();
				assertThat(topics.isCreate()).isFalse();
				assertThat(topics.getReplicationFactor()).isEqualTo((short) 3);
				assertThat(topics.getRetryTemplate()).isEqualTo("retry.{topic}.{delay}");
				assertThat(topics.getDlqTemplate()).isEqualTo("dlq.{topic}");
				assertThat(topics.getLockTemplate()).isEqualTo("locks.{topic}");
				assertThat(topics.getRetryRetention()).isEqualTo(Duration.ofDays(2));
				assertThat(topics.getDlqRetention()).isEqualTo(Duration.ofDays(90));
				assertThat(topics.getLockSegment()).isEqualTo(Duration.ofMinutes(1));
				assertThat(topics.getLockDeleteRetention()).isEqualTo(Duration.ofHours(2));
				assertThat(context.getBean(LadderTopics.class)
					.plan("billing", "orders", List.of(Duration.ofMinutes(5)), null)
					.ownTopics()).containsExactly("retry.orders.5m", "dlq.orders", "locks.orders");
			});
	}

	@Test
	void consumerAndLockPropertiesBind() {
		this.runner
			.withPropertyValues("kafka.resilience.consumer.concurrency=8",
					"kafka.resilience.consumer.max-in-flight-per-partition=50",
					"kafka.resilience.consumer.poll-timeout=250ms", "kafka.resilience.consumer.commit-interval=2s",
					"kafka.resilience.consumer.shutdown-timeout=1m", "kafka.resilience.consumer.recheck-interval=3s",
					"kafka.resilience.locks.tailer-poll-timeout=50ms", "kafka.resilience.locks.write-timeout=7s")
			.run((context) -> {
				ResilienceProperties properties = context.getBean(ResilienceProperties.class);
				ResilienceProperties.Consumer consumer = properties.getConsumer();
				assertThat(consumer.getConcurrency()).isEqualTo(8);
				assertThat(consumer.getMaxInFlightPerPartition()).isEqualTo(50);
				assertThat(consumer.getPollTimeout()).isEqualTo(Duration.ofMillis(250));
				assertThat(consumer.getCommitInterval()).isEqualTo(Duration.ofSeconds(2));
				assertThat(consumer.getShutdownTimeout()).isEqualTo(Duration.ofMinutes(1));
				assertThat(consumer.getRecheckInterval()).isEqualTo(Duration.ofSeconds(3));
				assertThat(properties.getLocks().getTailerPollTimeout()).isEqualTo(Duration.ofMillis(50));
				assertThat(properties.getLocks().getWriteTimeout()).isEqualTo(Duration.ofSeconds(7));
			});
	}

	@Test
	void theConfiguredInstanceIdIsTheCoordinatorId() {
		this.runner.withPropertyValues("kafka.resilience.instance-id=pod-7").run((context) -> {
			assertThat(context.getBean(ResilienceProperties.class).getInstanceId()).isEqualTo("pod-7");
			assertThat(context.getBean(LockCoordinator.class).instanceId()).isEqualTo("pod-7");
		});
	}

	// --- disabled

	@Test
	void disablingBacksOffEntirely() {
		this.runner.withPropertyValues("kafka.resilience.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockCoordinator.class)
				.doesNotHaveBean(LadderTopics.class)
				.doesNotHaveBean(SyncBarrier.class)
				.doesNotHaveBean(FailureClassifier.class)
				.doesNotHaveBean(ListenerRegistry.class)
				.doesNotHaveBean(OrderedRetryListenerAnnotationBeanPostProcessor.class)
				.doesNotHaveBean(LockMetrics.class)
				.doesNotHaveBean(ResilienceProperties.class));
	}

	@Test
	void enablingExplicitlyConfiguresEverything() {
		this.runner.withPropertyValues("kafka.resilience.enabled=true")
			.run((context) -> assertThat(context).hasSingleBean(ListenerRegistry.class)
				.hasSingleBean(LockCoordinator.class));
	}

	@Test
	void withoutSpringKafkaNothingIsConfigured() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(OrderedRetryAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(KafkaTemplate.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockCoordinator.class)
				.doesNotHaveBean(ListenerRegistry.class));
	}

	// --- optional Micrometer

	@Test
	void withoutMeterBinderTheContextStartsWithoutLockMetrics() {
		this.runner.withClassLoader(new FilteredClassLoader(MeterBinder.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockMetrics.class)
				.hasSingleBean(LockCoordinator.class)
				.hasSingleBean(ListenerRegistry.class));
	}

	@Test
	void withoutMicrometerTheContextStartsWithoutLockMetrics() {
		this.runner.withClassLoader(new FilteredClassLoader("io.micrometer"))
			.withPropertyValues("spring.kafka.listener.observation-enabled=true")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockMetrics.class)
				.doesNotHaveBean(AttemptObservationFactory.class)
				.hasSingleBean(LockCoordinator.class)
				.hasSingleBean(ListenerRegistry.class));
	}

	// --- observation

	@Test
	void attemptsAreNotObservedByDefault() {
		this.runner.withBean(ObservationRegistry.class, ObservationRegistry::create)
			.run((context) -> assertThat(attemptObservation(context)).isSameAs(AttemptObservation.NONE));
	}

	@Test
	void attemptsAreObservedWithTheApplicationsRegistryWhenListenerObservationIsEnabled() {
		this.runner.withPropertyValues("spring.kafka.listener.observation-enabled=true")
			.withBean(ObservationRegistry.class, ObservationRegistry::create)
			.run((context) -> assertThat(attemptObservation(context)).isInstanceOf(ObservedAttempts.class));
	}

	@Test
	void withoutAnObservationRegistryAttemptsAreNotObserved() {
		this.runner.withPropertyValues("spring.kafka.listener.observation-enabled=true")
			.run((context) -> assertThat(attemptObservation(context)).isSameAs(AttemptObservation.NONE));
	}

	@Test
	void templateObservationAloneDoesNotObserveAttempts() {
		this.runner.withPropertyValues("spring.kafka.template.observation-enabled=true")
			.withBean(ObservationRegistry.class, ObservationRegistry::create)
			.run((context) -> assertThat(attemptObservation(context)).isSameAs(AttemptObservation.NONE));
	}

	@Test
	void aUserAttemptConventionNamesAndTagsTheAttempts() {
		List<Observation.Context> stopped = new CopyOnWriteArrayList<>();
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

			@Override
			public void onStop(Observation.Context context) {
				stopped.add(context);
			}

		});
		KafkaAdmin admin = new KafkaAdmin(Map.of("bootstrap.servers", "localhost:1"));
		admin.setClusterId("cluster-1");
		this.runner.withPropertyValues("spring.kafka.listener.observation-enabled=true")
			.withBean(ObservationRegistry.class, () -> registry)
			.withBean(KafkaAdmin.class, () -> admin)
			.withBean(AttemptObservationConvention.class, () -> new DefaultAttemptObservationConvention() {

				@Override
				public String getName() {
					return "orders.attempts";
				}

			})
			.run((context) -> {
				attemptObservation(context)
					.start(new Delivery("billing.orders.retry.1s", 0, 5, 0L, null, null, new RecordHeaders()), 1)
					.ended(HandlerResult.success());
				assertThat(stopped).singleElement().isInstanceOfSatisfying(AttemptContext.class, (attempt) -> {
					assertThat(attempt.getName()).isEqualTo("orders.attempts");
					assertThat(attempt.getLowCardinalityKeyValue("kafka.resilience.stage").getValue()).isEqualTo("1");
					assertThat(attempt.getRemoteServiceName()).isEqualTo("Apache Kafka: cluster-1");
				});
			});
	}

	@Test
	void aUserAttemptObservationFactoryWins() {
		AttemptObservationFactory factory = (endpoint, topic) -> AttemptObservation.NONE;
		this.runner.withPropertyValues("spring.kafka.listener.observation-enabled=true")
			.withBean(ObservationRegistry.class, ObservationRegistry::create)
			.withBean("userAttemptObservations", AttemptObservationFactory.class, () -> factory)
			.run((context) -> assertThat(context).hasSingleBean(AttemptObservationFactory.class)
				.getBean(AttemptObservationFactory.class)
				.isSameAs(factory));
	}

	private static AttemptObservation attemptObservation(AssertableApplicationContext context)
			throws NoSuchMethodException {
		ListenerEndpoint endpoint = new ListenerEndpoint("orders-listener", "billing", List.of("orders"), null, null,
				null, null, null, new Object(), Object.class.getMethod("toString"));
		return context.getBean(AttemptObservationFactory.class).create(endpoint, "orders");
	}

	// --- optional Actuator and health

	@Test
	void theHealthIndicatorIsOnAndTheEndpointOnlyWhenExposed() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(ResilienceHealthIndicator.class)
			.hasSingleBean(DlqReplayer.class)
			.doesNotHaveBean(KafkaResilienceEndpoint.class));
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=kafkaresilience")
			.run((context) -> assertThat(context).hasSingleBean(KafkaResilienceEndpoint.class));
		this.runner.withPropertyValues("management.health.kafkaresilience.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(ResilienceHealthIndicator.class));
	}

	@Test
	void withoutActuatorOrHealthTheContextStartsWithoutThem() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=kafkaresilience")
			.withClassLoader(
					new FilteredClassLoader("org.springframework.boot.actuate", "org.springframework.boot.health"))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(ResilienceHealthIndicator.class)
				.doesNotHaveBean(KafkaResilienceEndpoint.class)
				.hasSingleBean(DlqReplayer.class)
				.hasSingleBean(ListenerRegistry.class));
	}

	// --- the replay command

	@Test
	void theReplayCommandKeepsTheListenersFromStarting() {
		this.runner.withPropertyValues("kafka.resilience.command=replay")
			.run((context) -> assertThat(context.getBean(ListenerRegistry.class).isAutoStartup()).isFalse());
		this.runner.run((context) -> assertThat(context.getBean(ListenerRegistry.class).isAutoStartup()).isTrue());
	}

	// --- registration

	@Test
	void theAutoConfigurationIsRegisteredInTheImportsFile() {
		List<String> candidates = ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader())
			.getCandidates();

		assertThat(candidates).contains(OrderedRetryAutoConfiguration.class.getName());
	}

	@Test
	void theAutoConfigurationIsAFinalAutoConfigurationClass() {
		assertThat(OrderedRetryAutoConfiguration.class).hasAnnotation(AutoConfiguration.class).isFinal();
	}

	@Configuration(proxyBeanMethods = false)
	static class UserRegistryConfiguration {

		@Bean
		UserRegistry userRegistry(OrderedRetryContainerFactory orderedRetryContainerFactory) {
			return new UserRegistry(orderedRetryContainerFactory);
		}

	}

	static class UserRegistry extends ListenerRegistry {

		UserRegistry(OrderedRetryContainerFactory factory) {
			super(factory, (name) -> {
				throw new UnsupportedOperationException();
			}, new ContainerAssemblies());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserLockMetricsConfiguration {

		@Bean
		LockMetrics userLockMetrics(LockCoordinator lockCoordinator) {
			return new LockMetrics(lockCoordinator);
		}

	}

}
