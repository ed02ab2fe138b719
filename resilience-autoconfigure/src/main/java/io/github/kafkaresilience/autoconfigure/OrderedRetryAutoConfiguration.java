package io.github.kafkaresilience.autoconfigure;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.dlq.DlqDispatcher;
import io.github.kafkaresilience.dlq.DlqHandler;
import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.dlq.IncidentLogDlqHandler;
import io.github.kafkaresilience.idempotency.IdempotencyGuards;
import io.github.kafkaresilience.ladder.DlqReason;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.ladder.FaultInjection;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.LadderPlan;
import io.github.kafkaresilience.ladder.LadderObserver;
import io.github.kafkaresilience.ladder.RetryLadder;
import io.github.kafkaresilience.listener.ListenerDefaults;
import io.github.kafkaresilience.listener.ListenerEndpoint;
import io.github.kafkaresilience.container.OrderedRetryContainer;
import io.github.kafkaresilience.listener.OrderedRetryListenerAnnotationBeanPostProcessor;
import io.github.kafkaresilience.listener.OrderedRetryListenerRegistry;
import io.github.kafkaresilience.listener.OrderedRetryListenerRegistry.RecordHandlerFactory;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.container.SyncBarrier;
import io.github.kafkaresilience.container.TransactionalWrites;
import io.github.kafkaresilience.lock.Lock;
import io.github.kafkaresilience.lock.LockCoordinator;
import io.github.kafkaresilience.lock.LockRegistry;
import io.github.kafkaresilience.lock.Ownership;
import io.github.kafkaresilience.support.ConsumerClients;
import io.github.kafkaresilience.support.ProducerClients;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.SingletonBeanRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.boot.system.JavaVersion;
import org.springframework.boot.thread.Threading;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.kafka.annotation.KafkaListenerAnnotationBeanPostProcessor;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;
import org.springframework.kafka.support.converter.RecordMessageConverter;
import org.springframework.util.StringUtils;

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
@Import({ ResilienceMetricsConfiguration.class, ResilienceObservationConfiguration.class, IdempotencyConfiguration.class,
		ResilienceActuatorConfiguration.Health.class, ResilienceActuatorConfiguration.EndpointConfiguration.class })
public final class OrderedRetryAutoConfiguration {

	@Bean
	static OrderedRetryListenerAnnotationBeanPostProcessor orderedRetryListenerAnnotationBeanPostProcessor(
			Environment environment) {
		return new OrderedRetryListenerAnnotationBeanPostProcessor(environment.getProperty("spring.kafka.consumer.group-id"));
	}

