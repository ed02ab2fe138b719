package io.github.kafkaresilience.internal.listener;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.internal.ladder.FaultInjection;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.ladder.StageRouter;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory.ReaperSettings;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockReaper;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.outage.OutageBreaker;
import io.github.kafkaresilience.internal.outage.OutageSettings;
import io.github.kafkaresilience.internal.topics.LadderTopics;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;
import org.apache.kafka.clients.admin.Admin;

/**
 * Creates the parts a {@link ContainerAssembly} assembles the containers of an
 * {@link OrderedRetryContainerFactory} from: for each ladder of a listener its
 * provisioned topics, its lock registry and its router, and for the listener its outage
 * breaker and the reaping of its zombie locks. Override a method to provide another
 * implementation or to change what it creates; in a Spring Boot application, a bean of
 * this type is used for every factory the configurer configures. spring-kafka's
 * {@code RetryTopicComponentFactory} does the same for its retry topics.
 *
 * @since 0.1.0
 */
public class OrderedRetryComponentFactory {

	/**
	 * The faults to inject into the moves and the transactions of every listener's
	 * ladders: none in production. A test hook: tests give the factory a component
	 * factory that returns theirs; the auto-configuration looks up no bean of this type.
	 * @return {@link FaultInjection#NONE} here
	 */
	public FaultInjection faultInjection() {
		return FaultInjection.NONE;
	}

	/**
	 * Creates or checks the topics of a ladder, as its listener's container is created.
	 * @param ladderTopics names and provisions the ladders' topics
	 * @param plan the ladder
	 * @return what provisioning found out about its main topic
	 * @see LadderTopics#provision(LadderPlan)
	 */
	public LadderTopics.Provisioned provision(LadderTopics ladderTopics, LadderPlan plan) {
		return ladderTopics.provision(plan);
	}

	/**
	 * The lock registry of a ladder, its tailer started on first use.
	 * @param lockCoordinator the lock registries of this instance
	 * @param plan the ladder
	 * @param provisioned what provisioning found out about its main topic
	 * @return the started registry
	 * @see LockCoordinator#registry
	 */
	public LockRegistry lockRegistry(LockCoordinator lockCoordinator, LadderPlan plan,
			LadderTopics.Provisioned provisioned) {
		return lockCoordinator.registry(plan.mainTopic(), plan.lockTopic(), provisioned.partitions(), plan.ownership());
	}

	/**
	 * The outage breaker of a listener whose outage mode is enabled; it observes the
	 * listener's handlers, and the container holds the listener's records while it is
	 * open.
	 * @param endpoint the listener
	 * @param settings its outage mode
	 * @param classifier tells permanent failures from transient ones
	 * @param clock the clock of the container factory
	 * @return the breaker, closed
	 */
	public OutageBreaker outageBreaker(ListenerEndpoint endpoint, OutageSettings settings, FailureClassifier classifier,
			Clock clock) {
		return new OutageBreaker(endpoint.id(), settings, classifier, clock);
	}

	/**
	 * The router of a ladder of a listener.
	 * @param endpoint the listener
	 * @param router the router as the container factory configured it: the ladder's locks
	 * and publisher in the factory's dual-write mode, the listener's handler, and the
	 * factory's classifier, clock, observers, jitter and faults; an override may change
	 * parts before it builds it
	 * @return the router, built
	 */
	public StageRouter stageRouter(ListenerEndpoint endpoint, StageRouter.Builder router) {
		return router.build();
	}

	/**
	 * How a listener's zombie locks are reaped: every {@code interval} of the settings, a
	 * {@link LockReaper} per ladder, sharing one admin client.
	 * @param endpoint the listener
	 * @param routes the route of each of its main topics
	 * @param settings how zombie locks are reaped
	 * @param clock the clock of the container factory
	 * @param observer hears of each reaped lock
	 * @return the reaping
	 */
	public RetryContainer.Reaping reaping(ListenerEndpoint endpoint, List<RetryContainer.Route> routes,
			ReaperSettings settings, Clock clock, ResilienceObserver observer) {
		List<RetryContainer.Route> ladders = List.copyOf(routes);
		return new RetryContainer.Reaping(settings.interval(), () -> {
			Admin admin = settings.admins().get();
			List<LockReaper> reapers = new ArrayList<>();
			for (RetryContainer.Route route : ladders) {
				LadderPlan plan = route.router().plan();
				reapers.add(new LockReaper(endpoint.groupId(), plan::topicOf, route.registry(), admin, settings.grace(),
						clock, (lock) -> observer.lockReaped(endpoint.id(), plan.group(), plan.mainTopic(), lock.key(),
								lock.id())));
			}
			return new RetryContainer.Reapers(reapers, admin);
		});
	}

}
