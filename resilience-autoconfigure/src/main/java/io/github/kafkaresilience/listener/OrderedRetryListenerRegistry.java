package io.github.kafkaresilience.listener;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.container.TransactionalWrites;
import io.github.kafkaresilience.container.SyncBarrier;
import io.github.kafkaresilience.container.OrderedRetryContainer;
import io.github.kafkaresilience.idempotency.IdempotencyGuards;
import io.github.kafkaresilience.ladder.AttemptObservation;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.ladder.FaultInjection;
import io.github.kafkaresilience.ladder.LadderPlan;
import io.github.kafkaresilience.ladder.RecordHandler;
import io.github.kafkaresilience.outage.OutageBreaker;
import io.github.kafkaresilience.outage.OutageSettings;
import io.github.kafkaresilience.ladder.RetryLadder;
import io.github.kafkaresilience.ladder.StageRouter;
import io.github.kafkaresilience.lock.LockCoordinator;
import io.github.kafkaresilience.lock.LockReaper;
import io.github.kafkaresilience.lock.LockRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationEventPublisherAware;
import org.springframework.context.SmartLifecycle;
import org.springframework.kafka.annotation.KafkaListenerAnnotationBeanPostProcessor;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;
import org.springframework.kafka.support.converter.RecordMessageConverter;

/**
 * Holds the {@code @OrderedRetryListener} endpoints found in the context and runs a
 * {@link OrderedRetryContainer} for each: on start it provisions each main topic's ladder,
 * starts its lock tailer and then the consumer.
 *
 * @since 0.1.0
 */
public class OrderedRetryListenerRegistry implements SmartLifecycle, ApplicationEventPublisherAware {

	/** Phase of the containers: late to start, early to stop. */
	public static final int PHASE = Integer.MAX_VALUE - 100;

	private final List<ListenerEndpoint> endpoints = new ArrayList<>();

	private final Map<String, OrderedRetryContainer> containers = new LinkedHashMap<>();

	private final Map<String, List<LadderPlan>> plans = new LinkedHashMap<>();

	private final LockCoordinator lockCoordinator;

	private final RetryLadder retryLadder;

	private final SyncBarrier syncBarrier;

	private final FailureClassifier classifier;

	private @Nullable Function<String, OutageSettings> outageSettings;

	private double dueTimeJitter;

	private final ListenerDefaults defaults;

	private final LadderPlans ladderPlans;

	private final Function<ListenerEndpoint, Supplier<Consumer<byte[], byte[]>>> consumers;

	private final RecordHandlerFactory handlers;

	private final @Nullable ConsumerAwareRebalanceListener userRebalanceListener;

	private final Clock clock;

	private final @Nullable ReaperSettings reaper;

	private final ResilienceObserver observer;

	private volatile boolean running;

	private volatile boolean autoStartup = true;

	private DualWrite dualWrite = DualWrite.COMPENSATE;

	private @Nullable BiFunction<String, Integer, TransactionalWrites> transactions;

	private FaultInjection faults = FaultInjection.NONE;

	private @Nullable Function<ListenerEndpoint, Supplier<Consumer<byte[], byte[]>>> rereaders;

	private final List<java.util.function.Consumer<OrderedRetryContainer>> containerListeners = new ArrayList<>();

	private @Nullable Function<ListenerEndpoint, Supplier<Consumer<byte[], byte[]>>> ownershipCheckConsumers;

	private Duration ownershipCheckTimeout = Duration.ZERO;

	private @Nullable ApplicationEventPublisher eventPublisher;

	private @Nullable Duration idleEventInterval;

	private AttemptObservationFactory attemptObservations = (endpoint, mainTopic) -> AttemptObservation.NONE;

