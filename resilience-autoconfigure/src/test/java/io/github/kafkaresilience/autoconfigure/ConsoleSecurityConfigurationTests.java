package io.github.kafkaresilience.autoconfigure;

import java.security.Principal;
import java.util.List;

import io.github.kafkaresilience.internal.actuate.KafkaResilienceEndpoint;
import io.github.kafkaresilience.internal.actuate.OperatorActions;
import io.github.kafkaresilience.internal.support.StartupFailures;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How the endpoint's actions are secured, without a broker: with Spring Security they
 * need the role; without it, enabling them fails startup, with Boot's description and
 * action, unless the application says that anyone may take them. And the console's
 * reading settings bind with their documented defaults.
 */
class ConsoleSecurityConfigurationTests {

	private static final String EXPOSED = "management.endpoints.web.exposure.include=kafkaresilience";

	private static final String ACTIONS = "kafka.resilience.console.actions-enabled=true";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, OrderedRetryAutoConfiguration.class))
		.withPropertyValues("spring.kafka.bootstrap-servers=localhost:1", EXPOSED);

	private final ApplicationContextRunner withoutSpringSecurity = this.runner
		.withClassLoader(new FilteredClassLoader("org.springframework.security"));

	@Test
	void withSpringSecurityAnActionNeedsTheRole() {
		this.runner.withPropertyValues(ACTIONS, "kafka.resilience.console.role=OPS").run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(KafkaResilienceEndpoint.class);
			OperatorActions actions = context.getBean(OperatorActions.class);
			assertThat(actions.isEnabled()).isTrue();
			assertThat(actions.isOperator(user("OPS"))).isTrue();
			assertThat(actions.isOperator(user("VIEWER"))).isFalse();
		});
	}

	@Test
	void withoutSpringSecurityEnabledActionsFailStartupNamingThePropertyThatAllowsThem() {
		this.withoutSpringSecurity.withPropertyValues(ACTIONS).run((context) -> {
			assertThat(context).hasFailed();
			FailureAnalysis analysis = StartupFailures.analysis(context.getStartupFailure());
			assertThat(analysis).isNotNull();
			assertThat(analysis.getCause()).isInstanceOf(AnonymousActionsException.class);
			assertThat(analysis.getDescription()).contains("kafka.resilience.console.actions-enabled is true",
					"Spring Security is not on the class path", "open to anyone");
			assertThat(analysis.getAction()).contains("spring-boot-starter-security",
					"kafka.resilience.console.actions-enabled=false",
					"kafka.resilience.console.allow-anonymous-actions=true", "docs/SECURITY.md");
		});
	}

	@Test
	void withoutSpringSecurityActionsNeedTheExplicitPropertyAndThenCheckNoRole() {
		this.withoutSpringSecurity.withPropertyValues(ACTIONS, "kafka.resilience.console.allow-anonymous-actions=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				OperatorActions actions = context.getBean(OperatorActions.class);
				assertThat(actions.isEnabled()).isTrue();
				assertThat(actions.isOperator(user("KAFKA_RESILIENCE_OPERATOR"))).as("no roles without Spring Security")
					.isFalse();
			});
	}

	@Test
	void withoutSpringSecurityAReadOnlyEndpointStarts() {
		this.withoutSpringSecurity.run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(KafkaResilienceEndpoint.class);
			assertThat(context.getBean(OperatorActions.class).isEnabled()).isFalse();
		});
	}

	@Test
	void theReadingSettingsBindWithTheirDefaults() {
		this.runner.run((context) -> {
			ConsoleProperties console = context.getBean(ResilienceProperties.class).getConsole();
			assertThat(console.getScanLimit()).isEqualTo(10_000);
			assertThat(console.getShowValues()).isEqualTo(ShowValues.WHEN_AUTHORIZED);
			assertThat(console.getMaskedHeaders()).containsExactly("authorization", "cookie", "set-cookie",
					"proxy-authorization", "*token*", "*secret*", "*password*", "*api-key*");
			assertThat(console.isAllowAnonymousActions()).isFalse();
		});
		this.runner
			.withPropertyValues("kafka.resilience.console.scan-limit=500", "kafka.resilience.console.show-values=never",
					"kafka.resilience.console.masked-headers=x-signature")
			.run((context) -> {
				ConsoleProperties console = context.getBean(ResilienceProperties.class).getConsole();
				assertThat(console.getScanLimit()).isEqualTo(500);
				assertThat(console.getShowValues()).isEqualTo(ShowValues.NEVER);
				assertThat(console.getMaskedHeaders()).isEqualTo(List.of("x-signature"));
			});
	}

	@Test
	void theAnalyzerLeavesOtherFailuresToOtherAnalyzers() {
		assertThat(new AnonymousActionsFailureAnalyzer().analyze(new IllegalStateException("something else"))).isNull();
	}

	private static SecurityContext user(String role) {
		return new SecurityContext() {

			@Override
			public Principal getPrincipal() {
				return () -> "someone";
			}

			@Override
			public boolean isUserInRole(String asked) {
				return role.equals(asked);
			}

		};
	}

}
