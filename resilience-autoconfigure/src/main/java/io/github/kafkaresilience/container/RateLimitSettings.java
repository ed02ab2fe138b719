package io.github.kafkaresilience.container;

/**
 * A listener-wide limit on the records a second handed to its handler, enforced by the
 * scheduler: a record waits for its turn in the queue, holding no worker.
 *
 * @param recordsPerSecond the most records a second; 0 for no limit
 * @param shared whether the limit is the group's, not each instance's: every instance
 * takes the share of it that it has of the partitions of the listener's topics, so the
 * sum over the group stays within it
 * @since 0.1.0
 */
public record RateLimitSettings(double recordsPerSecond, boolean shared) {

	/** No limit. */
	public static final RateLimitSettings NONE = new RateLimitSettings(0, false);

	public RateLimitSettings {
		if (recordsPerSecond != 0) {
			check(recordsPerSecond, "rate-limit.records-per-second");
		}
	}

	/** Whether there is a limit. */
	public boolean limited() {
		return this.recordsPerSecond > 0;
	}

	static void check(double limit, String what) {
		if (!(limit > 0) || Double.isInfinite(limit)) {
			throw new IllegalArgumentException(what + " must be a positive number of records a second, was " + limit);
		}
	}

}
