package io.github.kafkaresilience.listener;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.internal.container.DualWriteStrategy;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.internal.container.SyncBarrier;
import io.github.kafkaresilience.internal.idempotency.IdempotencyGuards;
import io.github.kafkaresilience.internal.listener.HandlerInvokers;
import io.github.kafkaresilience.internal.listener.ListenerEndpoint;
import io.github.kafkaresilience.internal.listener.OrderedRetryComponentFactory;
import io.github.kafkaresilience.ladder.AsyncBatchHandler;
import io.github.kafkaresilience.ladder.AsyncRecordHandler;
import io.github.kafkaresilience.internal.ladder.AttemptObservation;
import io.github.kafkaresilience.ladder.BatchHandler;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.ladder.LadderPublisher;
import io.github.kafkaresilience.ladder.RecordHandler;
import io.github.kafkaresilience.internal.ladder.RecordPublisher;
import io.github.kafkaresilience.internal.topics.LadderTopics;
import io.github.kafkaresilience.internal.ladder.StageRouter;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.outage.OutageBreaker;
import io.github.kafkaresilience.internal.outage.OutageSettings;
import io.github.kafkaresilience.internal.support.ConsumerClients;
import io.github.kafkaresilience.internal.support.ListenerConsumers;
import io.github.kafkaresilience.internal.support.ProducerClients;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.kafka.annotation.KafkaListenerAnnotationBeanPostProcessor;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;
import org.springframework.kafka.support.converter.BatchMessageConverter;
import org.springframework.kafka.support.converter.RecordMessageConverter;

/**
 * Creates the {@link RetryContainer} of an {@code @OrderedRetryListener} endpoint, as
 * spring-kafka's listener container factory does for a {@code @KafkaListener}: with its
 * settings, its dual-write strategy, its observers and the customizers, applied in order.
 * An application gets one, {@code orderedRetryContainerFactory}, configured from
 * {@code kafka.resilience.*}; a listener that names another in {@code containerFactory}
 * gets that one's. Another factory is made the way Spring Boot makes the first:
 * <pre class="code">
 * &#64;Bean
 * OrderedRetryContainerFactory transactional(OrderedRetryContainerFactoryConfigurer configurer) {
 *     OrderedRetryContainerFactory factory = new OrderedRetryContainerFactory();
 *     configurer.configure(factory);
 *     factory.setDualWrite(configurer.dualWrite(DualWrite.TRANSACTION));
 *     return factory;
 * }
 * </pre> The parts of each container, its ladders' topics, lock registries and routers,
 * its outage breaker and its reaping, come from an {@link OrderedRetryComponentFactory},
 * which an application may override.
 *
 * @since 0.1.0
 */
public class OrderedRetryContainerFactory {

	private @Nullable Engine engine;

	private @Nullable ContainerSettings containerSettings;

	private @Nullable List<Duration> delays;

	/** How long a result that completes later is waited for, unless set. */
	public static final Duration DEFAULT_ATTEMPT_TIMEOUT = Duration.ofSeconds(30);

	private BatchSettings batchSettings = BatchSettings.DEFAULTS;

	private Duration attemptTimeout = DEFAULT_ATTEMPT_TIMEOUT;

	private @Nullable Integer maxAttempts;

	private @Nullable DualWriteStrategy dualWrite;

	private FailureClassifier classifier = new FailureClassifier(List.of());

	private Function<String, OutageSettings> outageSettings = (listenerId) -> OutageSettings.DISABLED;

	private double dueTimeJitter;

	private ResilienceObserver observer = ResilienceObserver.NONE;

	private AttemptObservationFactory attemptObservations = (endpoint, mainTopic) -> AttemptObservation.NONE;

	private @Nullable ConsumerAwareRebalanceListener rebalanceListener;

	private Clock clock = Clock.systemUTC();

	private @Nullable ReaperSettings reaper;

	private boolean parking = true;

	private @Nullable Duration idleEventInterval;

	private List<OrderedRetryContainerCustomizer> customizers = List.of();

	private OrderedRetryComponentFactory componentFactory = new OrderedRetryComponentFactory();

	/**
	 * How zombie locks are reaped.
	 *
	 * @param interval how often each listener looks for zombie locks
	 * @param grace how long a lock must be unchanged before it may be reaped
	 * @param admins creates the admin client a listener's reapers share
	 */
	public record ReaperSettings(Duration interval, Duration grace, Supplier<Admin> admins) {
	}

