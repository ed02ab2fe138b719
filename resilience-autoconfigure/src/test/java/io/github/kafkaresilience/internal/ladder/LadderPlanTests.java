package io.github.kafkaresilience.internal.ladder;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.kafkaresilience.ladder.LadderStartupException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The topics of a group's ladder on a main topic (docs/PROTOCOL.md, "Topics").
 */
class LadderPlanTests {

	private static final List<Duration> DELAYS = List.of(Duration.ofSeconds(30), Duration.ofMinutes(5),
			Duration.ofHours(1));

	@Test
	void topicsAreNamedFromTheDefaultTemplatesAfterTheGroupAndTheTopic() {
		LadderPlan plan = defaults("orders", DELAYS, null);

		assertThat(plan.group()).isEqualTo("billing");
		assertThat(plan.mainTopic()).isEqualTo("orders");
		assertThat(plan.stages()).extracting(LadderPlan.Stage::topic)
			.containsExactly("billing.orders.retry.30s", "billing.orders.retry.5m", "billing.orders.retry.1h");
		assertThat(plan.stages()).extracting(LadderPlan.Stage::index).containsExactly(1, 2, 3);
		assertThat(plan.stages()).extracting(LadderPlan.Stage::delay).containsExactlyElementsOf(DELAYS);
		assertThat(plan.dlqTopic()).isEqualTo("billing.orders.dlq");
		assertThat(plan.lockTopic()).isEqualTo("billing.orders.locks");
		assertThat(plan.scoped()).isTrue();
	}

	@Test
	void twoGroupsOnOneTopicHaveLaddersWithoutATopicInCommon() {
		LadderPlan billing = defaults("orders", DELAYS, null);
		LadderPlan shipping = LadderPlan.of("shipping", "orders", DELAYS, null, LadderPlan.DEFAULT_RETRY_TEMPLATE,
				LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE);

		assertThat(billing.ownTopics()).doesNotContainAnyElementsOf(shipping.ownTopics());
		assertThat(billing.consumedTopics()).containsOnlyOnce("orders");
		assertThat(shipping.consumedTopics()).contains("orders");
	}

	@Test
	void topicsAreNamedFromCustomTemplates() {
		LadderPlan plan = LadderPlan.of("billing", "orders", List.of(Duration.ofMillis(500)), null,
				"retry-{delay}-{topic}-{group}", "dead-{group}-{topic}", "{topic}-{group}-locks");

		assertThat(plan.stage(1).topic()).isEqualTo("retry-500ms-orders-billing");
		assertThat(plan.dlqTopic()).isEqualTo("dead-billing-orders");
		assertThat(plan.lockTopic()).isEqualTo("orders-billing-locks");
		assertThat(plan.scoped()).isTrue();
	}

	@Test
	void templatesWithoutTheGroupGiveAnUnscopedLadderThatAcceptsRecordsWithoutAnOwner() {
		LadderPlan plan = LadderPlan.of("billing", "orders", DELAYS, null, LadderPlan.UNSCOPED_RETRY_TEMPLATE,
				LadderPlan.UNSCOPED_DLQ_TEMPLATE, LadderPlan.UNSCOPED_LOCK_TEMPLATE);

		assertThat(plan.ownTopics()).containsExactly("orders.retry.30s", "orders.retry.5m", "orders.retry.1h",
				"orders.dlq", "orders.locks");
		assertThat(plan.scoped()).isFalse();
		assertThat(plan.ownership().isRequired()).isFalse();
		assertThat(defaults("orders", DELAYS, null).ownership().isRequired()).isTrue();
	}

	@Test
	void aGroupThatCannotBePartOfATopicNameIsRefusedNamingTheGroupAndTheTemplates() {
		assertThatExceptionOfType(LadderStartupException.class)
			.isThrownBy(
					() -> LadderPlan.of("billing service/eu", "orders", DELAYS, null, LadderPlan.DEFAULT_RETRY_TEMPLATE,
							LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE))
			.withMessageContaining("Consumer group 'billing service/eu'")
			.withMessageContaining("'orders'")
			.withMessageContaining("kafka.resilience.topics.retry-template, dlq-template and lock-template")
			.satisfies((refusal) -> {
				assertThat(refusal.problem()).contains(
						"Consumer group 'billing service/eu' (topic 'orders') cannot be part " + "of a topic name");
				assertThat(refusal.action()).startsWith("Give the listener a group id made of those characters")
					.contains("billing.{topic}.retry.{delay}");
			});
	}

	@Test
	void aGroupWithIllegalCharactersIsAcceptedWhenNoTemplateNamesTheGroup() {
		LadderPlan plan = LadderPlan.of("billing service/eu", "orders", DELAYS, null,
				"billing-eu.{topic}.retry.{delay}", "billing-eu.{topic}.dlq", "billing-eu.{topic}.locks");

		assertThat(plan.dlqTopic()).isEqualTo("billing-eu.orders.dlq");
		assertThat(plan.scoped()).isFalse();
	}

