package io.github.kafkaresilience.internal.container;

/**
 * Counts what tenants have in a real {@link TenantTally}, whose counting is
 * package-private: the library counts through the fair queue and the tenants' shares of a
 * partition.
 */
public final class TestTenantTally {

	private final TenantTally tally;

	public TestTenantTally(TenantTally tally) {
		this.tally = tally;
	}

	/** See {@link TenantTally#waiting(String, int)}. */
	public TestTenantTally waiting(String tenant, int change) {
		this.tally.waiting(tenant, change);
		return this;
	}

	/** See {@link TenantTally#inFlight(String, int)}. */
	public TestTenantTally inFlight(String tenant, int change) {
		this.tally.inFlight(tenant, change);
		return this;
	}

	/** See {@link TenantTally#handedOut(String)}. */
	public TestTenantTally handedOut(String tenant, int records) {
		for (int i = 0; i < records; i++) {
			this.tally.handedOut(tenant);
		}
		return this;
	}

	/** See {@link TenantTally#throttled(String, long)}. */
	public TestTenantTally throttled(String tenant, long nanos) {
		this.tally.throttled(tenant, nanos);
		return this;
	}

}
