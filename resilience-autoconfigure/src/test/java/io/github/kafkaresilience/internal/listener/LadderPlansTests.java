package io.github.kafkaresilience.internal.listener;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.topics.LadderTopics;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * The ladders the listeners name, without a broker: one per group and main topic, and
 * every topic in one role of one ladder.
 */
class LadderPlansTests {

	private final LadderPlans plans = plans(LadderTopics.Naming.defaults());

	@Test
	void aListenerWithoutDelaysOfItsOwnGetsTheDefaultsAndOneWithThemKeepsThem() throws Exception {
		LadderPlan byDefault = this.plans.plan(endpoint("billing", "orders", null), "orders");
		assertThat(byDefault.stages()).extracting((stage) -> stage.topic()).containsExactly("billing.orders.retry.30s");
		LadderPlan own = this.plans
			.plan(endpoint("shipping", "orders", List.of(Duration.ofSeconds(5), Duration.ofMinutes(1))), "orders");
		assertThat(own.stages()).extracting((stage) -> stage.topic())
			.containsExactly("shipping.orders.retry.5s", "shipping.orders.retry.1m");
		assertThat(own.dlqTopic()).isEqualTo("shipping.orders.dlq");
		assertThat(own.lockTopic()).isEqualTo("shipping.orders.locks");
	}

	@Test
	void twoGroupsOnOneTopicEachHaveALadderAndALookUpMustNameTheGroup() throws Exception {
		List<ListenerEndpoint> endpoints = List.of(endpoint("billing", "orders", null),
				endpoint("shipping", "orders", null));
		assertThatNoException().isThrownBy(() -> this.plans.checkTopicsAreDistinct(endpoints));
		assertThat(this.plans.ladder(endpoints, "shipping", "orders").dlqTopic()).isEqualTo("shipping.orders.dlq");
		assertThatIllegalArgumentException().isThrownBy(() -> this.plans.ladder(endpoints, null, "orders"))
			.withMessageContaining("group 'billing'")
			.withMessageContaining("group 'shipping'")
			.withMessageContaining("name the consumer group");
		assertThatIllegalArgumentException().isThrownBy(() -> this.plans.ladder(endpoints, "audit", "orders"))
			.withMessageContaining("in group 'audit'");
		assertThatIllegalArgumentException().isThrownBy(() -> this.plans.ladder(endpoints, null, "payments"))
			.withMessageContaining("consumes 'payments'")
			.withMessageContaining("[orders]");
	}

	@Test
	void aListenerThatConsumesAnotherLaddersRetryTopicIsRefusedNamingBothRoles() throws Exception {
		List<ListenerEndpoint> endpoints = List.of(endpoint("billing", "orders", null),
				endpoint("snoop", "billing.orders.retry.30s", null));
		assertThatIllegalStateException().isThrownBy(() -> this.plans.checkTopicsAreDistinct(endpoints))
			.withMessageContaining("Topic 'billing.orders.retry.30s' is both the retry topic (stage 1) of 'orders'")
			.withMessageContaining("main topic of listener 'snoop.listen'")
			.withMessageContaining("Do not consume another ladder's retry, dead-letter or lock topic");
	}

	@Test
	void templatesWithoutTheGroupGiveTwoGroupsOneLadderAndAreRefused() throws Exception {
		LadderPlans unscoped = plans(new LadderTopics.Naming("{topic}.retry.{delay}", "{topic}.dlq", "{topic}.locks"));
		List<ListenerEndpoint> endpoints = List.of(endpoint("billing", "orders", null),
				endpoint("shipping", "orders", null));
		assertThatIllegalStateException().isThrownBy(() -> unscoped.checkTopicsAreDistinct(endpoints))
			.withMessageContaining("Topic 'orders.retry.30s' is both the retry topic (stage 1) of 'orders' (listener "
					+ "'billing.listen', group 'billing')")
			.withMessageContaining("group 'shipping'")
			.withMessageContaining("Fix the templates");
	}

	private static LadderPlans plans(LadderTopics.Naming naming) {
		LadderTopics ladder = new LadderTopics(naming, Map.of(), new LadderTopics.Topics(false, (short) -1,
				Duration.ofDays(1), Duration.ofDays(1), Duration.ofMinutes(1), Duration.ofHours(1)));
		OrderedRetryContainerFactory factory = new OrderedRetryContainerFactory();
		factory.setDelays(List.of(Duration.ofSeconds(30)));
		factory.setMaxAttempts(3);
		ContainerAssembly assembly = new ContainerAssembly(factory,
				new ContainerAssembly.Engine(null, ladder, null, null, null, null, null, "test"),
				new OrderedRetryComponentFactory(), (mode) -> null, (listenerId) -> null, (endpoint, topic) -> null);
		return new LadderPlans(assembly::plan);
	}

	private static ListenerEndpoint endpoint(String group, String topic, List<Duration> delays) throws Exception {
		Method method = Object.class.getMethod("toString");
		return new ListenerEndpoint(group + ".listen", group, List.of(topic), delays, null, null, null, null,
				new Object(), method);
	}

}
