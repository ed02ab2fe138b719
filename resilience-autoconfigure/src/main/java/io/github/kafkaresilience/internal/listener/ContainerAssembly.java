package io.github.kafkaresilience.internal.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.kafkaresilience.container.RateLimitSettings;
import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.internal.container.DualWriteStrategy;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.container.SyncBarrier;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.ladder.LadderPublisher;
import io.github.kafkaresilience.internal.ladder.StageRouter;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.outage.OutageBreaker;
import io.github.kafkaresilience.internal.outage.OutageSettings;
import io.github.kafkaresilience.internal.support.ConsumerClients;
import io.github.kafkaresilience.internal.support.ListenerConsumers;
import io.github.kafkaresilience.internal.support.ProducerClients;
import io.github.kafkaresilience.internal.topics.LadderTopics;
import io.github.kafkaresilience.ladder.AsyncBatchHandler;
import io.github.kafkaresilience.ladder.AsyncRecordHandler;
import io.github.kafkaresilience.ladder.BatchHandler;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.ladder.RecordHandler;
import io.github.kafkaresilience.listener.TenantResolver;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;
import org.apache.kafka.clients.consumer.Consumer;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;

/**
 * Assembles the containers of one {@link OrderedRetryContainerFactory}: the factory's
 * settings, with the internal parts they are built from (what every container of the
 * application shares, the component factory, a dual-write strategy per mode, the outage
 * settings and the attempt observations), which the configurer supplies.
 */
public final class ContainerAssembly {

	private final OrderedRetryContainerFactory factory;

	private final Engine engine;

	private final OrderedRetryComponentFactory componentFactory;

	private final Function<DualWrite, DualWriteStrategy> strategies;

	private final Map<DualWrite, DualWriteStrategy> strategyByMode = new EnumMap<>(DualWrite.class);

	private final Function<String, OutageSettings> outageSettings;

	private final AttemptObservationFactory attemptObservations;

	/**
	 * @param factory the factory whose settings the containers get
	 * @param engine what every container of the application shares
	 * @param componentFactory creates the parts of each container
	 * @param strategies creates the dual-write strategy of a mode, once per mode
	 * @param outageSettings the outage mode of each listener, by listener id
	 * @param attemptObservations observes the attempts of the records and the sends that
	 * carry them on
	 */
	public ContainerAssembly(OrderedRetryContainerFactory factory, Engine engine,
			OrderedRetryComponentFactory componentFactory, Function<DualWrite, DualWriteStrategy> strategies,
			Function<String, OutageSettings> outageSettings, AttemptObservationFactory attemptObservations) {
		this.factory = factory;
		this.engine = engine;
		this.componentFactory = componentFactory;
		this.strategies = strategies;
		this.outageSettings = outageSettings;
		this.attemptObservations = attemptObservations;
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

	/** What creates the parts of each container. */
	public OrderedRetryComponentFactory componentFactory() {
		return this.componentFactory;
	}

	/**
	 * How the containers keep a move's writes consistent, in the factory's dual-write
	 * mode.
	 */
	public synchronized DualWriteStrategy dualWrite() {
		return this.strategyByMode.computeIfAbsent(this.factory.getDualWrite(), this.strategies);
	}

	/** The outage settings a listener gets. */
	public OutageSettings outageSettings(String listenerId) {
		return this.outageSettings.apply(listenerId);
	}

	/** How long an endpoint's results that complete later are waited for. */
	public Duration attemptTimeout(ListenerEndpoint endpoint) {
		Duration timeout = endpoint.attemptTimeout();
		return (timeout != null) ? timeout : this.factory.getAttemptTimeout();
	}

	/**
	 * How an endpoint's batches are gathered: the factory's settings, with its own size
	 * if it sets one.
	 */
	public BatchSettings batchSettings(ListenerEndpoint endpoint) {
		BatchSettings settings = this.factory.getBatchSettings();
		return (endpoint.batchSize() != null) ? settings.withSize(endpoint.batchSize()) : settings;
	}

	/** The ladder of a listener's group on one of its topics (not provisioned). */
	public LadderPlan plan(ListenerEndpoint endpoint, String topic) {
		List<Duration> delays = (endpoint.delays() != null) ? endpoint.delays() : this.factory.getDelays();
		Integer maxAttempts = (endpoint.maxAttempts() != null) ? endpoint.maxAttempts() : this.factory.getMaxAttempts();
		return this.engine.ladderTopics().plan(endpoint.groupId(), topic, delays, maxAttempts);
	}

	/** The consumers the library creates for a listener, in each of their roles. */
	public ListenerConsumers consumers(ListenerEndpoint endpoint) {
		DualWriteStrategy dualWrite = dualWrite();
		Map<String, Object> settings = new HashMap<>(dualWrite.consumerSettings());
		endpoint.consumerProperties().forEach((name, value) -> {
			Object required = settings.get(name);
			if (required != null && !required.toString().equals(value)) {
				throw new IllegalStateException("Listener '" + endpoint.id() + "' sets " + name + "=" + value
						+ " in its properties, but its dual-write mode " + dualWrite.mode() + " needs " + name + "="
						+ required);
			}
			settings.put(name, value);
		});
		return new ListenerConsumers(this.engine.consumerClients(), endpoint.id(), endpoint.groupId(),
				this.engine.instanceId(), settings);
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
			LockRegistry registry = this.engine.lockCoordinator().registryOf(plan.lockTopic());
			if (registry != null) {
				this.engine.ladderTopics().checkOwnership(plan, registry, consumers, timeout);
			}
		}
	}

