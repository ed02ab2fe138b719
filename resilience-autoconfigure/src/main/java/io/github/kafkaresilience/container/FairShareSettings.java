package io.github.kafkaresilience.container;

import java.util.Map;

/**
 * How a listener whose records have tenants shares its workers and its partitions'
 * in-flight bound between them.
 *
 * @param weights the weight of each tenant in the round robin: a tenant with weight 3
 * takes three turns where one of weight 1 takes one; a tenant not named has weight 1
 * @param maxShare the share of a partition's in-flight bound one tenant may fill, more
 * than 0 and at most 1: the records it has past that share are parked and read again once
 * its records in flight have drained to half of it, so the records of other tenants
 * behind them are read
 * @param rateLimits the most records a second of each named tenant handed to the handler
 * @param defaultRateLimit the most records a second handed to the handler of each tenant
 * not named in {@code rateLimits}; 0 for no limit
 * @param taggedTenants how many tenants have meters of their own; the others are counted
 * under the tenant {@code other}
 * @since 0.1.0
 */
public record FairShareSettings(Map<String, Integer> weights, double maxShare, Map<String, Double> rateLimits,
		double defaultRateLimit, int taggedTenants) {

	/** Equal weights, half a partition's bound, no rate limits, 10 tagged tenants. */
	public static final FairShareSettings DEFAULTS = new FairShareSettings(Map.of(), 0.5, Map.of(), 0, 10);

	public FairShareSettings {
		weights = Map.copyOf(weights);
		rateLimits = Map.copyOf(rateLimits);
		weights.forEach((tenant, weight) -> {
			if (weight < 1) {
				throw new IllegalArgumentException(
						"The weight of tenant '" + tenant + "' must be at least 1, was " + weight);
			}
		});
		if (!(maxShare > 0 && maxShare <= 1)) {
			throw new IllegalArgumentException("max-share must be more than 0 and at most 1, was " + maxShare);
		}
		rateLimits
			.forEach((tenant, limit) -> RateLimitSettings.check(limit, "The rate limit of tenant '" + tenant + "'"));
		if (defaultRateLimit != 0) {
			RateLimitSettings.check(defaultRateLimit, "default-rate-limit");
		}
		if (taggedTenants < 0) {
			throw new IllegalArgumentException("tagged-tenants must not be negative, was " + taggedTenants);
		}
	}

	/** The weight of a tenant. */
	public int weightOf(String tenant) {
		return this.weights.getOrDefault(tenant, 1);
	}

	/** The rate limit of a tenant, records a second, or 0 for none. */
	public double rateLimitOf(String tenant) {
		return this.rateLimits.getOrDefault(tenant, this.defaultRateLimit);
	}

}
