package io.github.kafkaresilience.autoconfigure;

import io.github.kafkaresilience.internal.listener.ExpressionTenantResolver;
import io.github.kafkaresilience.internal.listener.HeaderTenantResolver;
import io.github.kafkaresilience.listener.TenantResolver;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.internal.container.SyncBarrier;
import io.github.kafkaresilience.internal.idempotency.IdempotencyGuards;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.internal.ladder.LadderPublisher;
import io.github.kafkaresilience.internal.listener.AttemptObservationFactory;
import io.github.kafkaresilience.internal.listener.ContainerAssemblies;
import io.github.kafkaresilience.internal.listener.ContainerAssembly;
import io.github.kafkaresilience.internal.listener.OrderedRetryComponentFactory;
import io.github.kafkaresilience.internal.listener.RecordHandlerFactory;
import io.github.kafkaresilience.listener.OrderedRetryContainerCustomizer;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.topics.LadderTopics;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.boot.system.JavaVersion;
import org.springframework.boot.thread.Threading;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.kafka.annotation.KafkaListenerAnnotationBeanPostProcessor;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;
import org.springframework.kafka.support.converter.BatchMessageConverter;
import org.springframework.kafka.support.converter.RecordMessageConverter;

/**
 * The container factory of {@code @OrderedRetryListener} methods, its configurer and what
 * they are made of, as Spring Boot's {@code KafkaAnnotationDrivenConfiguration} makes
 * spring-kafka's listener container factory.
 */
@Configuration(proxyBeanMethods = false)
class OrderedRetryContainerFactoryConfiguration {

	private final ResilienceProperties properties;

	private final ObjectProvider<ResilienceObserver> observers;

	private final ObjectProvider<OrderedRetryContainerCustomizer> customizers;

	private final ObjectProvider<AttemptObservationFactory> attemptObservations;

	private final ObjectProvider<ConsumerAwareRebalanceListener> rebalanceListener;

	private final ObjectProvider<KafkaProperties> kafkaProperties;

	private final ObjectProvider<OrderedRetryComponentFactory> componentFactory;

	OrderedRetryContainerFactoryConfiguration(ResilienceProperties properties,
			ObjectProvider<ResilienceObserver> observers, ObjectProvider<OrderedRetryContainerCustomizer> customizers,
			ObjectProvider<AttemptObservationFactory> attemptObservations,
			ObjectProvider<ConsumerAwareRebalanceListener> rebalanceListener,
			ObjectProvider<KafkaProperties> kafkaProperties,
			ObjectProvider<OrderedRetryComponentFactory> componentFactory) {
		this.properties = properties;
		this.observers = observers;
		this.customizers = customizers;
		this.attemptObservations = attemptObservations;
		this.rebalanceListener = rebalanceListener;
		this.kafkaProperties = kafkaProperties;
		this.componentFactory = componentFactory;
	}

	/**
	 * Handlers that invoke the listeners' methods as spring-kafka invokes
	 * {@code @KafkaListener} methods, with the application's handler-method factory and
	 * message converters.
	 */
	@Bean
	@ConditionalOnMissingBean
	RecordHandlerFactory kafkaResilienceRecordHandlers(ConsumerFactory<?, ?> consumerFactory,
			ProducerFactory<?, ?> producerFactory, IdempotencyGuards idempotencyGuards,
			ObjectProvider<KafkaListenerAnnotationBeanPostProcessor<?, ?>> kafkaListenerProcessor,
			ObjectProvider<RecordMessageConverter> recordMessageConverter,
			ObjectProvider<BatchMessageConverter> batchMessageConverter) {
		return RecordHandlerFactory.invokingListenerMethods(kafkaListenerProcessor::getIfUnique,
				recordMessageConverter::getIfUnique, batchMessageConverter::getIfUnique, consumerFactory,
				producerFactory, idempotencyGuards);
	}

	/** What each configured container factory's containers are assembled from. */
	@Bean
	ContainerAssemblies kafkaResilienceContainerAssemblies() {
		return new ContainerAssemblies();
	}