	/**
	 * How zombie locks are reaped.
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
		 * Handlers that invoke each listener's method as spring-kafka invokes a record
		 * {@code @KafkaListener} method, after deserializing its records with the
		 * application's deserializers, once per idempotency key where the listener asks for it.
		 * @param kafkaListenerProcessor the application's {@code @KafkaListener} processor,
		 * whose handler-method factory is used, or {@code null} for spring-kafka's default;
		 * asked for once, when the first handler is created
		 * @param messageConverter the application's record message converter, or {@code null}
		 * @param consumerFactory the application's consumer factory, whose deserializers are used
		 * @param idempotencyGuards the guards of the listeners that ask for idempotency
		 * @return the factory
		 */
		static RecordHandlerFactory invokingListenerMethods(
				Supplier<@Nullable KafkaListenerAnnotationBeanPostProcessor<?, ?>> kafkaListenerProcessor,
				Supplier<@Nullable RecordMessageConverter> messageConverter, ConsumerFactory<?, ?> consumerFactory,
				IdempotencyGuards idempotencyGuards) {
			return new HandlerInvokers(kafkaListenerProcessor, messageConverter, consumerFactory, idempotencyGuards);
		}

	}

	/** Creates what observes the attempts of an endpoint's records on one of its main topics. */
	@FunctionalInterface
	public interface AttemptObservationFactory {

		AttemptObservation create(ListenerEndpoint endpoint, String mainTopic);

	}

	public OrderedRetryListenerRegistry(LockCoordinator lockCoordinator, RetryLadder retryLadder, SyncBarrier syncBarrier,
			FailureClassifier classifier, ListenerDefaults defaults,
			Function<ListenerEndpoint, Supplier<Consumer<byte[], byte[]>>> consumers,
			RecordHandlerFactory handlers, @Nullable ConsumerAwareRebalanceListener userRebalanceListener,
			Clock clock, @Nullable ReaperSettings reaper, ResilienceObserver observer) {
		this.reaper = reaper;
		this.observer = observer;
		this.lockCoordinator = lockCoordinator;
		this.retryLadder = retryLadder;
		this.syncBarrier = syncBarrier;
		this.classifier = classifier;
		this.defaults = defaults;
		this.ladderPlans = new LadderPlans(retryLadder, defaults);
		this.consumers = consumers;
		this.handlers = handlers;
		this.userRebalanceListener = userRebalanceListener;
		this.clock = clock;
	}

	/**
	 * Switches every listener to {@link DualWrite#TRANSACTION}: the lock writes, publishes and
	 * offset commit of a step go in one transaction of the listener's own.
	 * @param transactions creates the transactions of a listener, given its id and its
	 * concurrency
	 */
	public synchronized void useTransactions(BiFunction<String, Integer, TransactionalWrites> transactions) {
		this.dualWrite = DualWrite.TRANSACTION;
		this.transactions = transactions;
	}

	/**
	 * Lets every listener park retries due far ahead and read them again with a consumer of
	 * its own; see {@link OrderedRetryContainer#parkWith(Supplier)}.
	 * @param rereaders creates, per endpoint, consumers outside its group
	 */
	public synchronized void parkWith(Function<ListenerEndpoint, Supplier<Consumer<byte[], byte[]>>> rereaders) {
		this.rereaders = rereaders;
	}

	/**
	 * Checks at the first start that no other consumer group wrote to the listeners' ladder
	 * topics; see {@link RetryLadder#checkOwnership}. Without it, records of other groups are
	 * only skipped and counted as they are read.
	 * @param consumers creates, per endpoint, consumers outside its group that read the latest
	 * records of its retry and dead-letter topics
	 * @param timeout how long the check may wait for a lock tailer to catch up, and for the
	 * latest records
	 */
	public synchronized void checkOwnershipWith(Function<ListenerEndpoint, Supplier<Consumer<byte[], byte[]>>> consumers,
			Duration timeout) {
		this.ownershipCheckConsumers = consumers;
		this.ownershipCheckTimeout = timeout;
	}

	/**
	 * Observes the attempts of every listener's records, and the sends that carry them on,
	 * with what {@code observations} creates; by default nothing is observed.
	 */
	public synchronized void observeAttemptsWith(AttemptObservationFactory observations) {
		this.attemptObservations = observations;
	}

	/** Sets the test hook called between the steps of a move. */
	/**
	 * Gives each listener an outage breaker with its settings: while it is open, the listener
	 * holds its records instead of moving them into the ladder. Without it, no listener holds.
	 */
	public synchronized void holdOnOutages(Function<String, OutageSettings> settings) {
		this.outageSettings = settings;
	}

	/**
	 * Spreads every listener's retry due times by up to this share of their stage's delay.
	 * @param share between 0 (none, the default) and 1
	 */
	public synchronized void setDueTimeJitter(double share) {
		if (!(share >= 0 && share <= 1)) {
			throw new IllegalArgumentException("kafka.resilience.retry.jitter must be between 0 and 1, was " + share);
		}
		this.dueTimeJitter = share;
	}

	public synchronized void setFaultInjection(FaultInjection faults) {
		this.faults = faults;
	}

	/**
	 * Registers an endpoint; called while the context starts. Listeners of different consumer
	 * groups may consume one topic: each group has a ladder of its own.
	 * @throws IllegalStateException when its id is taken, or one of its topics is already
	 * consumed in its group
	 */
	public synchronized void register(ListenerEndpoint endpoint) {
		if (new HashSet<>(endpoint.topics()).size() != endpoint.topics().size()) {
			throw new IllegalStateException("@OrderedRetryListener '" + endpoint.id() + "' (" + endpoint.method()
					+ ") names a topic twice in " + endpoint.topics() + "; list each topic once");
		}
		for (ListenerEndpoint other : this.endpoints) {
			if (other.id().equals(endpoint.id())) {
				throw new IllegalStateException("Two @OrderedRetryListener methods have the id '" + endpoint.id() + "' ("
						+ other.method() + " and " + endpoint.method() + "); give each a distinct id");
			}
			if (!other.groupId().equals(endpoint.groupId())) {
				continue;
			}
			for (String topic : endpoint.topics()) {
				if (other.topics().contains(topic)) {
					throw new IllegalStateException("Topic '" + topic + "' is consumed twice in consumer group '"
							+ endpoint.groupId() + "', by " + other.method() + " and " + endpoint.method()
							+ "; they would share its retry, dead-letter and lock topics and split its records between "
							+ "them. Consume it with one of them (a listener may take several topics), or give the other a "
							+ "groupId of its own to have it read every record with a ladder of its own");
				}
			}
		}
		this.endpoints.add(endpoint);
	}

	public synchronized List<ListenerEndpoint> endpoints() {
		return List.copyOf(this.endpoints);
	}

	/** Calls {@code listener} with every container created so far and with each one created later. */
	public synchronized void onContainer(java.util.function.Consumer<OrderedRetryContainer> listener) {
		this.containerListeners.add(listener);
		this.containers.values().forEach(listener);
	}

	/** The ladders of a listener, one per topic it consumes; empty before the listener started. */
	public synchronized List<LadderPlan> plans(String listenerId) {
		return this.plans.getOrDefault(listenerId, List.of());
	}

	public synchronized @Nullable OrderedRetryContainer container(String id) {
		return this.containers.get(id);
	}

	@Override
	public void setApplicationEventPublisher(ApplicationEventPublisher publisher) {
		this.eventPublisher = publisher;
	}

	/**
	 * Makes every container publish a {@code ListenerContainerIdleEvent} when it has received
	 * no record for this long, as {@code spring.kafka.listener.idle-event-interval} does for
	 * spring-kafka's containers.
	 */
	public synchronized void setIdleEventInterval(@Nullable Duration idleEventInterval) {
		this.idleEventInterval = idleEventInterval;
	}

	/**
	 * Pauses a listener: it takes no new records, its running records finish and its waiting
	 * ones wait; locks stay, so every key keeps its order. It stays in its consumer group.
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	public void pause(String id) {
		containerOrFail(id).pause();
	}

	/**
	 * Resumes a listener paused with {@link #pause(String)}.
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	public void resume(String id) {
		containerOrFail(id).resume();
	}

	/**
	 * Whether a listener was paused with {@link #pause(String)} and not resumed since.
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	public boolean isPauseRequested(String id) {
		return containerOrFail(id).isPauseRequested();
	}

	/**
	 * Whether a listener's container runs.
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	public boolean isRunning(String id) {
		return containerOrFail(id).isRunning();
	}

	private OrderedRetryContainer containerOrFail(String id) {
		OrderedRetryContainer container = container(id);
		if (container == null) {
			throw new IllegalArgumentException("No @OrderedRetryListener has the id '" + id + "'"
					+ (this.running ? "; listeners: " + this.containers.keySet() : " (the listeners have not started)"));
		}
		return container;
	}

	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		if (this.containers.isEmpty()) {
			this.ladderPlans.checkTopicsAreDistinct(this.endpoints);
			for (ListenerEndpoint endpoint : this.endpoints) {
				OrderedRetryContainer container = createContainer(endpoint);
				this.containers.put(endpoint.id(), container);
				this.containerListeners.forEach((listener) -> listener.accept(container));
			}
			checkOwnership();
		}
		for (ListenerEndpoint endpoint : this.endpoints) {
			if (endpoint.autoStartup()) {
				this.containers.get(endpoint.id()).start();
			}
		}
		this.running = true;
	}

	/**
	 * Starts a listener, typically one whose {@code autoStartup} is false, once the registry
	 * has started (it provisions the ladders and starts the lock tailers).
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	public void start(String id) {
		containerOrFail(id).start();
	}

	/**
	 * Stops a listener: it finishes its running records, commits and leaves its group. Its
	 * locks stay; another instance, or this one started again, goes on with them.
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	public void stop(String id) {
		containerOrFail(id).stop();
	}

	/**
	 * Refuses to start when another group wrote to a ladder's topics, before any consumer
	 * joins its group: it waits for the lock tailers to catch up once (the sync barrier would
	 * hold every partition for as long) and reads the latest retry and dead-letter records.
	 */
	private void checkOwnership() {
		if (this.ownershipCheckConsumers == null) {
			return;
		}
		for (ListenerEndpoint endpoint : this.endpoints) {
			Supplier<Consumer<byte[], byte[]>> consumers = this.ownershipCheckConsumers.apply(endpoint);
			for (LadderPlan plan : this.plans.getOrDefault(endpoint.id(), List.of())) {
				LockRegistry registry = this.lockCoordinator.registryOf(plan.lockTopic());
				if (registry != null) {
					this.retryLadder.checkOwnership(plan, registry, consumers, this.ownershipCheckTimeout);
				}
			}
		}
	}

	@Override
	public synchronized void stop() {
		this.containers.values().forEach(OrderedRetryContainer::stop);
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * Whether the listeners start with the application context; off when the application runs
	 * a one-off command such as a replay.
	 */
	public void setAutoStartup(boolean autoStartup) {
		this.autoStartup = autoStartup;
	}

	@Override
	public boolean isAutoStartup() {
		return this.autoStartup;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

	/**
	 * The ladder of a consumer group on a main topic, as one of this application's listeners
	 * names it (whether or not it runs).
	 * @param group the consumer group, or {@code null} for the only group that consumes
	 * {@code mainTopic} here
	 * @throws IllegalArgumentException when no listener here consumes the topic in that group,
	 * or several groups do and none was named
	 */
	public synchronized LadderPlan ladder(@Nullable String group, String mainTopic) {
		return this.ladderPlans.ladder(this.endpoints, group, mainTopic);
	}

	private OrderedRetryContainer createContainer(ListenerEndpoint endpoint) {
		ContainerSettings settings = this.defaults.settings();
		if (endpoint.concurrency() != null) {
			settings = settings.withConcurrency(endpoint.concurrency());
		}
		TransactionalWrites tx = (this.transactions != null)
				? this.transactions.apply(endpoint.id(), settings.concurrency()) : null;
		Map<String, OrderedRetryContainer.Route> routes = new HashMap<>();
		List<LadderPlan> plans = new ArrayList<>();
		OutageSettings outage = (this.outageSettings != null) ? this.outageSettings.apply(endpoint.id()) : null;
		OutageBreaker breaker = (outage != null && outage.enabled())
				? new OutageBreaker(endpoint.id(), outage, this.classifier, this.clock) : null;
		for (String topic : endpoint.topics()) {
			LadderPlan plan = this.ladderPlans.plan(endpoint, topic);
			plans.add(plan);
			int partitions = this.retryLadder.provision(plan);
			LockRegistry registry = this.lockCoordinator.registry(topic, plan.lockTopic(), partitions, plan.ownership());
			RecordHandler handler = this.handlers.create(endpoint, topic);
			if (breaker != null) {
				handler = breaker.observing(handler, topic);
			}
			StageRouter router = new StageRouter(plan, (tx != null) ? tx.locks(registry) : registry,
					(tx != null) ? tx.publisher() : this.retryLadder, handler, this.classifier, this.clock,
					() -> UUID.randomUUID().toString(), this.dualWrite, this.faults, registry.ownership());
			router.jitterDueTimes(this.dueTimeJitter);
			if (breaker != null) {
				router.onFollower(breaker::followed);
			}
			router.observeWith(this.observer.ladder(endpoint.id(), endpoint.groupId(), topic));
			router.observeAttemptsWith(this.attemptObservations.create(endpoint, topic));
			OrderedRetryContainer.Route route = new OrderedRetryContainer.Route(router, registry);
			plan.consumedTopics().forEach((consumed) -> routes.put(consumed, route));
		}
		this.plans.put(endpoint.id(), List.copyOf(plans));
		OrderedRetryContainer container = new OrderedRetryContainer(endpoint.id(), routes, this.consumers.apply(endpoint),
				this.syncBarrier, this.userRebalanceListener, settings, this.clock, reaping(endpoint, plans, routes),
				this.observer, tx);
		if (this.rereaders != null) {
			container.parkWith(this.rereaders.apply(endpoint));
		}
		if (breaker != null) {
			container.holdOnOutage(breaker);
		}
		if (this.eventPublisher != null) {
			container.publishEvents(this.eventPublisher, this.idleEventInterval);
		}
		return container;
	}

	private OrderedRetryContainer.@Nullable Reaping reaping(ListenerEndpoint endpoint, List<LadderPlan> plans,
			Map<String, OrderedRetryContainer.Route> routes) {
		if (this.reaper == null) {
			return null;
		}
		ReaperSettings settings = this.reaper;
		return new OrderedRetryContainer.Reaping(settings.interval(), () -> {
			Admin admin = settings.admins().get();
			List<LockReaper> reapers = new ArrayList<>();
			for (LadderPlan plan : plans) {
				LockRegistry registry = routes.get(plan.mainTopic()).registry();
				reapers.add(new LockReaper(endpoint.groupId(), plan::topicOf, registry, admin, settings.grace(), this.clock,
						(lock) -> this.observer.lockReaped(endpoint.id(), plan.group(), plan.mainTopic(), lock)));
			}
			return new OrderedRetryContainer.Reapers(reapers, admin);
		});
	}

}