	/**
	 * Every consumer and producer of the library comes from the application's factories, so
	 * that their listeners and post-processors (Boot's client metrics among them) see it too.
	 */
	@Bean
	ResilienceClients kafkaResilienceClients(ConsumerFactory<?, ?> consumerFactory, ProducerFactory<?, ?> producerFactory,
			ResilienceProperties properties, ListableBeanFactory beanFactory) {
		ConsumerClients consumers = new ConsumerClients(consumerFactory,
				beanName(beanFactory, consumerFactory, ConsumerFactory.class));
		if (properties.getDualWrite() == DualWrite.TRANSACTION) {
			// the library's consumers and lock tailers read committed records only, so that an
			// aborted move is never seen
			consumers = consumers.with(Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
		}
		return new ResilienceClients(consumers,
				new ProducerClients(producerFactory, beanName(beanFactory, producerFactory, ProducerFactory.class)));
	}

	/** The name of a factory bean: its listeners get the ids {@code <bean name>.<client id>}. */
	private static String beanName(ListableBeanFactory beanFactory, Object factory, Class<?> type) {
		for (String name : beanFactory.getBeanNamesForType(type, false, false)) {
			// the factory is created: look among the created singletons, so as to create no other
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
		return new LockCoordinator(instanceId(properties), clients.consumers(), clients.producers(),
				properties.getLocks().getTailerPollTimeout(), properties.getLocks().getWriteTimeout());
	}

	@Bean
	@ConditionalOnMissingBean
	RetryLadder retryLadder(ResilienceProperties properties, KafkaAdmin kafkaAdmin, ResilienceClients clients) {
		ResilienceProperties.Topics topics = properties.getTopics();
		return new RetryLadder(new RetryLadder.Naming(topics.getRetryTemplate(), topics.getDlqTemplate(),
				topics.getLockTemplate()), kafkaAdmin.getConfigurationProperties(),
				new RetryLadder.Topics(topics.isCreate(), topics.getReplicationFactor(), topics.getRetryRetention(),
						topics.getDlqRetention(), topics.getLockSegment(), topics.getLockDeleteRetention(),
						topics.isCheckUnscopedAtStartup()),
				clients.producers(), instanceId(properties), properties.getLocks().getWriteTimeout());
	}

	@Bean
	@ConditionalOnMissingBean
	DlqHandler dlqHandler() {
		return new IncidentLogDlqHandler();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnProperty(prefix = "kafka.resilience.dlq-handler", name = "enabled", matchIfMissing = true)
	DlqDispatcher dlqDispatcher(OrderedRetryListenerRegistry listeners, DlqHandler dlqHandler,
			ResilienceClients clients, ResilienceProperties properties, LockCoordinator lockCoordinator) {
		ConsumerClients consumers = clients.consumers();
		String instanceId = instanceId(properties);
		return new DlqDispatcher(() -> listeners.endpoints()
			.stream()
			.map((endpoint) -> new DlqDispatcher.Source(endpoint.id(), dlqTopics(listeners.plans(endpoint.id()),
					lockCoordinator), dlqConsumers(consumers, endpoint, instanceId)))
			.filter((source) -> !source.dlqTopics().isEmpty())
			.toList(), dlqHandler, properties.getConsumer().getPollTimeout());
	}

	/** The dead-letter topics of a listener's ladders, each with the check its ladder shares. */
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
	DlqReplayer dlqReplayer(ResilienceClients clients, ResilienceProperties properties,
			OrderedRetryListenerRegistry listeners) {
		return new DlqReplayer(clients.consumers(), clients.producers(), properties.getReplay().getRate(),
				Clock.systemUTC(), listeners::ladder);
	}

	@Bean
	@ConditionalOnProperty(name = ReplayCommandEnvironmentPostProcessor.COMMAND_PROPERTY,
			havingValue = ReplayCommandEnvironmentPostProcessor.REPLAY)
	ReplayCommandRunner kafkaResilienceReplayCommandRunner(DlqReplayer replayer, ConfigurableApplicationContext context) {
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
	OrderedRetryListenerRegistry orderedRetryListenerRegistry(ResilienceProperties properties,
			LockCoordinator lockCoordinator, RetryLadder retryLadder, SyncBarrier syncBarrier,
			FailureClassifier failureClassifier, ConsumerFactory<?, ?> consumerFactory, KafkaAdmin kafkaAdmin,
			ObjectProvider<ConsumerAwareRebalanceListener> rebalanceListener,
			ObjectProvider<ResilienceObserver> observers, ResilienceClients clients,
			ObjectProvider<FaultInjection> faultInjection, IdempotencyGuards idempotencyGuards,
			ObjectProvider<KafkaProperties> kafkaProperties,
			ObjectProvider<KafkaListenerAnnotationBeanPostProcessor<?, ?>> kafkaListenerProcessor,
			ObjectProvider<RecordMessageConverter> recordMessageConverter,
			ObjectProvider<OrderedRetryListenerRegistry.AttemptObservationFactory> attemptObservations,
			Environment environment) {
		ResilienceProperties.Consumer consumer = properties.getConsumer();
		ListenerDefaults defaults = new ListenerDefaults(properties.getRetry().getDelays(),
				properties.getRetry().getMaxAttempts(),
				new ContainerSettings(consumer.getConcurrency(), consumer.getMaxInFlightPerPartition(),
						consumer.getPollTimeout(), consumer.getCommitInterval(), consumer.getShutdownTimeout(),
						consumer.getRecheckInterval(), consumer.getParkAfter(), virtualWorkers(consumer, environment)));
		String instanceId = instanceId(properties);
		ConsumerClients consumers = clients.consumers();
		FaultInjection faults = faultInjection.getIfAvailable(() -> FaultInjection.NONE);
		OrderedRetryListenerRegistry registry = new OrderedRetryListenerRegistry(lockCoordinator, retryLadder, syncBarrier, failureClassifier, defaults,
				(endpoint) -> consumers(consumers, endpoint, instanceId),
				RecordHandlerFactory.invokingListenerMethods(kafkaListenerProcessor::getIfUnique,
						recordMessageConverter::getIfUnique, consumerFactory, idempotencyGuards),
				rebalanceListener.getIfUnique(), Clock.systemUTC(), reaper(properties, kafkaAdmin),
				composite(observers.orderedStream().toList()));
		registry.setFaultInjection(faults);
		registry.holdOnOutages(properties.getOutage().validated()::settings);
		registry.setDueTimeJitter(properties.getRetry().getJitter());
		registry.setAutoStartup(runsListeners(properties));
		kafkaProperties.ifAvailable((kafka) -> registry.setIdleEventInterval(kafka.getListener().getIdleEventInterval()));
		attemptObservations.ifAvailable(registry::observeAttemptsWith);
		registry.parkWith((endpoint) -> rereaders(consumers, endpoint, instanceId));
		if (properties.getTopics().isCheckOwnerAtStartup()) {
			registry.checkOwnershipWith((endpoint) -> groupless(consumers, endpoint, instanceId, "-ownership-check"),
					OWNERSHIP_CHECK_TIMEOUT);
		}
		if (properties.getDualWrite() == DualWrite.TRANSACTION) {
			ProducerClients producers = clients.producers();
			Duration timeout = properties.getLocks().getWriteTimeout();
			registry.useTransactions((listenerId, concurrency) -> new TransactionalWrites(producers,
					"kafka-resilience-" + instanceId + "-" + listenerId, concurrency, timeout, faults));
		}
		return registry;
	}

	/**
	 * Whether the listeners' workers are virtual threads: as
	 * {@code kafka.resilience.consumer.virtual-threads} says, and while it is unset as
	 * {@code spring.threads.virtual.enabled} says on Java 21 or later (Boot's own rule for its
	 * executors: on an older Java that property means platform threads). Asked for explicitly
	 * on an older Java, virtual threads are refused.
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

	/**
	 * Whether the application runs its listeners, or a one-off command instead. Any other
	 * value than the one command is refused when the properties are bound.
	 */
	private static boolean runsListeners(ResilienceProperties properties) {
		return !ReplayCommandEnvironmentPostProcessor.REPLAY.equals(properties.getCommand());
	}

	private static OrderedRetryListenerRegistry.@Nullable ReaperSettings reaper(ResilienceProperties properties,
			KafkaAdmin kafkaAdmin) {
		ResilienceProperties.Reaper reaper = properties.getReaper();
		if (!reaper.isEnabled()) {
			return null;
		}
		Map<String, Object> adminConfig = kafkaAdmin.getConfigurationProperties();
		return new OrderedRetryListenerRegistry.ReaperSettings(reaper.getInterval(), reaper.getGrace(),
				() -> Admin.create(adminConfig));
	}

	private static ResilienceObserver composite(List<ResilienceObserver> observers) {
		if (observers.size() == 1) {
			return observers.get(0);
		}
		return new ResilienceObserver() {

			@Override
			public void barrierOpened(String listenerId, String group, TopicPartition partition, Duration waited) {
				observers.forEach((observer) -> observer.barrierOpened(listenerId, group, partition, waited));
			}

			@Override
			public void lockReaped(String listenerId, String group, String mainTopic, Lock lock) {
				observers.forEach((observer) -> observer.lockReaped(listenerId, group, mainTopic, lock));
			}

			@Override
			public LadderObserver ladder(String listenerId, String group, String mainTopic) {
				List<LadderObserver> ladders = observers.stream()
					.map((observer) -> observer.ladder(listenerId, group, mainTopic))
					.filter((ladder) -> ladder != LadderObserver.NONE)
					.toList();
				if (ladders.size() <= 1) {
					return ladders.isEmpty() ? LadderObserver.NONE : ladders.get(0);
				}
				return new LadderObserver() {

					@Override
					public void handled(int stage, HandlerResult.Outcome outcome, long nanos) {
						ladders.forEach((ladder) -> ladder.handled(stage, outcome, nanos));
					}

					@Override
					public void followerForwarded() {
						ladders.forEach(LadderObserver::followerForwarded);
					}

					@Override
					public void deadLettered(DlqReason reason, String errorClass) {
						ladders.forEach((ladder) -> ladder.deadLettered(reason, errorClass));
					}

				};
			}

			@Override
			public void polling(String listenerId, Duration sinceLastPoll) {
				observers.forEach((observer) -> observer.polling(listenerId, sinceLastPoll));
			}

			@Override
			public void rebalanced(String listenerId, String kind, Collection<TopicPartition> partitions) {
				observers.forEach((observer) -> observer.rebalanced(listenerId, kind, partitions));
			}

		};
	}

	/** How long the startup check of a ladder's ownership waits for its lock view and latest records. */
	private static final Duration OWNERSHIP_CHECK_TIMEOUT = Duration.ofMinutes(2);

	/** The listener consumer's {@code fetch.max.wait.ms} unless configured: see {@link #consumers}. */
	static final int FETCH_MAX_WAIT_MS = 20;

	private static Supplier<Consumer<byte[], byte[]>> consumers(ConsumerClients clients, ListenerEndpoint endpoint,
			String instanceId) {
		Map<String, Object> config = byteConsumerConfig(clients, endpoint, instanceId, "");
		config.put(ConsumerConfig.GROUP_ID_CONFIG, endpoint.groupId());
		// The consumer also reads the stage topics, which are mostly empty. A consumer keeps one
		// fetch in flight per broker, and a fetch holding only empty partitions waits
		// fetch.max.wait.ms at the broker while the main topic's records wait behind it. P1 in
		// docs/BENCHMARKS.md (1M records, vs a plain listener): 500 ms (the client's default)
		// 0.1-0.3x, 100 ms 0.3-0.9x, 50 ms 0.84x, 20 ms 0.93x. The price: an idle consumer
		// sends up to 50 empty fetches a second to each broker.
		config.putIfAbsent(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, FETCH_MAX_WAIT_MS);
		return clients.supplier(config);
	}

	/**
	 * Consumers of a listener's dead-letter topics for the {@link DlqHandler}: a group of their
	 * own, so each dead letter is handled by one instance, from the earliest dead letter the
	 * first time.
	 */
	private static Supplier<Consumer<byte[], byte[]>> dlqConsumers(ConsumerClients clients, ListenerEndpoint endpoint,
			String instanceId) {
		Map<String, Object> config = byteConsumerConfig(clients, endpoint, instanceId, "-dlq-handler");
		config.put(ConsumerConfig.GROUP_ID_CONFIG, endpoint.groupId() + ".dlq-handler");
		config.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
		config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
		return clients.supplier(config);
	}

	/**
	 * Consumers that read parked retries again: assigned to one partition at a time, outside
	 * the listener's group, never committing.
	 */
	private static Supplier<Consumer<byte[], byte[]>> rereaders(ConsumerClients clients, ListenerEndpoint endpoint,
			String instanceId) {
		return groupless(clients, endpoint, instanceId, "-rereader");
	}

	/**
	 * Consumers of a listener outside its group, reading from the earliest offset and never
	 * committing: for the re-reader and the startup check of the ladder's owners.
	 */
	private static Supplier<Consumer<byte[], byte[]>> groupless(ConsumerClients clients, ListenerEndpoint endpoint,
			String instanceId, String role) {
		Map<String, Object> config = byteConsumerConfig(clients, endpoint, instanceId, role);
		config.remove(ConsumerConfig.GROUP_ID_CONFIG);
		config.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
		config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
		return clients.supplier(config);
	}

	/**
	 * What every consumer the library creates for a listener shares: the application's client
	 * settings, a client id naming the listener, the instance and the consumer's role, no auto
	 * commit, and raw bytes (the handler deserializes).
	 */
	private static Map<String, Object> byteConsumerConfig(ConsumerClients clients, ListenerEndpoint endpoint,
			String instanceId, String role) {
		Map<String, Object> config = clients.configuration();
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		config.put(ConsumerConfig.CLIENT_ID_CONFIG, "kafka-resilience-" + endpoint.id() + "-" + instanceId + role);
		config.remove(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG);
		config.remove(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
		return config;
	}

	static String instanceId(ResilienceProperties properties) {
		if (StringUtils.hasText(properties.getInstanceId())) {
			return properties.getInstanceId();
		}
		String hostname = System.getenv("HOSTNAME");
		if (StringUtils.hasText(hostname)) {
			return hostname;
		}
		try {
			return InetAddress.getLocalHost().getHostName();
		}
		catch (UnknownHostException ex) {
			throw new IllegalStateException("Could not derive an instance id from the host name; set "
					+ "kafka.resilience.instance-id to a value that stays the same across restarts", ex);
		}
	}

}
