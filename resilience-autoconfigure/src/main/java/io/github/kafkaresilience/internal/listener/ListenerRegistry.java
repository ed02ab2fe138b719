package io.github.kafkaresilience.internal.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;

import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.topics.LadderTopics;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;
import io.github.kafkaresilience.listener.OrderedRetryListenerRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationEventPublisherAware;
import org.springframework.context.SmartLifecycle;
import org.springframework.kafka.annotation.KafkaListenerAnnotationBeanPostProcessor;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;
import org.springframework.kafka.support.converter.RecordMessageConverter;

/**
 * Holds the {@code @OrderedRetryListener} endpoints found in the context and runs their
 * containers: each is created by its {@link OrderedRetryContainerFactory} (the one its
 * {@code containerFactory} names, or the default one), which provisions the ladders and
 * starts their lock tailers; the registry starts, pauses, resumes and stops them. The
 * API, {@link OrderedRetryListenerRegistry}, is what an application sees of it.
 */
public class ListenerRegistry implements OrderedRetryListenerRegistry, SmartLifecycle, ApplicationEventPublisherAware {

	/** Phase of the containers: late to start, early to stop. */
	public static final int PHASE = Integer.MAX_VALUE - 100;

	private final List<ListenerEndpoint> endpoints = new ArrayList<>();

	private final Map<String, RetryContainer> containers = new LinkedHashMap<>();

	private final Map<String, List<LadderPlan>> plans = new LinkedHashMap<>();

	private final OrderedRetryContainerFactory defaultFactory;

	private final Function<String, OrderedRetryContainerFactory> factories;

	private final ContainerAssemblies assemblies;

	private final Map<String, OrderedRetryContainerFactory> resolvedFactories = new HashMap<>();

	private final LadderPlans ladderPlans;

	private volatile boolean running;

	private volatile boolean autoStartup = true;

	private final List<Consumer<RetryContainer>> containerListeners = new ArrayList<>();

	private @Nullable Duration ownershipCheckTimeout;

	private @Nullable ApplicationEventPublisher eventPublisher;

	/**
	 * @param defaultFactory creates the containers of listeners that name no factory
	 * @param factories the factory of a given bean name, for listeners that name one;
	 * fails when there is none
	 * @param assemblies what each factory's containers are assembled from
	 */
	public ListenerRegistry(OrderedRetryContainerFactory defaultFactory,
			Function<String, OrderedRetryContainerFactory> factories, ContainerAssemblies assemblies) {
		this.defaultFactory = defaultFactory;
		this.factories = factories;
		this.assemblies = assemblies;
		this.ladderPlans = new LadderPlans((endpoint, topic) -> assembly(endpoint).plan(endpoint, topic));
	}

	/**
	 * Checks at the first start that no other consumer group wrote to the listeners'
	 * ladder topics; see {@link LadderTopics#checkOwnership}. Without it, records of
	 * other groups are only skipped and counted as they are read.
	 * @param timeout how long the check may wait for a lock tailer to catch up, and for
	 * the latest records
	 */
	public synchronized void checkOwnershipAtStartup(Duration timeout) {
		this.ownershipCheckTimeout = timeout;
	}

	/**
	 * The container factory of a registered listener.
	 * @throws IllegalStateException when it names a factory that is not a bean
	 */
	public synchronized OrderedRetryContainerFactory factory(ListenerEndpoint endpoint) {
		String name = endpoint.containerFactory();
		if (name == null) {
			return this.defaultFactory;
		}
		return this.resolvedFactories.computeIfAbsent(name, (beanName) -> {
			try {
				return this.factories.apply(beanName);
			}
			catch (RuntimeException ex) {
				throw new IllegalStateException("@OrderedRetryListener '" + endpoint.id() + "' (" + endpoint.method()
						+ ") names containerFactory '" + beanName + "', which is no OrderedRetryContainerFactory bean: "
						+ ex.getMessage(), ex);
			}
		});
	}

	/**
	 * What the containers of a registered listener are assembled from: its factory's.
	 * @throws IllegalStateException when it names a factory that is not a bean, or its
	 * factory was not configured
	 */
	public ContainerAssembly assembly(ListenerEndpoint endpoint) {
		return this.assemblies.of(factory(endpoint));
	}