	/** Creates the handler of an endpoint for one of its main topics. */
	@FunctionalInterface
	public interface RecordHandlerFactory {

		RecordHandler create(ListenerEndpoint endpoint, String mainTopic);

		/**
		 * Creates the handler of a batch listener for one of its main topics.
		 * @param endpoint the listener, whose method takes a batch
		 * @param mainTopic the main topic
		 * @param failure what a call that fails without naming its failed record means
		 * @return the handler
		 */
		default BatchHandler createBatch(ListenerEndpoint endpoint, String mainTopic, BatchSettings.Failure failure) {
			throw new UnsupportedOperationException(getClass().getName() + " creates no batch handlers; listener '"
					+ endpoint.id() + "' is a batch listener");
		}

		/**
		 * Creates the handler of a batch listener whose method returns a result that
		 * completes later, for one of its main topics.
		 * @param endpoint the listener, whose method takes a batch
		 * @param mainTopic the main topic
		 * @param failure what a call that fails without naming its failed record means
		 * @param attemptTimeout how long a call's result is waited for before the call
		 * fails
		 * @return the handler
		 */
		default AsyncBatchHandler createAsyncBatch(ListenerEndpoint endpoint, String mainTopic,
				BatchSettings.Failure failure, Duration attemptTimeout) {
			throw new UnsupportedOperationException(
					getClass().getName() + " creates no batch handlers whose results " + "complete later; listener '"
							+ endpoint.id() + "' returns " + endpoint.method().getReturnType().getSimpleName());
		}

		/**
		 * Creates the handler of a listener whose method returns a result that completes
		 * later, for one of its main topics.
		 * @param endpoint the listener
		 * @param mainTopic the main topic
		 * @param attemptTimeout how long a result is waited for before the attempt fails
		 * @param replies sends the replies of a {@code @SendTo} method as a write of the
		 * record's step: in {@code transaction} mode, in its transaction
		 * @return the handler
		 */
		default AsyncRecordHandler createAsync(ListenerEndpoint endpoint, String mainTopic, Duration attemptTimeout,
				RecordPublisher replies) {
			throw new UnsupportedOperationException(
					getClass().getName() + " creates no handlers whose results " + "complete later; listener '"
							+ endpoint.id() + "' returns " + endpoint.method().getReturnType().getSimpleName());
		}

		/**
		 * Handlers that invoke each listener's method as spring-kafka invokes a record
		 * {@code @KafkaListener} method, after deserializing its records with the
		 * application's deserializers, once per idempotency key where the listener asks
		 * for it.
		 * @param kafkaListenerProcessor the application's {@code @KafkaListener}
		 * processor, whose handler-method factory is used, or {@code null} for
		 * spring-kafka's default; asked for once, when the first handler is created
		 * @param messageConverter the application's record message converter, or
		 * {@code null}
		 * @param consumerFactory the application's consumer factory, whose deserializers
		 * are used
		 * @param idempotencyGuards the guards of the listeners that ask for idempotency
		 * @return the factory
		 */
		static RecordHandlerFactory invokingListenerMethods(
				Supplier<@Nullable KafkaListenerAnnotationBeanPostProcessor<?, ?>> kafkaListenerProcessor,
				Supplier<@Nullable RecordMessageConverter> messageConverter, ConsumerFactory<?, ?> consumerFactory,
				IdempotencyGuards idempotencyGuards) {
			return invokingListenerMethods(kafkaListenerProcessor, messageConverter, () -> null, consumerFactory,
					idempotencyGuards);
		}

		/**
		 * As
		 * {@link #invokingListenerMethods(Supplier, Supplier, Supplier, ConsumerFactory, IdempotencyGuards)},
		 * with the producer factory whose serializers serialize the replies of
		 * {@code @SendTo} methods.
		 * @param producerFactory the application's producer factory
		 */
		static RecordHandlerFactory invokingListenerMethods(
				Supplier<@Nullable KafkaListenerAnnotationBeanPostProcessor<?, ?>> kafkaListenerProcessor,
				Supplier<@Nullable RecordMessageConverter> messageConverter,
				Supplier<@Nullable BatchMessageConverter> batchMessageConverter, ConsumerFactory<?, ?> consumerFactory,
				ProducerFactory<?, ?> producerFactory, IdempotencyGuards idempotencyGuards) {
			return new HandlerInvokers(kafkaListenerProcessor, messageConverter, batchMessageConverter, consumerFactory,
					producerFactory, idempotencyGuards);
		}

