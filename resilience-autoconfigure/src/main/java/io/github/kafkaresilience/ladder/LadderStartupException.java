package io.github.kafkaresilience.ladder;

/**
 * A ladder refused to start: its topics, its consumer group or what an earlier release
 * left behind would break the order or lose records. It says what is wrong
 * ({@link #problem()}) and what to do about it ({@link #action()}), which Spring Boot
 * shows as the description and action of a failed startup; the message holds both.
 *
 * @since 0.1.0
 */
public class LadderStartupException extends IllegalStateException {

	private final String problem;

	private final String action;

	/**
	 * @param problem what is wrong, naming the topic or group, and why it matters
	 * @param action what to run or set to fix it
	 */
	public LadderStartupException(String problem, String action) {
		super(problem + " " + action);
		this.problem = problem;
		this.action = action;
	}

	/** What is wrong, naming the topic or group, and why it matters. */
	public String problem() {
		return this.problem;
	}

	/** What to run or set to fix it. */
	public String action() {
		return this.action;
	}

}