	/**
	 * Registers an endpoint; called while the context starts. Listeners of different
	 * consumer groups may consume one topic: each group has a ladder of its own.
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
				throw new IllegalStateException("Two @OrderedRetryListener methods have the id '" + endpoint.id()
						+ "' (" + other.method() + " and " + endpoint.method() + "); give each a distinct id");
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

	/**
	 * Calls {@code listener} with every container created so far and with each one
	 * created later.
	 */
	public synchronized void onContainer(Consumer<RetryContainer> listener) {
		this.containerListeners.add(listener);
		this.containers.values().forEach(listener);
	}

	/**
	 * The ladders of a listener, one per topic it consumes; empty before the listener
	 * started.
	 */
	public synchronized List<LadderPlan> plans(String listenerId) {
		return this.plans.getOrDefault(listenerId, List.of());
	}

	public synchronized @Nullable RetryContainer container(String id) {
		return this.containers.get(id);
	}

	@Override
	public void setApplicationEventPublisher(ApplicationEventPublisher publisher) {
		this.eventPublisher = publisher;
	}

	/**
	 * Pauses a listener: it takes no new records, its running records finish and its
	 * waiting ones wait; locks stay, so every key keeps its order. It stays in its
	 * consumer group.
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	@Override
	public void pause(String id) {
		containerOrFail(id).pause();
	}

	/**
	 * Resumes a listener paused with {@link #pause(String)}.
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	@Override
	public void resume(String id) {
		containerOrFail(id).resume();
	}

	/**
	 * Whether a listener was paused with {@link #pause(String)} and not resumed since.
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	@Override
	public boolean isPauseRequested(String id) {
		return containerOrFail(id).isPauseRequested();
	}

	/**
	 * Whether a listener's container runs.
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	@Override
	public boolean isRunning(String id) {
		return containerOrFail(id).isRunning();
	}

	private RetryContainer containerOrFail(String id) {
		RetryContainer container = container(id);
		if (container == null) {
			throw new IllegalArgumentException("No @OrderedRetryListener has the id '" + id + "'" + (this.running
					? "; listeners: " + this.containers.keySet() : " (the listeners have not started)"));
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
				RetryContainer container = assembly(endpoint).createContainer(endpoint, this.eventPublisher);
				this.plans.put(endpoint.id(),
						endpoint.topics().stream().map((topic) -> assembly(endpoint).plan(endpoint, topic)).toList());
				this.containers.put(endpoint.id(), container);
				this.containerListeners.forEach((listener) -> listener.accept(container));
			}
			checkOwnership();
		}
		for (ListenerEndpoint endpoint : this.endpoints) {
			if (endpoint.autoStartup()) {
				Objects.requireNonNull(this.containers.get(endpoint.id()), endpoint.id()).start();
			}
		}
		this.running = true;
	}

	/**
	 * Starts a listener, typically one whose {@code autoStartup} is false, once the
	 * registry has started (it provisions the ladders and starts the lock tailers).
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	@Override
	public void start(String id) {
		containerOrFail(id).start();
	}

	/**
	 * Stops a listener: it finishes its running records, commits and leaves its group.
	 * Its locks stay; another instance, or this one started again, goes on with them.
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	@Override
	public void stop(String id) {
		containerOrFail(id).stop();
	}

	/**
	 * Refuses to start when another group wrote to a ladder's topics, before any consumer
	 * joins its group: it waits for the lock tailers to catch up once (the sync barrier
	 * would hold every partition for as long) and reads the latest retry and dead-letter
	 * records.
	 */
	private void checkOwnership() {
		if (this.ownershipCheckTimeout == null) {
			return;
		}
		for (ListenerEndpoint endpoint : this.endpoints) {
			assembly(endpoint).checkOwnership(endpoint, this.plans.getOrDefault(endpoint.id(), List.of()),
					this.ownershipCheckTimeout);
		}
	}

	@Override
	public synchronized void stop() {
		this.containers.values().forEach(RetryContainer::stop);
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * Whether the listeners start with the application context; off when the application
	 * runs a one-off command such as a replay.
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
	 * The ladder of a consumer group on a main topic, as one of this application's
	 * listeners names it (whether or not it runs).
	 * @param group the consumer group, or {@code null} for the only group that consumes
	 * {@code mainTopic} here
	 * @throws IllegalArgumentException when no listener here consumes the topic in that
	 * group, or several groups do and none was named
	 */
	public synchronized LadderPlan ladder(@Nullable String group, String mainTopic) {
		return this.ladderPlans.ladder(this.endpoints, group, mainTopic);
	}

}
