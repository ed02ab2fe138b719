package io.github.kafkaresilience.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.kafkaresilience.container.FairShareSettings;
import org.jspecify.annotations.Nullable;

/**
 * How listeners share their workers and partitions between the tenants of their records:
 * {@code kafka.resilience.tenants.*}. A listener's records have tenants when it names how
 * to find them ({@code tenantHeader}, {@code tenantExpression} or {@code tenantResolver}
 * on the annotation), when {@code header} or {@code expression} is set here, or when the
 * application has a {@code TenantResolver} bean.
 *
 * @since 0.1.0
 */
public class TenantsProperties {

	/**
	 * The header whose value (UTF-8) is a record's tenant, for every listener that names
	 * none itself.
	 */
	private @Nullable String header;

	/**
	 * A SpEL expression that gives a record's tenant, for every listener that names none
	 * itself: the record as the broker holds it is the root object, #key is its key and
	 * #headers its headers' last values, as UTF-8 text.
	 */
	private @Nullable String expression;

	/**
	 * The weight of each tenant in the round robin over tenants (a tenant not named has
	 * 1): a tenant of weight 3 takes three turns where one of weight 1 takes one.
	 */
	private Map<String, Integer> weights = new LinkedHashMap<>();

	/**
	 * The share of a partition's in-flight bound one tenant may fill, more than 0 and at
	 * most 1: its records past it are parked and read again once it has room, so the
	 * records of other tenants behind them are read.
	 */
	private double maxShare = 0.5;

	/**
	 * The most records a second of each named tenant handed to the handler, on each
	 * instance unless kafka.resilience.rate-limit.shared is set.
	 */
	private Map<String, Double> rateLimits = new LinkedHashMap<>();

	/**
	 * The most records a second handed to the handler of every tenant not named in
	 * rate-limits; 0 for no limit.
	 */
	private double defaultRateLimit = 0;

	/**
	 * How many tenants have meters of their own: the first ones seen; later ones are
	 * counted under the tenant 'other'.
	 */
	private int taggedTenants = 10;

	public @Nullable String getHeader() {
		return this.header;
	}

	public void setHeader(@Nullable String header) {
		this.header = header;
	}

	public @Nullable String getExpression() {
		return this.expression;
	}

	public void setExpression(@Nullable String expression) {
		this.expression = expression;
	}

	public Map<String, Integer> getWeights() {
		return this.weights;
	}

	public void setWeights(Map<String, Integer> weights) {
		this.weights = weights;
	}

	public double getMaxShare() {
		return this.maxShare;
	}

	public void setMaxShare(double maxShare) {
		this.maxShare = maxShare;
	}

	public Map<String, Double> getRateLimits() {
		return this.rateLimits;
	}

	public void setRateLimits(Map<String, Double> rateLimits) {
		this.rateLimits = rateLimits;
	}

	public double getDefaultRateLimit() {
		return this.defaultRateLimit;
	}

	public void setDefaultRateLimit(double defaultRateLimit) {
		this.defaultRateLimit = defaultRateLimit;
	}

	public int getTaggedTenants() {
		return this.taggedTenants;
	}

	public void setTaggedTenants(int taggedTenants) {
		this.taggedTenants = taggedTenants;
	}

	/**
	 * The settings these properties give.
	 * @throws IllegalArgumentException when they do not make sense
	 */
	FairShareSettings settings() {
		if (this.header != null && this.expression != null) {
			throw new IllegalArgumentException("kafka.resilience.tenants.header and "
					+ "kafka.resilience.tenants.expression are both set; set one");
		}
		return new FairShareSettings(this.weights, this.maxShare, this.rateLimits, this.defaultRateLimit,
				this.taggedTenants);
	}

}
