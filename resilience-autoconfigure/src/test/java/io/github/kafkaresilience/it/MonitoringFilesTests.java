package io.github.kafkaresilience.it;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Grafana dashboard and the Prometheus alert rules in {@code monitoring/} parse,
 * query the library's meters only, and every alert says how bad it is and what happened.
 * That each meter they name is registered, with its labels, is checked where it is:
 * {@link MetersTests}, {@link LockReaperTests}, {@link OutageHoldTests}.
 */
class MonitoringFilesTests {

	@Test
	void everyQueryOfTheDashboardAndTheAlertRulesNamesAMeterOfTheLibrary() {
		List<String> expressions = MonitoringQueries.expressions();

		assertThat(expressions).hasSizeGreaterThanOrEqualTo(20)
			.allSatisfy((expression) -> assertThat(MonitoringQueries.metrics(expression)).as(expression).isNotEmpty());
	}

	@Test
	void everyAlertRuleHasASeverityASummaryAndAnExpression() {
		List<Map<String, Object>> rules = MonitoringQueries.alertRules();

		assertThat(rules).extracting((rule) -> rule.get("alert"))
			.contains("KafkaResilienceDeadLetters", "KafkaResilienceHeldKeyStuck", "KafkaResilienceSlowBarrier",
					"KafkaResilienceZombieLocksReaped", "KafkaResilienceConsumerLagGrowing")
			.doesNotHaveDuplicates();
		assertThat(rules).allSatisfy((rule) -> {
			assertThat(rule.get("expr")).as("expr of %s", rule.get("alert")).isNotNull();
			assertThat(((Map<?, ?>) rule.get("labels")).get("severity")).as("severity of %s", rule.get("alert"))
				.isIn("warning", "critical");
			assertThat(((Map<?, ?>) rule.get("annotations")).get("summary")).as("summary of %s", rule.get("alert"))
				.isNotNull();
		});
	}

}