		/**
		 * As
		 * {@link #invokingListenerMethods(Supplier, Supplier, ConsumerFactory, IdempotencyGuards)},
		 * with the batch message converter a batch listener's records are converted with.
		 * @param batchMessageConverter the application's batch message converter, or
		 * {@code null} for a {@code BatchMessagingMessageConverter} over the record
		 * converter
		 */
		static RecordHandlerFactory invokingListenerMethods(
				Supplier<@Nullable KafkaListenerAnnotationBeanPostProcessor<?, ?>> kafkaListenerProcessor,
				Supplier<@Nullable RecordMessageConverter> messageConverter,
				Supplier<@Nullable BatchMessageConverter> batchMessageConverter, ConsumerFactory<?, ?> consumerFactory,
				IdempotencyGuards idempotencyGuards) {
			return new HandlerInvokers(kafkaListenerProcessor, messageConverter, batchMessageConverter, consumerFactory,
					idempotencyGuards);
		}

	}

	/**
	 * Creates what observes the attempts of an endpoint's records on one of its main
	 * topics.
	 */
	@FunctionalInterface
	public interface AttemptObservationFactory {

		AttemptObservation create(ListenerEndpoint endpoint, String mainTopic);

	}

	/**
	 * What every container of an application shares.
	 *
	 * @param lockCoordinator the lock registries of this instance
	 * @param ladderTopics names and provisions the ladders' topics
	 * @param publisher publishes to the ladders' topics in {@code compensate} mode
	 * @param syncBarrier keeps freshly assigned partitions paused until their locks are
	 * current
	 * @param handlers creates the handlers of the listeners' methods
	 * @param consumerClients creates consumers from the application's settings
	 * @param producerClients creates producers from the application's settings
	 * @param instanceId this instance's id
	 */
	public record Engine(LockCoordinator lockCoordinator, LadderTopics ladderTopics, LadderPublisher publisher,
			SyncBarrier syncBarrier, RecordHandlerFactory handlers, ConsumerClients consumerClients,
			ProducerClients producerClients, String instanceId) {
	}

	/** What every container of this factory shares with the application's others. */
	public void setEngine(Engine engine) {
		this.engine = engine;
	}

	/**
	 * How the containers consume; a listener's {@code concurrency} overrides the one
	 * here.
	 */
	public void setContainerSettings(ContainerSettings containerSettings) {
		this.containerSettings = containerSettings;
	}

	/**
	 * How the containers of batch listeners gather their batches; a listener's
	 * {@code batchSize} overrides the size here.
	 */
	public void setBatchSettings(BatchSettings batchSettings) {
		this.batchSettings = batchSettings;
	}

	/** How the containers of batch listeners gather their batches. */
	public BatchSettings getBatchSettings() {
		return this.batchSettings;
	}

	/**
	 * How long a listener method's result that completes later (a
	 * {@code CompletableFuture}, a {@code Mono}, a Kotlin {@code suspend} function) is
	 * waited for before its attempt fails; a listener's {@code attemptTimeout} overrides
	 * it. Positive.
	 */
	public void setAttemptTimeout(Duration attemptTimeout) {
		if (attemptTimeout.isZero() || attemptTimeout.isNegative()) {
			throw new IllegalArgumentException("The attempt timeout must be positive, not " + attemptTimeout);
		}
		this.attemptTimeout = attemptTimeout;
	}

	/** How long results that complete later are waited for, unless a listener says. */
	public Duration getAttemptTimeout() {
		return this.attemptTimeout;
	}

	/** How long an endpoint's results that complete later are waited for. */
	public Duration attemptTimeout(ListenerEndpoint endpoint) {
		return (endpoint.attemptTimeout() != null) ? endpoint.attemptTimeout() : this.attemptTimeout;
	}

	/**
	 * The stage delays of listeners that name none; none at all sends every record that
	 * fails to the dead-letter topic.
	 */
	public void setDelays(List<Duration> delays) {
		this.delays = List.copyOf(delays);
	}

