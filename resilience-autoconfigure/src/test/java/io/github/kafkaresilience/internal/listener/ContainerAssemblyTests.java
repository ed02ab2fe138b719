package io.github.kafkaresilience.internal.listener;

import java.lang.reflect.Method;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.internal.container.DualWriteStrategy;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.internal.container.SyncBarrier;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;
import io.github.kafkaresilience.internal.ladder.AttemptObservation;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.ladder.LadderPublisher;
import io.github.kafkaresilience.internal.ladder.StageRouter;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.outage.OutageBreaker;
import io.github.kafkaresilience.internal.outage.OutageSettings;
import io.github.kafkaresilience.internal.support.ConsumerClients;
import io.github.kafkaresilience.internal.support.ProducerClients;
import io.github.kafkaresilience.internal.topics.LadderTopics;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;

/**
 * The container factory without a broker: it asks its component factory for every part of
 * a container, and assembles the container from what it gets.
 */
class ContainerAssemblyTests {

	/** Kafka's default {@code max.message.bytes}: the publisher needs nothing raised. */
	private static final int DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

	private final List<String> asked = new ArrayList<>();

	private final LockRegistry registry = mock(LockRegistry.class);

	private final RetryContainer.Reaping reaping = new RetryContainer.Reaping(Duration.ofMinutes(5), () -> {
		throw new IllegalStateException("not reaped in this test");
	});

	private final List<StageRouter> routers = new ArrayList<>();

	private OutageBreaker breaker;

	/**
	 * Creates the breaker and the routers as the default does, stands in for the parts
	 * that need a broker, and notes what it is asked for.
	 */
	private final OrderedRetryComponentFactory components = new OrderedRetryComponentFactory() {

		@Override
		public LadderTopics.Provisioned provision(LadderTopics ladderTopics, LadderPlan plan) {
			ContainerAssemblyTests.this.asked.add("provision " + plan.mainTopic());
			return new LadderTopics.Provisioned(3, DEFAULT_MAX_MESSAGE_BYTES);
		}

		@Override
		public LockRegistry lockRegistry(LockCoordinator lockCoordinator, LadderPlan plan,
				LadderTopics.Provisioned provisioned) {
			ContainerAssemblyTests.this.asked
				.add("lock registry " + plan.lockTopic() + " of " + provisioned.partitions() + " partitions");
			given(ContainerAssemblyTests.this.registry.ownership()).willReturn(plan.ownership());
			return ContainerAssemblyTests.this.registry;
		}

		@Override
		public OutageBreaker outageBreaker(ListenerEndpoint endpoint, OutageSettings settings,
				FailureClassifier classifier, Clock clock) {
			ContainerAssemblyTests.this.asked.add("outage breaker " + endpoint.id());
			ContainerAssemblyTests.this.breaker = super.outageBreaker(endpoint, settings, classifier, clock);
			return ContainerAssemblyTests.this.breaker;
		}

		@Override
		public StageRouter stageRouter(ListenerEndpoint endpoint, StageRouter.Builder router) {
			StageRouter built = super.stageRouter(endpoint, router);
			ContainerAssemblyTests.this.asked.add("stage router " + built.plan().mainTopic());
			ContainerAssemblyTests.this.routers.add(built);
			return built;
		}

		@Override
		public RetryContainer.Reaping reaping(ListenerEndpoint endpoint, List<RetryContainer.Route> routes,
				OrderedRetryContainerFactory.ReaperSettings settings, Clock clock, ResilienceObserver observer) {
			ContainerAssemblyTests.this.asked.add("reaping " + endpoint.id() + " of "
					+ routes.stream().map((route) -> route.router().plan().mainTopic()).toList());
			assertThat(routes).extracting(RetryContainer.Route::router)
				.containsExactlyElementsOf(ContainerAssemblyTests.this.routers);
			return ContainerAssemblyTests.this.reaping;
		}

	};

	@Test
	void createContainerAsksTheComponentFactoryForEveryPartAndAssemblesTheContainerFromThem() throws Exception {
		OrderedRetryContainerFactory factory = factory();
		factory.setReaper(
				new OrderedRetryContainerFactory.ReaperSettings(Duration.ofMinutes(5), Duration.ofMinutes(10), () -> {
					throw new IllegalStateException("not reaped in this test");
				}));
		RetryContainer container = assembly(factory, (listenerId) -> OutageSettings.DEFAULTS)
			.createContainer(endpoint("orders", "payments"), null);
		assertThat(this.asked).containsExactly("outage breaker billing.listen", "provision orders",
				"lock registry billing.orders.locks of 3 partitions", "stage router orders", "provision payments",
				"lock registry billing.payments.locks of 3 partitions", "stage router payments",
				"reaping billing.listen of [orders, payments]");
		assertThat(container.id()).isEqualTo("billing.listen");
		assertThat(container.topics()).contains("orders", "billing.orders.retry.30s", "payments",
				"billing.payments.retry.30s");
		assertThat(container.outageBreaker()).isSameAs(this.breaker);
		verify(this.registry).addListener(any());
	}

	@Test
	void withoutOutageModeOrReaperTheComponentFactoryIsNotAskedForThem() throws Exception {
		OrderedRetryContainerFactory factory = factory();
		factory.setReaper(null);
		RetryContainer container = assembly(factory, (listenerId) -> OutageSettings.DISABLED)
			.createContainer(endpoint("orders"), null);
		assertThat(this.asked).containsExactly("provision orders", "lock registry billing.orders.locks of 3 partitions",
				"stage router orders");
		assertThat(container.outageBreaker()).isNull();
	}

	private OrderedRetryContainerFactory factory() {
		OrderedRetryContainerFactory factory = new OrderedRetryContainerFactory();
		factory.setContainerSettings(new ContainerSettings(1, 10, Duration.ofMillis(100), Duration.ofSeconds(1),
				Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ofMinutes(1), false));
		factory.setDelays(List.of(Duration.ofSeconds(30)));
		factory.setDualWrite(DualWrite.COMPENSATE);
		return factory;
	}

	private ContainerAssembly assembly(OrderedRetryContainerFactory factory, Function<String, OutageSettings> outage) {
		LadderTopics ladderTopics = new LadderTopics(LadderTopics.Naming.defaults(), Map.of(), new LadderTopics.Topics(
				false, (short) -1, Duration.ofDays(1), Duration.ofDays(1), Duration.ofMinutes(1), Duration.ofHours(1)));
		LadderPublisher publisher = new LadderPublisher(ProducerClients.of(Map.of()), "test", Duration.ofSeconds(1));
		RecordHandlerFactory handlers = (endpoint, mainTopic) -> (record) -> HandlerResult.success();
		ContainerAssembly.Engine engine = new ContainerAssembly.Engine(null, ladderTopics, publisher, new SyncBarrier(),
				handlers, ConsumerClients.of(Map.of()), ProducerClients.of(Map.of()), "test");
		return new ContainerAssembly(factory, engine, this.components,
				(mode) -> DualWriteStrategy.compensate(publisher), outage,
				(endpoint, mainTopic) -> AttemptObservation.NONE);
	}

	private static ListenerEndpoint endpoint(String... topics) throws Exception {
		Method method = Object.class.getMethod("toString");
		return new ListenerEndpoint("billing.listen", "billing", List.of(topics), null, null, null, null, null,
				new Object(), method);
	}

}