	/**
	 * Creates the container of an endpoint from the parts the component factory creates:
	 * its ladders' topics provisioned, their lock registries (their tailers started) and
	 * a router per main topic, its outage breaker and its reaping; the container is not
	 * started.
	 * @param endpoint the listener
	 * @param events where the container publishes its events, or {@code null}
	 * @return the container, customized
	 */
	public RetryContainer createContainer(ListenerEndpoint endpoint, @Nullable ApplicationEventPublisher events) {
		OrderedRetryContainerFactory factory = this.factory;
		ContainerSettings settings = factory.getContainerSettings();
		if (endpoint.concurrency() != null) {
			settings = settings.withConcurrency(endpoint.concurrency());
		}
		ListenerConsumers consumers = consumers(endpoint);
		DualWriteStrategy.Writes writes = dualWrite().writes(endpoint.id(), settings.concurrency(),
				this.componentFactory.faultInjection());
		OutageSettings outage = this.outageSettings.apply(endpoint.id());
		OutageBreaker breaker = outage.enabled()
				? this.componentFactory.outageBreaker(endpoint, outage, factory.getClassifier(), factory.getClock())
				: null;
		Map<String, RetryContainer.Route> routes = new HashMap<>();
		int partitions = 0;
		List<RetryContainer.Route> ladders = new ArrayList<>();
		Map<StageRouter, BatchHandler> batchHandlers = new HashMap<>();
		Map<StageRouter, AsyncBatchHandler> asyncBatchHandlers = new HashMap<>();
		Map<StageRouter, AsyncRecordHandler> asyncHandlers = new HashMap<>();
		BatchSettings.Failure failure = factory.getBatchSettings().failure();
		for (String topic : endpoint.topics()) {
			LadderPlan plan = plan(endpoint, topic);
			RetryContainer.Route route = route(endpoint, plan, writes, breaker);
			partitions += route.registry().partitions() * plan.consumedTopics().size();
			ladders.add(route);
			plan.consumedTopics().forEach((consumed) -> routes.put(consumed, route));
			if (endpoint.batch() && endpoint.async()) {
				AsyncBatchHandler handler = this.engine.handlers()
					.createAsyncBatch(endpoint, topic, failure, attemptTimeout(endpoint));
				asyncBatchHandlers.put(route.router(), (breaker != null) ? breaker.observing(handler, topic) : handler);
			}
			else if (endpoint.batch()) {
				BatchHandler handler = this.engine.handlers().createBatch(endpoint, topic, failure);
				batchHandlers.put(route.router(), (breaker != null) ? breaker.observing(handler, topic) : handler);
			}
			else if (endpoint.async()) {
				AsyncRecordHandler handler = this.engine.handlers()
					.createAsync(endpoint, topic, attemptTimeout(endpoint), writes.publisher());
				asyncHandlers.put(route.router(), (breaker != null) ? breaker.observing(handler, topic) : handler);
			}
		}
		OrderedRetryContainerFactory.ReaperSettings reaper = factory.getReaper();
		RetryContainer.Reaping reaping = (reaper != null)
				? this.componentFactory.reaping(endpoint, ladders, reaper, factory.getClock(), factory.getObserver())
				: null;
		RetryContainer container = new RetryContainer(endpoint.id(), routes,
				new RetryContainer.Consumers(consumers.listener(), consumers.retries()), this.engine.syncBarrier(),
				factory.getRebalanceListener(), settings, factory.getClock(), reaping, factory.getObserver(), writes);
		TenantResolver tenants = (endpoint.tenantResolver() != null) ? endpoint.tenantResolver()
				: factory.getTenantResolver();
		if (factory.isParking() || tenants != null) {
			// a tenant's records past its share of a partition's bound are parked
			container.parkWith(consumers.rereader());
		}
		RateLimitSettings rateLimit = (endpoint.rateLimit() != null)
				? new RateLimitSettings(endpoint.rateLimit(), factory.getRateLimit().shared()) : factory.getRateLimit();
		if (tenants != null || rateLimit.limited()) {
			container.shareFairly(tenants, factory.getFairShare(), rateLimit, partitions);
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
			container.publishEvents(events, factory.getIdleEventInterval());
		}
		factory.getContainerCustomizers().forEach((customizer) -> customizer.customize(container));
		return container;
	}

	private RetryContainer.Route route(ListenerEndpoint endpoint, LadderPlan plan, DualWriteStrategy.Writes writes,
			@Nullable OutageBreaker breaker) {
		OrderedRetryContainerFactory factory = this.factory;
		String topic = plan.mainTopic();
		LadderTopics.Provisioned provisioned = this.componentFactory.provision(this.engine.ladderTopics(), plan);
		this.engine.publisher().allowRecordsOf(topic, provisioned.maxMessageBytes());
		LockRegistry registry = this.componentFactory.lockRegistry(this.engine.lockCoordinator(), plan, provisioned);
		RecordHandler handler = this.engine.handlers().create(endpoint, topic);
		if (breaker != null) {
			handler = breaker.observing(handler, topic);
		}
		StageRouter.Builder router = StageRouter.builder(plan, writes.locks(registry), writes.publisher(), handler)
			.classifier(factory.getClassifier())
			.clock(factory.getClock())
			.lockIds(() -> UUID.randomUUID().toString())
			.dualWrite(writes.mode())
			.faults(this.componentFactory.faultInjection())
			.ownership(registry.ownership())
			.dueTimeJitter(factory.getDueTimeJitter())
			.observer(factory.getObserver().ladder(endpoint.id(), endpoint.groupId(), topic))
			.attempts(this.attemptObservations.create(endpoint, topic))
			.batchRuns(endpoint.batch() || endpoint.async());
		if (breaker != null) {
			router.followers(breaker::followed);
		}
		return new RetryContainer.Route(this.componentFactory.stageRouter(endpoint, router), registry);
	}

}