	/**
	 * The attempts of listeners that name none; {@code null} for one more than the
	 * stages.
	 */
	public void setMaxAttempts(@Nullable Integer maxAttempts) {
		this.maxAttempts = maxAttempts;
	}

	/** How the containers keep a move's writes consistent. */
	public void setDualWrite(DualWriteStrategy dualWrite) {
		this.dualWrite = dualWrite;
	}

	/** Tells permanent failures from transient ones. */
	public void setClassifier(FailureClassifier classifier) {
		this.classifier = classifier;
	}

	/**
	 * The outage mode of each listener, by listener id: while its breaker is open, a
	 * listener holds its records instead of moving them into the ladder. By default no
	 * listener holds.
	 */
	public void setOutageSettings(Function<String, OutageSettings> outageSettings) {
		this.outageSettings = outageSettings;
	}

	/**
	 * Spreads retry due times by up to this share of their stage's delay.
	 * @param share between 0 (none, the default) and 1
	 */
	public void setDueTimeJitter(double share) {
		if (!(share >= 0 && share <= 1)) {
			throw new IllegalArgumentException("kafka.resilience.retry.jitter must be between 0 and 1, was " + share);
		}
		this.dueTimeJitter = share;
	}

	/** Hears what the containers do: meters, the health indicator. */
	public void setObserver(ResilienceObserver observer) {
		this.observer = observer;
	}

	/** Observes the attempts of the records and the sends that carry them on. */
	public void setAttemptObservations(AttemptObservationFactory attemptObservations) {
		this.attemptObservations = attemptObservations;
	}

	/** The application's rebalance listener, called after the library's own. */
	public void setRebalanceListener(@Nullable ConsumerAwareRebalanceListener rebalanceListener) {
		this.rebalanceListener = rebalanceListener;
	}

	public void setClock(Clock clock) {
		this.clock = clock;
	}

	/** How zombie locks are reaped; {@code null} for never. */
	public void setReaper(@Nullable ReaperSettings reaper) {
		this.reaper = reaper;
	}

	/**
	 * Whether retries due far ahead are parked and read again with a consumer of each
	 * listener's own (the default); see {@link RetryContainer#parkWith(Supplier)}.
	 */
	public void setParking(boolean parking) {
		this.parking = parking;
	}

	/**
	 * Makes containers publish a {@code ListenerContainerIdleEvent} when they have
	 * received no record for this long, as
	 * {@code spring.kafka.listener.idle-event-interval} does.
	 */
	public void setIdleEventInterval(@Nullable Duration idleEventInterval) {
		this.idleEventInterval = idleEventInterval;
	}

	/** Customize each container once it is created, in this order. */
	public void setContainerCustomizers(List<OrderedRetryContainerCustomizer> customizers) {
		this.customizers = List.copyOf(customizers);
	}

	/** What customizes each container, in order. */
	public List<OrderedRetryContainerCustomizer> getContainerCustomizers() {
		return this.customizers;
	}

	/**
	 * Creates the parts of each container: its ladders' topics, lock registries and
	 * routers, its outage breaker and its reaping. By default a plain
	 * {@link OrderedRetryComponentFactory}.
	 */
	public void setComponentFactory(OrderedRetryComponentFactory componentFactory) {
		this.componentFactory = componentFactory;
	}

	/** What creates the parts of each container. */
	public OrderedRetryComponentFactory getComponentFactory() {
		return this.componentFactory;
	}

	/** How the containers of this factory consume. */
	public ContainerSettings getContainerSettings() {
		return required(this.containerSettings, "container settings");
	}

	/** How the containers of this factory keep a move's writes consistent. */
	public DualWriteStrategy getDualWrite() {
		return required(this.dualWrite, "dual-write strategy");
	}

	/** The stage delays of listeners that name none. */
	public List<Duration> getDelays() {
		return required(this.delays, "stage delays");
	}

	/** Tells permanent failures from transient ones. */
	public FailureClassifier getClassifier() {
		return this.classifier;
	}

	public @Nullable Integer getMaxAttempts() {
		return this.maxAttempts;
	}

	public double getDueTimeJitter() {
		return this.dueTimeJitter;
	}

	public @Nullable ReaperSettings getReaper() {
		return this.reaper;
	}

