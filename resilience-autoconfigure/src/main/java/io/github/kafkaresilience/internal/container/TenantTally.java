package io.github.kafkaresilience.internal.container;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

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

	/** Told of each tenant when it is first counted on its own. */
	private final List<Consumer<String>> taggedListeners = new CopyOnWriteArrayList<>();

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
			Counts created = new Counts(tenant);
			Counts earlier = this.counts.putIfAbsent(tenant, created);
			if (earlier != null) {
				return earlier;
			}
			this.taggedListeners.forEach((listener) -> listener.accept(tenant));
			return created;
		}
		return this.other;
	}

	/**
	 * Tells {@code listener} of every tenant counted on its own so far, and of each one
	 * counted on its own later as its first record is counted, on the thread that counts
	 * it: it must be quick and must not throw. A tenant counted on its own while the
	 * listener is added may be told twice.
	 */
	public void onTagged(Consumer<String> listener) {
		this.taggedListeners.add(listener);
		this.counts.keySet().forEach((tenant) -> {
			if (!tenant.equals(OTHER)) {
				listener.accept(tenant);
			}
		});
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

	void handedOut(String tenant, int records) {
		of(tenant).records.addAndGet(records);
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

	/**
	 * The figures of a tenant counted on its own, or {@value #OTHER}'s for any other; a
	 * snapshot.
	 */
	public TenantFigures figuresOf(String tenant) {
		Counts counts = this.counts.get(tenant);
		return ((counts != null) ? counts : this.other).figures();
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
