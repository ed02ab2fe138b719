package io.github.kafkaresilience.internal.container;

import java.util.HashMap;
import java.util.Map;

/**
 * The tenants' shares of one partition's in-flight bound: a tenant holds at most
 * {@code cap} of its records in memory; a record taken past that is parked (its offset
 * stays pending, so no commit passes it), and read again once its tenant has drained to
 * half the cap, so that the records of other tenants behind a flood are read and run. Not
 * thread-safe: its partition's monitor guards it.
 */
final class TenantShares {

	private final int cap;

	private final TenantTally tally;

	private final Runnable reread;

	/** Each tenant's records in memory here. */
	private final Map<String, Integer> inFlight = new HashMap<>();

	/** Each tenant's records parked here because it was at its cap. */
	private final Map<String, Integer> parked = new HashMap<>();

	TenantShares(int cap, TenantTally tally, Runnable reread) {
		this.cap = cap;
		this.tally = tally;
		this.reread = reread;
	}

	/** Whether a tenant holds as many records in memory here as it may. */
	boolean atCap(String tenant) {
		return this.inFlight.getOrDefault(tenant, 0) >= this.cap;
	}

	/** A record of a tenant is held in memory. */
	void taken(String tenant) {
		this.inFlight.merge(tenant, 1, Integer::sum);
		this.tally.inFlight(tenant, 1);
	}

	/**
	 * A record of a tenant held in memory is done, or parked for a due time: when the
	 * tenant has drained to half its cap and has records parked at its cap, they are read
	 * again.
	 */
	void released(String tenant) {
		Integer left = this.inFlight.computeIfPresent(tenant, (t, count) -> (count > 1) ? count - 1 : null);
		this.tally.inFlight(tenant, -1);
		if ((left == null || left <= this.cap / 2) && this.parked.containsKey(tenant)) {
			this.reread.run();
		}
	}

	/** A record of a tenant at its cap is parked. */
	void parkedAtCap(String tenant) {
		this.parked.merge(tenant, 1, Integer::sum);
	}

	/** A parked record of a tenant was read again and taken back. */
	void unparked(String tenant) {
		this.parked.computeIfPresent(tenant, (t, count) -> (count > 1) ? count - 1 : null);
		taken(tenant);
	}

	/** How many records of a tenant are in memory here. */
	int inFlight(String tenant) {
		return this.inFlight.getOrDefault(tenant, 0);
	}

	/** The partition was revoked: its records in memory are no longer counted. */
	void revoked() {
		this.inFlight.forEach((tenant, count) -> this.tally.inFlight(tenant, -count));
		this.inFlight.clear();
		this.parked.clear();
	}

}