	public boolean isParking() {
		return this.parking;
	}

	public @Nullable Duration getIdleEventInterval() {
		return this.idleEventInterval;
	}

	/** The outage settings this factory gives a listener. */
	public OutageSettings outageSettings(String listenerId) {
		return this.outageSettings.apply(listenerId);
	}

	/** The ladder of a listener's group on one of its topics (not provisioned). */
	public LadderPlan plan(ListenerEndpoint endpoint, String topic) {
		List<Duration> delays = (endpoint.delays() != null) ? endpoint.delays() : getDelays();
		Integer maxAttempts = (endpoint.maxAttempts() != null) ? endpoint.maxAttempts() : this.maxAttempts;
		return ladderTopics().plan(endpoint.groupId(), topic, delays, maxAttempts);
	}

	/** The consumers the library creates for a listener, in each of their roles. */
	public ListenerConsumers consumers(ListenerEndpoint endpoint) {
		Map<String, Object> settings = new HashMap<>(getDualWrite().consumerSettings());
		endpoint.consumerProperties().forEach((name, value) -> {
			Object required = settings.get(name);
			if (required != null && !required.toString().equals(value)) {
				throw new IllegalStateException("Listener '" + endpoint.id() + "' sets " + name + "=" + value
						+ " in its properties, but its dual-write mode " + getDualWrite().mode() + " needs " + name
						+ "=" + required);
			}
			settings.put(name, value);
		});
		return new ListenerConsumers(engine().consumerClients(), endpoint.id(), endpoint.groupId(),
				engine().instanceId(), settings);
	}

	/**
	 * Refuses to start when another group wrote to one of a listener's ladders; see
	 * {@link LadderTopics#checkOwnership}.
	 * @param endpoint the listener
	 * @param plans its ladders, provisioned
	 * @param timeout how long the check may wait for a lock tailer to catch up, and for
	 * the latest records
	 */
	public void checkOwnership(ListenerEndpoint endpoint, List<LadderPlan> plans, Duration timeout) {
		Supplier<Consumer<byte[], byte[]>> consumers = consumers(endpoint).ownershipCheck();
		for (LadderPlan plan : plans) {
			LockRegistry registry = lockCoordinator().registryOf(plan.lockTopic());
			if (registry != null) {
				ladderTopics().checkOwnership(plan, registry, consumers, timeout);
			}
		}
	}

	/**
	 * Creates the container of an endpoint from the parts the {@link #setComponentFactory
	 * component factory} creates: its ladders' topics provisioned, their lock registries
	 * (their tailers started) and a router per main topic, its outage breaker and its
	 * reaping; the container is not started.
	 * @param endpoint the listener
	 * @param events where the container publishes its events, or {@code null}
	 * @return the container, customized
	 */
	public RetryContainer createContainer(ListenerEndpoint endpoint, @Nullable ApplicationEventPublisher events) {
		ContainerSettings settings = getContainerSettings();
		if (endpoint.concurrency() != null) {
			settings = settings.withConcurrency(endpoint.concurrency());
		}
		ListenerConsumers consumers = consumers(endpoint);
		DualWriteStrategy.Writes writes = getDualWrite().writes(endpoint.id(), settings.concurrency(),
				this.componentFactory.faultInjection());
		OutageSettings outage = this.outageSettings.apply(endpoint.id());
		OutageBreaker breaker = outage.enabled()
				? this.componentFactory.outageBreaker(endpoint, outage, this.classifier, this.clock) : null;
		Map<String, RetryContainer.Route> routes = new HashMap<>();
		List<RetryContainer.Route> ladders = new ArrayList<>();
		Map<StageRouter, BatchHandler> batchHandlers = new HashMap<>();
		Map<StageRouter, AsyncBatchHandler> asyncBatchHandlers = new HashMap<>();
		Map<StageRouter, AsyncRecordHandler> asyncHandlers = new HashMap<>();
		for (String topic : endpoint.topics()) {
			LadderPlan plan = plan(endpoint, topic);
			RetryContainer.Route route = route(endpoint, plan, writes, breaker);
			ladders.add(route);
			plan.consumedTopics().forEach((consumed) -> routes.put(consumed, route));
			if (endpoint.batch() && endpoint.async()) {
				AsyncBatchHandler handler = engine().handlers()
					.createAsyncBatch(endpoint, topic, this.batchSettings.failure(), attemptTimeout(endpoint));
				asyncBatchHandlers.put(route.router(), (breaker != null) ? breaker.observing(handler, topic) : handler);
			}
			else if (endpoint.batch()) {
				BatchHandler handler = engine().handlers().createBatch(endpoint, topic, this.batchSettings.failure());
				batchHandlers.put(route.router(), (breaker != null) ? breaker.observing(handler, topic) : handler);
			}
			else if (endpoint.async()) {
				AsyncRecordHandler handler = engine().handlers()
					.createAsync(endpoint, topic, attemptTimeout(endpoint), writes.publisher());
				asyncHandlers.put(route.router(), (breaker != null) ? breaker.observing(handler, topic) : handler);
			}
		}
		RetryContainer.Reaping reaping = (this.reaper != null)
				? this.componentFactory.reaping(endpoint, ladders, this.reaper, this.clock, this.observer) : null;
		RetryContainer container = new RetryContainer(endpoint.id(), routes,
				new RetryContainer.Consumers(consumers.listener(), consumers.retries()), engine().syncBarrier(),
				this.rebalanceListener, settings, this.clock, reaping, this.observer, writes);
		if (this.parking) {
			container.parkWith(consumers.rereader());
		}
		if (endpoint.batch()) {
			if (endpoint.async()) {
				container.runInBatchesLater(batchSettings(endpoint), asyncBatchHandlers);
			}
			else {
				container.runInBatches(batchSettings(endpoint), batchHandlers);
			}
		}
		else if (endpoint.async()) {
			container.runAsync(asyncHandlers, endpoint.replyTopic() != null && writes.mode() == DualWrite.TRANSACTION);
		}
		if (breaker != null) {
			container.holdOnOutage(breaker);
		}
		if (events != null) {
			container.publishEvents(events, this.idleEventInterval);
		}
		this.customizers.forEach((customizer) -> customizer.customize(container));
		return container;
	}