	@Test
	void aNameLongerThanKafkaAllowsIsRefusedNamingTheTemplate() {
		String group = "g".repeat(240);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LadderPlan.of(group, "orders", DELAYS, null, LadderPlan.DEFAULT_RETRY_TEMPLATE,
					LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE))
			.withMessageContaining("not a legal topic name")
			.withMessageContaining("kafka.resilience.topics.retry-template");
	}

	@Test
	void stageOfTellsTheStageOfATopic() {
		LadderPlan plan = defaults("orders", DELAYS, null);

		assertThat(plan.stageOf("orders")).isZero();
		assertThat(plan.stageOf("billing.orders.retry.30s")).isEqualTo(1);
		assertThat(plan.stageOf("billing.orders.retry.5m")).isEqualTo(2);
		assertThat(plan.stageOf("billing.orders.retry.1h")).isEqualTo(3);
		assertThat(plan.stageOf("orders.retry.30s")).as("another ladder's stage").isEqualTo(-1);
		assertThat(plan.stageOf("billing.orders.dlq")).isEqualTo(-1);
		assertThat(plan.stageOf("billing.orders.locks")).isEqualTo(-1);
		assertThat(plan.stageOf("payments")).isEqualTo(-1);
	}

	@Test
	void stageAndLastStageAreCountedFromOne() {
		LadderPlan plan = defaults("orders", DELAYS, null);

		assertThat(plan.stage(1).delay()).isEqualTo(Duration.ofSeconds(30));
		assertThat(plan.stage(3).topic()).isEqualTo("billing.orders.retry.1h");
		assertThat(plan.lastStage()).isEqualTo(3);
	}

	@Test
	void theListenerConsumesTheMainTopicAndEveryStage() {
		LadderPlan plan = defaults("orders", DELAYS, null);

		assertThat(plan.consumedTopics()).containsExactly("orders", "billing.orders.retry.30s",
				"billing.orders.retry.5m", "billing.orders.retry.1h");
		assertThat(plan.ownTopics()).containsExactly("billing.orders.retry.30s", "billing.orders.retry.5m",
				"billing.orders.retry.1h", "billing.orders.dlq", "billing.orders.locks");
	}

	@Test
	void maxAttemptsDefaultsToOneMoreThanTheNumberOfStages() {
		assertThat(defaults("orders", DELAYS, null).maxAttempts()).isEqualTo(4);
		assertThat(defaults("orders", List.of(Duration.ofSeconds(1)), null).maxAttempts()).isEqualTo(2);
		assertThat(defaults("orders", List.of(), null).maxAttempts()).isEqualTo(1);
	}

	@Test
	void maxAttemptsCanExceedTheNumberOfStages() {
		assertThat(defaults("orders", DELAYS, 10).maxAttempts()).isEqualTo(10);
		assertThat(defaults("orders", DELAYS, 1).maxAttempts()).isEqualTo(1);
	}

	@Test
	void duplicateDelaysAreRejectedWithAMessageNamingTheTopic() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> defaults("orders", List.of(Duration.ofSeconds(30), Duration.ofSeconds(30)), null))
			.withMessageContaining("'orders'")
			.withMessageContaining("'billing.orders.retry.30s'")
			.withMessageContaining("distinct");
	}

	@Test
	void delaysThatGiveTheSameTopicNameAreRejected() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> defaults("orders", List.of(Duration.ofSeconds(60), Duration.ofMinutes(1)), null))
			.withMessageContaining("'orders'")
			.withMessageContaining("'billing.orders.retry.1m'");
	}

	@Test
	void maxAttemptsBelowOneIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> defaults("orders", DELAYS, 0))
			.withMessageContaining("max-attempts")
			.withMessageContaining("'orders'");
		assertThatIllegalArgumentException().isThrownBy(() -> defaults("orders", DELAYS, -3))
			.withMessageContaining("-3");
	}

	@Test
	void severalAttemptsWithoutDelaysAreRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> defaults("orders", List.of(), 3))
			.withMessageContaining("'orders'")
			.withMessageContaining("kafka.resilience.retry.delays");
	}

	@Test
	void aZeroDelayIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> defaults("orders", List.of(Duration.ZERO), null));
	}

	@Test
	void theStagesCannotBeChangedAfterwards() {
		LadderPlan plan = defaults("orders", DELAYS, null);

		assertThat(plan.stages()).isUnmodifiable();
	}

	private static LadderPlan defaults(String topic, List<Duration> delays, Integer maxAttempts) {
		return LadderPlan.of("billing", topic, delays, maxAttempts, LadderPlan.DEFAULT_RETRY_TEMPLATE,
				LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE);
	}

}
