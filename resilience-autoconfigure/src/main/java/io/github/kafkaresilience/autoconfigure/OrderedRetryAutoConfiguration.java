package io.github.kafkaresilience.autoconfigure;

import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.internal.container.SyncBarrier;
import io.github.kafkaresilience.internal.dlq.DlqDispatcher;
import io.github.kafkaresilience.dlq.DlqHandler;
import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.internal.dlq.TopicDlqReplayer;
import io.github.kafkaresilience.dlq.IncidentLogDlqHandler;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.ladder.LadderPublisher;
import io.github.kafkaresilience.internal.topics.LadderTopics;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;
import io.github.kafkaresilience.internal.listener.OrderedRetryListenerAnnotationBeanPostProcessor;
import io.github.kafkaresilience.internal.listener.ContainerAssemblies;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.internal.support.ConsumerClients;
import io.github.kafkaresilience.internal.support.ProducerClients;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.SingletonBeanRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;

/**
 * Auto-configuration of ordered non-blocking retries for {@code @OrderedRetryListener}
 * methods. Kafka clients are configured from Spring Boot's {@code spring.kafka.*}.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = KafkaAutoConfiguration.class,
		afterName = { "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
				"org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration" })
@ConditionalOnClass(KafkaTemplate.class)
@ConditionalOnProperty(prefix = "kafka.resilience", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(ResilienceProperties.class)
@Import({ OrderedRetryContainerFactoryConfiguration.class, ResilienceMetricsConfiguration.class,
		ResilienceObservationConfiguration.class, IdempotencyConfiguration.class,
		ResilienceActuatorConfiguration.Health.class, ResilienceActuatorConfiguration.EndpointConfiguration.class,
		ConsoleConfiguration.Page.class, ConsoleConfiguration.ResponseHeaders.class })
public final class OrderedRetryAutoConfiguration {

	/** The bean name of the container factory of listeners that name none. */
	public static final String CONTAINER_FACTORY = "orderedRetryContainerFactory";

	@Bean
	static OrderedRetryListenerAnnotationBeanPostProcessor orderedRetryListenerAnnotationBeanPostProcessor(
			Environment environment) {
		return new OrderedRetryListenerAnnotationBeanPostProcessor(
				environment.getProperty("spring.kafka.consumer.group-id"));
	}

	/**
	 * Every consumer and producer of the library comes from the application's factories,
	 * so that their listeners and post-processors (Boot's client metrics among them) see
	 * it too.
	 */
	@Bean
	ResilienceClients kafkaResilienceClients(ConsumerFactory<?, ?> consumerFactory,
			ProducerFactory<?, ?> producerFactory, ListableBeanFactory beanFactory) {
		return new ResilienceClients(
				new ConsumerClients(consumerFactory, beanName(beanFactory, consumerFactory, ConsumerFactory.class)),
				new ProducerClients(producerFactory, beanName(beanFactory, producerFactory, ProducerFactory.class)));
	}

	/**
	 * The name of a factory bean: its listeners get the ids
	 * {@code <bean name>.<client id>}.
	 */
	private static String beanName(ListableBeanFactory beanFactory, Object factory, Class<?> type) {
		for (String name : beanFactory.getBeanNamesForType(type, false, false)) {
			// the factory is created: look among the created singletons, so as to create
			// no other
			Object bean = (beanFactory instanceof SingletonBeanRegistry singletons) ? singletons.getSingleton(name)
					: beanFactory.getBean(name);
			if (bean == factory) {
				return name;
			}
		}
		return ConsumerClients.UNNAMED;
	}

	@Bean
	@ConditionalOnMissingBean
	LockCoordinator lockCoordinator(ResilienceProperties properties, ResilienceClients clients) {
		return new LockCoordinator(properties.determineInstanceId(), clients.consumers(), clients.producers(),
				properties.getLocks().getTailerPollTimeout(), properties.getLocks().getWriteTimeout());
	}

	@Bean
	@ConditionalOnMissingBean
	LadderTopics ladderTopics(ResilienceProperties properties, KafkaAdmin kafkaAdmin) {
		ResilienceProperties.Topics topics = properties.getTopics();
		return new LadderTopics(
				new LadderTopics.Naming(topics.getRetryTemplate(), topics.getDlqTemplate(), topics.getLockTemplate()),
				kafkaAdmin.getConfigurationProperties(),
				new LadderTopics.Topics(topics.isCreate(), topics.getReplicationFactor(), topics.getRetryRetention(),
						topics.getDlqRetention(), topics.getLockSegment(), topics.getLockDeleteRetention(),
						topics.isCheckUnscopedAtStartup()));
	}

	@Bean
	@ConditionalOnMissingBean
	LadderPublisher ladderPublisher(ResilienceProperties properties, ResilienceClients clients) {
		return new LadderPublisher(clients.producers(), properties.determineInstanceId(),
				properties.getLocks().getWriteTimeout());
	}

	@Bean
	@ConditionalOnMissingBean
	DlqHandler dlqHandler() {
		return new IncidentLogDlqHandler();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnProperty(prefix = "kafka.resilience.dlq-handler", name = "enabled", matchIfMissing = true)
	DlqDispatcher dlqDispatcher(ListenerRegistry listeners, DlqHandler dlqHandler, ResilienceProperties properties,
			LockCoordinator lockCoordinator) {
		return new DlqDispatcher(() -> listeners.endpoints()
			.stream()
			.map((endpoint) -> new DlqDispatcher.Source(endpoint.id(),
					dlqTopics(listeners.plans(endpoint.id()), lockCoordinator),
					listeners.assembly(endpoint).consumers(endpoint).dlqHandler()))
			.filter((source) -> !source.dlqTopics().isEmpty())
			.toList(), dlqHandler, properties.getConsumer().getPollTimeout());
	}

	/**
	 * The dead-letter topics of a listener's ladders, each with the check its ladder
	 * shares.
	 */
	private static Map<String, Ownership> dlqTopics(List<LadderPlan> plans, LockCoordinator lockCoordinator) {
		Map<String, Ownership> topics = new HashMap<>();
		for (LadderPlan plan : plans) {
			LockRegistry registry = lockCoordinator.registryOf(plan.lockTopic());
			topics.put(plan.dlqTopic(), (registry != null) ? registry.ownership() : plan.ownership());
		}
		return topics;
	}

	@Bean
	@ConditionalOnMissingBean
	DlqReplayer dlqReplayer(ResilienceClients clients, ResilienceProperties properties, ListenerRegistry listeners) {
		return new TopicDlqReplayer(clients.consumers(), clients.producers(), properties.getReplay().getRate(),
				Clock.systemUTC(), listeners::ladder);
	}

	@Bean
	@ConditionalOnProperty(name = ReplayCommandEnvironmentPostProcessor.COMMAND_PROPERTY,
			havingValue = ReplayCommandEnvironmentPostProcessor.REPLAY)
	ReplayCommandRunner kafkaResilienceReplayCommandRunner(DlqReplayer replayer,
			ConfigurableApplicationContext context) {
		return new ReplayCommandRunner(replayer, context, Clock.systemUTC());
	}

	@Bean
	@ConditionalOnMissingBean
	SyncBarrier syncBarrier() {
		return new SyncBarrier();
	}

	@Bean
	@ConditionalOnMissingBean
	FailureClassifier failureClassifier(ResilienceProperties properties) {
		return new FailureClassifier(properties.getRetry().getPermanentExceptions());
	}

	@Bean
	@ConditionalOnMissingBean
	ListenerRegistry orderedRetryListenerRegistry(
			@Qualifier(CONTAINER_FACTORY) OrderedRetryContainerFactory containerFactory,
			ListableBeanFactory beanFactory, ResilienceProperties properties, ContainerAssemblies assemblies) {
		ListenerRegistry registry = new ListenerRegistry(containerFactory,
				(name) -> beanFactory.getBean(name, OrderedRetryContainerFactory.class), assemblies);
		registry.setAutoStartup(runsListeners(properties));
		if (properties.getTopics().isCheckOwnerAtStartup()) {
			registry.checkOwnershipAtStartup(OWNERSHIP_CHECK_TIMEOUT);
		}
		return registry;
	}

	/**
	 * Whether the application runs its listeners, or a one-off command instead. Any other
	 * value than the one command is refused when the properties are bound.
	 */
	private static boolean runsListeners(ResilienceProperties properties) {
		return !ReplayCommandEnvironmentPostProcessor.REPLAY.equals(properties.getCommand());
	}

	/**
	 * How long the startup check of a ladder's ownership waits for its lock view and
	 * latest records.
	 */
	private static final Duration OWNERSHIP_CHECK_TIMEOUT = Duration.ofMinutes(2);

}
