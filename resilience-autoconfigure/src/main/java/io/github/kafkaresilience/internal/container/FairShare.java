package io.github.kafkaresilience.internal.container;

import io.github.kafkaresilience.container.RateLimitSettings;
import org.jspecify.annotations.Nullable;

/**
 * How a container shares its workers and partitions between the tenants of its records
 * and limits its rate, as set by {@link RetryContainer#shareFairly}: what meters, the
 * endpoint and the console read of it.
 */
public final class FairShare {

	private final @Nullable Tenants tenants;

	private final FairQueue queue;

	private final TenantTally tally;

	private final @Nullable RateLimitSettings rateLimit;

	FairShare(@Nullable Tenants tenants, FairQueue queue, TenantTally tally, RateLimitSettings rateLimit) {
		this.tenants = tenants;
		this.queue = queue;
		this.tally = tally;
		this.rateLimit = rateLimit.limited() ? rateLimit : null;
	}

	/** The tenants of the records, or {@code null} when they have none. */
	@Nullable Tenants tenants() {
		return this.tenants;
	}

	/**
	 * What each tenant of the listener's records has now, or {@code null} when its
	 * records have no tenants.
	 */
	public @Nullable TenantTally tenantTally() {
		return (this.tenants != null) ? this.tally : null;
	}

	/**
	 * The records a second the listener may hand to its handler on this instance now (its
	 * share of a limit the group shares), or 0 without a limit.
	 */
	public double rateLimit() {
		return this.queue.listenerRate();
	}

	/** The listener's rate limit as set, or {@code null} when it has none. */
	public @Nullable RateLimitSettings rateLimitSettings() {
		return this.rateLimit;
	}

	/**
	 * The nanos during which the listener's own rate limit held every record back, up to
	 * the last record it let go; 0 without a limit.
	 */
	public long throttledNanos() {
		return this.queue.throttledNanos();
	}

}
