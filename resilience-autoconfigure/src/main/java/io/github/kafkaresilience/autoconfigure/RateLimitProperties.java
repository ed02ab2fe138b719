package io.github.kafkaresilience.autoconfigure;

import io.github.kafkaresilience.container.RateLimitSettings;

/**
 * A limit on the records a second every listener hands to its handler:
 * {@code kafka.resilience.rate-limit.*}. A listener's {@code rateLimit} overrides it.
 *
 * @since 0.1.0
 */
public class RateLimitProperties {

	/**
	 * The most records a second a listener hands to its handler, waiting in its queue
	 * without holding a worker; 0 for no limit.
	 */
	private double recordsPerSecond = 0;

	/**
	 * Whether the limits (this one, a listener's and the tenants') are the group's: each
	 * instance takes the share of them that it has of the partitions of the listener's
	 * topics, so the sum over the group's instances stays within them.
	 */
	private boolean shared = false;

	public double getRecordsPerSecond() {
		return this.recordsPerSecond;
	}

	public void setRecordsPerSecond(double recordsPerSecond) {
		this.recordsPerSecond = recordsPerSecond;
	}

	public boolean isShared() {
		return this.shared;
	}

	public void setShared(boolean shared) {
		this.shared = shared;
	}

	/**
	 * The settings these properties give.
	 * @throws IllegalArgumentException when they do not make sense
	 */
	RateLimitSettings settings() {
		return new RateLimitSettings(this.recordsPerSecond, this.shared);
	}

}