	/**
	 * How an endpoint's batches are gathered: this factory's settings, with its own size
	 * if it sets one.
	 */
	public BatchSettings batchSettings(ListenerEndpoint endpoint) {
		return (endpoint.batchSize() != null) ? this.batchSettings.withSize(endpoint.batchSize()) : this.batchSettings;
	}

	private RetryContainer.Route route(ListenerEndpoint endpoint, LadderPlan plan, DualWriteStrategy.Writes writes,
			@Nullable OutageBreaker breaker) {
		String topic = plan.mainTopic();
		LadderTopics.Provisioned provisioned = this.componentFactory.provision(ladderTopics(), plan);
		engine().publisher().allowRecordsOf(topic, provisioned.maxMessageBytes());
		LockRegistry registry = this.componentFactory.lockRegistry(lockCoordinator(), plan, provisioned);
		RecordHandler handler = engine().handlers().create(endpoint, topic);
		if (breaker != null) {
			handler = breaker.observing(handler, topic);
		}
		StageRouter.Builder router = StageRouter.builder(plan, writes.locks(registry), writes.publisher(), handler)
			.classifier(this.classifier)
			.clock(this.clock)
			.lockIds(() -> UUID.randomUUID().toString())
			.dualWrite(writes.mode())
			.faults(this.componentFactory.faultInjection())
			.ownership(registry.ownership())
			.dueTimeJitter(this.dueTimeJitter)
			.observer(this.observer.ladder(endpoint.id(), endpoint.groupId(), topic))
			.attempts(this.attemptObservations.create(endpoint, topic))
			.batchRuns(endpoint.batch() || endpoint.async());
		if (breaker != null) {
			router.followers(breaker::followed);
		}
		return new RetryContainer.Route(this.componentFactory.stageRouter(endpoint, router), registry);
	}

	private Engine engine() {
		return required(this.engine, "engine");
	}

	private LockCoordinator lockCoordinator() {
		return engine().lockCoordinator();
	}

	private LadderTopics ladderTopics() {
		return engine().ladderTopics();
	}

	private static <T> T required(@Nullable T value, String what) {
		if (value == null) {
			throw new IllegalStateException("This OrderedRetryContainerFactory has no " + what
					+ "; configure it with OrderedRetryContainerFactoryConfigurer.configure(factory) first");
		}
		return value;
	}

}
