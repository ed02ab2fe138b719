package io.github.kafkaresilience.internal.actuate;

import java.time.Duration;
import java.util.List;

import io.github.kafkaresilience.container.RateLimitSettings;
import io.github.kafkaresilience.internal.container.FairShare;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.container.TenantTally;
import org.jspecify.annotations.Nullable;

/**
 * What the {@code kafkaresilience} endpoint says of a listener's tenants and rate limit:
 * the figures its container keeps of each tenant, and its limit.
 */
public final class TenantViews {

	private TenantViews() {
	}

	/**
	 * Each tenant of a listener's records with its figures, those counted on their own
	 * first (most records first), {@value TenantTally#OTHER} last; {@code null} when its
	 * records have no tenants.
	 */
	static @Nullable List<TenantDescriptor> tenants(@Nullable RetryContainer container) {
		FairShare shared = (container != null) ? container.fairShare() : null;
		TenantTally tally = (shared != null) ? shared.tenantTally() : null;
		if (tally == null) {
			return null;
		}
		return tally.figures()
			.stream()
			.map((figures) -> new TenantDescriptor(figures.tenant(), figures.records(), figures.inFlight(),
					figures.waiting(), Duration.ofNanos(figures.throttledNanos())))
			.toList();
	}

	/** A listener's rate limit, {@code null} when it has none. */
	static @Nullable RateLimitDescriptor rateLimit(@Nullable RetryContainer container) {
		FairShare shared = (container != null) ? container.fairShare() : null;
		RateLimitSettings settings = (shared != null) ? shared.rateLimitSettings() : null;
		if (shared == null || settings == null) {
			return null;
		}
		return new RateLimitDescriptor(settings.recordsPerSecond(), settings.shared(), shared.rateLimit(),
				Duration.ofNanos(shared.throttledNanos()));
	}

	/**
	 * One tenant of a listener's records, or {@value TenantTally#OTHER}: every tenant
	 * past the first {@code kafka.resilience.tenants.tagged-tenants} seen.
	 *
	 * @param tenant the tenant
	 * @param records its records handed to the handler
	 * @param inFlight its records held in memory, running or waiting
	 * @param waiting its records whose turn it is, waiting for a worker or a rate limit
	 * @param throttled how long its rate limit held its waiting records back
	 */
	public record TenantDescriptor(String tenant, long records, int inFlight, int waiting, Duration throttled) {
	}

	/**
	 * A listener's limit on the records a second handed to its handler.
	 *
	 * @param recordsPerSecond the limit as set
	 * @param shared whether it is the group's, of which this instance takes its share of
	 * the partitions
	 * @param here the records a second this instance may hand out now
	 * @param throttled how long the limit held every waiting record back
	 */
	public record RateLimitDescriptor(double recordsPerSecond, boolean shared, double here, Duration throttled) {
	}

}
