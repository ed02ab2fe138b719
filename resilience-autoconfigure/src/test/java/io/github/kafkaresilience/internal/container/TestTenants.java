package io.github.kafkaresilience.internal.container;

import io.github.kafkaresilience.container.FairShareSettings;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.listener.TenantResolver;

/**
 * Real {@link Tenants} and {@link TenantShares} for the simulation, which models how a
 * partition takes, parks and takes back the records of its tenants with the decisions the
 * container takes: both are package-private, and the library reaches them only through
 * {@link PartitionWork}.
 */
public final class TestTenants {

	private final Tenants tenants;

	/**
	 * @param id the listener id
	 * @param resolver finds a record's tenant
	 * @param maxShare the share of a partition's in-flight bound one tenant may fill
	 */
	public TestTenants(String id, TenantResolver resolver, double maxShare) {
		FairShareSettings settings = new FairShareSettings(FairShareSettings.DEFAULTS.weights(), maxShare,
				FairShareSettings.DEFAULTS.rateLimits(), FairShareSettings.DEFAULTS.defaultRateLimit(),
				FairShareSettings.DEFAULTS.taggedTenants());
		this.tenants = new Tenants(id, resolver, settings, new TenantTally(settings.taggedTenants()));
	}

	/** See {@link Tenants#tenantOf(Delivery)}. */
	public String tenantOf(Delivery record) {
		return this.tenants.tenantOf(record);
	}

	/** See {@link Tenants#capOf(int)}. */
	public int capOf(int bound) {
		return this.tenants.capOf(bound);
	}

	/** See {@link Tenants#shares(int, Runnable)}. */
	public Shares shares(int bound, Runnable lookNow) {
		return new Shares(this.tenants.shares(bound, lookNow));
	}

	/** See {@link Tenants#rereadWith(Runnable)}. */
	public void rereadWith(Runnable reread) {
		this.tenants.rereadWith(reread);
	}

	/** See {@link Tenants#tally()}. */
	public TenantTally tally() {
		return this.tenants.tally();
	}

	/** A partition's {@link TenantShares}. */
	public static final class Shares {

		private final TenantShares shares;

		private Shares(TenantShares shares) {
			this.shares = shares;
		}

		/** See {@link TenantShares#atCap(String)}. */
		public boolean atCap(String tenant) {
			return this.shares.atCap(tenant);
		}

		/** See {@link TenantShares#taken(String)}. */
		public void taken(String tenant) {
			this.shares.taken(tenant);
		}

		/** See {@link TenantShares#released(String)}. */
		public void released(String tenant) {
			this.shares.released(tenant);
		}

		/** See {@link TenantShares#parkedAtCap(String)}. */
		public void parkedAtCap(String tenant) {
			this.shares.parkedAtCap(tenant);
		}

		/** See {@link TenantShares#unparked(String)}. */
		public void unparked(String tenant) {
			this.shares.unparked(tenant);
		}

		/** See {@link TenantShares#inFlight(String)}. */
		public int inFlight(String tenant) {
			return this.shares.inFlight(tenant);
		}

		/** See {@link TenantShares#revoked()}. */
		public void revoked() {
			this.shares.revoked();
		}

	}

}
