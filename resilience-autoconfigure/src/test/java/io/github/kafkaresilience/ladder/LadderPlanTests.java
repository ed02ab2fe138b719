package io.github.kafkaresilience.ladder;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The topics of a main topic's ladder (PROTOCOL §2).
 */
class LadderPlanTests {

	private static final List<Duration> DELAYS = List.of(Duration.ofSeconds(30), Duration.ofMinutes(5), Duration.ofHours(1));

	@Test
	void topicsAreNamedFromTheDefaultTemplates() {
		LadderPlan plan = defaults("orders", DELAYS, null);

		assertThat(plan.mainTopic()).isEqualTo("orders");
		assertThat(plan.stages()).extracting(LadderPlan.Stage::topic)
			.containsExactly("orders.retry.30s", "orders.retry.5m", "orders.retry.1h");
		assertThat(plan.stages()).extracting(LadderPlan.Stage::index).containsExactly(1, 2, 3);
		assertThat(plan.stages()).extracting(LadderPlan.Stage::delay).containsExactlyElementsOf(DELAYS);
		assertThat(plan.dlqTopic()).isEqualTo("orders.dlq");
		assertThat(plan.lockTopic()).isEqualTo("orders.locks");
	}

	@Test
	void topicsAreNamedFromCustomTemplates() {
		LadderPlan plan = LadderPlan.of("orders", List.of(Duration.ofMillis(500)), null, "retry-{delay}-{topic}",
				"dead-{topic}", "{topic}-locks");

		assertThat(plan.stage(1).topic()).isEqualTo("retry-500ms-orders");
		assertThat(plan.dlqTopic()).isEqualTo("dead-orders");
		assertThat(plan.lockTopic()).isEqualTo("orders-locks");
	}

	@Test
	void stageOfTellsTheStageOfATopic() {
		LadderPlan plan = defaults("orders", DELAYS, null);

		assertThat(plan.stageOf("orders")).isZero();
		assertThat(plan.stageOf("orders.retry.30s")).isEqualTo(1);
		assertThat(plan.stageOf("orders.retry.5m")).isEqualTo(2);
		assertThat(plan.stageOf("orders.retry.1h")).isEqualTo(3);
		assertThat(plan.stageOf("orders.dlq")).isEqualTo(-1);
		assertThat(plan.stageOf("orders.locks")).isEqualTo(-1);
		assertThat(plan.stageOf("payments")).isEqualTo(-1);
	}

	@Test
	void stageAndLastStageAreCountedFromOne() {
		LadderPlan plan = defaults("orders", DELAYS, null);

		assertThat(plan.stage(1).delay()).isEqualTo(Duration.ofSeconds(30));
		assertThat(plan.stage(3).topic()).isEqualTo("orders.retry.1h");
		assertThat(plan.lastStage()).isEqualTo(3);
	}

	@Test
	void theListenerConsumesTheMainTopicAndEveryStage() {
		LadderPlan plan = defaults("orders", DELAYS, null);

		assertThat(plan.consumedTopics()).containsExactly("orders", "orders.retry.30s", "orders.retry.5m",
				"orders.retry.1h");
		assertThat(plan.ownTopics()).containsExactly("orders.retry.30s", "orders.retry.5m", "orders.retry.1h",
				"orders.dlq", "orders.locks");
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
			.withMessageContaining("'orders.retry.30s'")
			.withMessageContaining("distinct");
	}

	@Test
	void delaysThatGiveTheSameTopicNameAreRejected() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> defaults("orders", List.of(Duration.ofSeconds(60), Duration.ofMinutes(1)), null))
			.withMessageContaining("'orders'")
			.withMessageContaining("'orders.retry.1m'");
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
		return LadderPlan.of(topic, delays, maxAttempts, LadderPlan.DEFAULT_RETRY_TEMPLATE,
				LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE);
	}

}
