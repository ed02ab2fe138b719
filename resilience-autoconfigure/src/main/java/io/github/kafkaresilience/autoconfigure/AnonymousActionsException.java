package io.github.kafkaresilience.autoconfigure;

/**
 * {@code kafka.resilience.console.actions-enabled=true} without Spring Security on the
 * class path and without {@code kafka.resilience.console.allow-anonymous-actions=true}:
 * nothing would tell who asks for an action, so anyone who reaches the endpoint could
 * take one. Says what is wrong and what to do, which
 * {@link AnonymousActionsFailureAnalyzer} shows as the description and action of the
 * failed startup; the message holds both.
 */
class AnonymousActionsException extends IllegalStateException {

	private static final String PROBLEM = "kafka.resilience.console.actions-enabled is true, but Spring Security is "
			+ "not on the class path: the endpoint's actions (retry now, dead-letter now, pause, resume, a replay that "
			+ "sends) would be open to anyone who reaches it, and audited as 'anonymous'.";

	private static final String ACTION = "Add Spring Security (spring-boot-starter-security) and give operators the "
			+ "role kafka.resilience.console.role; or set kafka.resilience.console.actions-enabled=false; or, if "
			+ "something in front of the application already decides who reaches the endpoint, say so with "
			+ "kafka.resilience.console.allow-anonymous-actions=true (see docs/SECURITY.md, 'The console and the "
			+ "endpoint's actions').";

	AnonymousActionsException() {
		super(PROBLEM + " " + ACTION);
	}

	/** What is wrong. */
	String problem() {
		return PROBLEM;
	}

	/** What to do about it. */
	String action() {
		return ACTION;
	}

}
