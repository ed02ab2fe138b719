package io.github.kafkaresilience.autoconfigure;

/**
 * {@code kafka.resilience.consumer.virtual-threads=true} on a Java runtime without
 * virtual threads (before 21). Says what is wrong and what to do, which
 * {@link VirtualThreadsFailureAnalyzer} shows as the description and action of the failed
 * startup; the message holds both.
 */
class VirtualThreadsUnavailableException extends IllegalStateException {

	private final String problem;

	private final String action;

	/**
	 * @param javaVersion the version of the running Java, as {@code java.version} says it
	 */
	VirtualThreadsUnavailableException(String javaVersion) {
		this("kafka.resilience.consumer.virtual-threads is true, but virtual threads need Java 21 or later and this "
				+ "application runs on Java " + javaVersion + ".",
				"Run the application on Java 21 or later, or remove kafka.resilience.consumer.virtual-threads (or set it "
						+ "to false): the listeners' workers are then platform threads.");
	}

	private VirtualThreadsUnavailableException(String problem, String action) {
		super(problem + " " + action);
		this.problem = problem;
		this.action = action;
	}

	/** What is wrong. */
	String problem() {
		return this.problem;
	}

	/** What to do about it. */
	String action() {
		return this.action;
	}

}
