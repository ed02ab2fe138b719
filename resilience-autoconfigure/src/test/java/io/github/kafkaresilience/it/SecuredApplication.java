package io.github.kafkaresilience.it;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;

/**
 * The test application behind Spring Security's defaults (form login, CSRF) with two
 * users, password {@code secret}: {@code ops} has the console's default role,
 * {@code viewer} has another; and a meter registry, for the operator actions' counter.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(TestApplication.ScriptedListener.class)
class SecuredApplication {

	@Bean
	InMemoryUserDetailsManager users() {
		return new InMemoryUserDetailsManager(
				User.withUsername("ops").password("{noop}secret").roles("KAFKA_RESILIENCE_OPERATOR").build(),
				User.withUsername("viewer").password("{noop}secret").roles("VIEWER").build());
	}

	@Bean
	SimpleMeterRegistry meterRegistry() {
		return new SimpleMeterRegistry();
	}

}
