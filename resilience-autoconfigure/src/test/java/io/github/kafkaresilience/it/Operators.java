package io.github.kafkaresilience.it;

import java.security.Principal;

import org.springframework.boot.actuate.endpoint.SecurityContext;

/** Who calls the endpoint's actions in the broker tests that call it directly. */
final class Operators {

	/**
	 * An authenticated operator {@code ops} with the configured role: Spring Security is
	 * on the test class path, so every action needs the role.
	 */
	static final SecurityContext OPERATOR = new SecurityContext() {

		@Override
		public Principal getPrincipal() {
			return () -> "ops";
		}

		@Override
		public boolean isUserInRole(String role) {
			return "KAFKA_RESILIENCE_OPERATOR".equals(role);
		}

	};

	private Operators() {
	}

}