	@Bean
	ContainerAssembly.Engine kafkaResilienceEngine(LockCoordinator lockCoordinator, LadderTopics ladderTopics,
			LadderPublisher publisher, SyncBarrier syncBarrier, RecordHandlerFactory handlers,
			ResilienceClients clients) {
		return new ContainerAssembly.Engine(lockCoordinator, ladderTopics, publisher, syncBarrier, handlers,
				clients.consumers(), clients.producers(), this.properties.determineInstanceId());
	}

	@Bean
	@ConditionalOnMissingBean
	OrderedRetryContainerFactoryConfigurer orderedRetryContainerFactoryConfigurer(ContainerAssembly.Engine engine,
			FailureClassifier classifier, KafkaAdmin kafkaAdmin, Environment environment,
			ContainerAssemblies assemblies, ObjectProvider<TenantResolver> tenantResolvers, BeanFactory beanFactory) {
		OrderedRetryContainerFactoryConfigurer configurer = new OrderedRetryContainerFactoryConfigurer(this.properties,
				engine, virtualWorkers(this.properties.getConsumer(), environment), assemblies);
		configurer.setClassifier(classifier);
		configurer.setObserver(ResilienceObserver.composite(this.observers.orderedStream().toList()));
		configurer.setAttemptObservations(this.attemptObservations.getIfAvailable());
		configurer.setRebalanceListener(this.rebalanceListener.getIfUnique());
		this.kafkaProperties
			.ifAvailable((kafka) -> configurer.setIdleEventInterval(kafka.getListener().getIdleEventInterval()));
		configurer.setAdminConfig(kafkaAdmin.getConfigurationProperties());
		configurer.setCustomizers(this.customizers.orderedStream().toList());
		configurer.setComponentFactory(this.componentFactory.getIfAvailable());
		configurer.setTenantResolver(
				tenantResolver(this.properties.getTenants(), tenantResolvers.getIfUnique(), beanFactory));
		return configurer;
	}

	/**
	 * How the records of listeners that name no way of their own find their tenant: the
	 * {@code kafka.resilience.tenants} header or expression, or the application's
	 * {@link TenantResolver} bean; {@code null} for records without tenants.
	 */
	private static @Nullable TenantResolver tenantResolver(TenantsProperties tenants, @Nullable TenantResolver bean,
			BeanFactory beanFactory) {
		String header = tenants.getHeader();
		String expression = tenants.getExpression();
		if (bean != null && (header != null || expression != null)) {
			throw new IllegalStateException("The application has a TenantResolver bean and sets kafka.resilience."
					+ ((header != null) ? "tenants.header" : "tenants.expression") + "; keep one");
		}
		if (header != null && expression != null) {
			throw new IllegalStateException(
					"kafka.resilience.tenants.header and kafka.resilience.tenants.expression are both set; set one");
		}
		if (header != null) {
			return new HeaderTenantResolver(header);
		}
		return (expression != null) ? new ExpressionTenantResolver(expression, beanFactory) : bean;
	}

	@Bean(name = OrderedRetryAutoConfiguration.CONTAINER_FACTORY)
	@ConditionalOnMissingBean(name = OrderedRetryAutoConfiguration.CONTAINER_FACTORY)
	OrderedRetryContainerFactory orderedRetryContainerFactory(OrderedRetryContainerFactoryConfigurer configurer) {
		OrderedRetryContainerFactory factory = new OrderedRetryContainerFactory();
		configurer.configure(factory);
		return factory;
	}

	/**
	 * Whether the listeners' workers are virtual threads: as
	 * {@code kafka.resilience.consumer.virtual-threads} says, and while it is unset as
	 * {@code spring.threads.virtual.enabled} says on Java 21 or later (Boot's own rule
	 * for its executors: on an older Java that property means platform threads). Asked
	 * for explicitly on an older Java, virtual threads are refused.
	 */
	static boolean virtualWorkers(ResilienceProperties.Consumer consumer, Environment environment) {
		Boolean virtualThreads = consumer.getVirtualThreads();
		if (virtualThreads == null) {
			return Threading.VIRTUAL.isActive(environment);
		}
		if (virtualThreads && !JavaVersion.getJavaVersion().isEqualOrNewerThan(JavaVersion.TWENTY_ONE)) {
			throw new VirtualThreadsUnavailableException(System.getProperty("java.version"));
		}
		return virtualThreads;
	}

}
