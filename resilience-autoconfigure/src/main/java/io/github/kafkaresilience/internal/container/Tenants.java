package io.github.kafkaresilience.internal.container;

import io.github.kafkaresilience.container.FairShareSettings;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.listener.TenantResolver;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The tenants of a listener's records: how a record's tenant is found, how much of a
 * partition's in-flight bound one tenant may fill, and what each tenant has now.
 */
final class Tenants {

	private static final Log logger = LogFactory.getLog(Tenants.class);

	private final String id;

	private final TenantResolver resolver;

	private final FairShareSettings settings;

	private final TenantTally tally;

	private volatile boolean resolverFailed;

	/** Asks the re-reader to read parked records again: a tenant has room for them. */
	private volatile Runnable reread = () -> {
	};

	Tenants(String id, TenantResolver resolver, FairShareSettings settings, TenantTally tally) {
		this.id = id;
		this.resolver = resolver;
		this.settings = settings;
		this.tally = tally;
	}

	/**
	 * The tenant of a record: {@link TenantResolver#UNKNOWN} when the resolver finds none
	 * or throws (the first failure is logged).
	 */
	String tenantOf(Delivery record) {
		try {
			String tenant = this.resolver.tenantOf(record);
			return (tenant != null) ? tenant : TenantResolver.UNKNOWN;
		}
		catch (RuntimeException ex) {
			if (!this.resolverFailed) {
				this.resolverFailed = true;
				logger.warn("Listener '" + this.id + "' could not find the tenant of " + record + " (" + this.resolver
						+ "); such records are counted as tenant '" + TenantResolver.UNKNOWN
						+ "'. Only the first failure is logged", ex);
			}
			return TenantResolver.UNKNOWN;
		}
	}

	/** How many records of one tenant a partition with this bound holds in memory. */
	int capOf(int bound) {
		return Math.max(1, (int) Math.floor(bound * this.settings.maxShare()));
	}

	/**
	 * The shares of a partition with this bound.
	 * @param lookNow makes the re-reader look at the partition's parked records at its
	 * next pass
	 */
	TenantShares shares(int bound, Runnable lookNow) {
		return new TenantShares(capOf(bound), this.tally, () -> {
			lookNow.run();
			this.reread.run();
		});
	}

	TenantTally tally() {
		return this.tally;
	}

	/** Wakes the re-reader of the current run with {@code reread}. */
	void rereadWith(Runnable reread) {
		this.reread = reread;
	}

	@Override
	public String toString() {
		return this.resolver.toString();
	}

}
