package io.github.kafkaresilience.internal.container;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What each tenant of a listener has: records handed to the handler, in flight, waiting
 * for a worker, and the time its records were held back by a rate limit. The first
 * {@code tagged} tenants seen are counted on their own; every later one under
 * {@value #OTHER}, so the meters have a bounded number of tags whatever the records
 * carry. Thread-safe.
 */
public final class TenantTally {

	/** The tenant the tenants past the tagged ones are counted under. */
	public static final String OTHER = "other";

	private final int tagged;

	private final Map<String, Counts> counts = new ConcurrentHashMap<>();

	private final AtomicInteger taggedCount = new AtomicInteger();

	private final AtomicLong listenerThrottledNanos = new AtomicLong();

	private final Counts other = new Counts(OTHER);

	/**
	 * @param tagged how many tenants are counted on their own
	 */
	public TenantTally(int tagged) {
		this.tagged = tagged;
		this.counts.put(OTHER, this.other);
	}

	/** The counts of a tenant: its own, or {@value #OTHER}'s. */
	Counts of(String tenant) {
		Counts counts = this.counts.get(tenant);
		if (counts != null) {
			return counts;
		}
		if (!tenant.equals(OTHER) && Turns.claim(this.taggedCount, this.tagged)) {
			return this.counts.computeIfAbsent(tenant, Counts::new);
		}
		return this.other;
	}

	void waiting(String tenant, int change) {
		of(tenant).waiting.addAndGet(change);
	}

	void inFlight(String tenant, int change) {
		of(tenant).inFlight.addAndGet(change);
	}

	void handedOut(String tenant) {
		of(tenant).records.incrementAndGet();
	}

	void throttled(String tenant, long nanos) {
		of(tenant).throttledNanos.addAndGet(nanos);
	}

	void listenerThrottled(long nanos) {
		this.listenerThrottledNanos.addAndGet(nanos);
	}

	/** The nanos during which the listener's own rate limit held every record back. */
	public long listenerThrottledNanos() {
		return this.listenerThrottledNanos.get();
	}

	/** Each tenant counted, {@value #OTHER} last; a snapshot. */
	public List<TenantFigures> figures() {
		List<TenantFigures> figures = new ArrayList<>();
		this.counts.values().forEach((counts) -> {
			if (!counts.tenant.equals(OTHER)) {
				figures.add(counts.figures());
			}
		});
		figures.sort((a, b) -> Long.compare(b.records(), a.records()));
		figures.add(this.other.figures());
		return figures;
	}

	/** Whether {@code tenant} is counted on its own. */
	public boolean isTagged(String tenant) {
		return !tenant.equals(OTHER) && this.counts.containsKey(tenant);
	}

	/** A tenant's figures now. */
	public record TenantFigures(String tenant, long records, int inFlight, int waiting, long throttledNanos) {
	}

	static final class Counts {

		final String tenant;

		final AtomicLong records = new AtomicLong();

		final AtomicInteger inFlight = new AtomicInteger();

		final AtomicInteger waiting = new AtomicInteger();

		final AtomicLong throttledNanos = new AtomicLong();

		Counts(String tenant) {
			this.tenant = tenant;
		}

		TenantFigures figures() {
			return new TenantFigures(this.tenant, this.records.get(), this.inFlight.get(), this.waiting.get(),
					this.throttledNanos.get());
		}

	}

}
