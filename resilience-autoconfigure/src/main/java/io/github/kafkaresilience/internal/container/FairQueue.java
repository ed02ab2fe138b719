package io.github.kafkaresilience.internal.container;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongConsumer;

import io.github.kafkaresilience.container.FairShareSettings;
import io.github.kafkaresilience.container.RateLimitSettings;
import org.jspecify.annotations.Nullable;

/**
 * The records whose turn it is, for a listener that shares its workers between tenants or
 * limits its rate: one lane per tenant, taken in weighted round robin (a tenant of weight
 * {@code w} takes up to {@code w} turns in a row, then goes to the back), so a tenant
 * with a backlog takes its share of the workers and no more while others have records
 * ready. A lane whose tenant is at its rate limit is passed over, and nothing is handed
 * out while the listener is at its own; the queue then asks for a wake-up once a permit
 * is free, so no worker waits for one. Without tenants every record is in one lane, and
 * only the rate limit applies. Thread-safe.
 */
final class FairQueue {

	private final FairShareSettings settings;

	private final @Nullable RecordRate listenerRate;

	/** Whether a rate limit, the listener's or a tenant's, may hold records back. */
	private final boolean limited;

	/** The lanes of the tenants seen, by tenant. */
	private final Map<String, Lane> lanes = new HashMap<>();

	/** The lanes with records, in their order of turns. */
	private final ArrayDeque<Lane> ring = new ArrayDeque<>();

	/** Asks for a wake-up of the workers in so many nanos. */
	private final LongConsumer wakeIn;

	/** When a wake-up was asked for, in {@link System#nanoTime()}, or 0 for none. */
	private long wakeAt;

	private int size;

	/**
	 * Since when the listener's limit holds every record back, in
	 * {@link System#nanoTime()}, or 0.
	 */
	private long throttledSince;

	/** This instance's share of the limits the group shares: 1 unless they are shared. */
	private double shared = 1;

	private final TenantTally tally;

	/**
	 * @param settings how tenants share, {@link FairShareSettings#DEFAULTS} without
	 * tenants
	 * @param rateLimit the listener's limit
	 * @param tally counts each tenant's records
	 * @param wakeIn asks for the workers to look again in so many nanos: a permit is free
	 * then
	 */
	FairQueue(FairShareSettings settings, RateLimitSettings rateLimit, TenantTally tally, LongConsumer wakeIn) {
		this.settings = settings;
		this.listenerRate = rateLimit.limited() ? new RecordRate(rateLimit.recordsPerSecond()) : null;
		this.limited = rateLimit.limited() || settings.defaultRateLimit() > 0 || !settings.rateLimits().isEmpty();
		this.tally = tally;
		this.wakeIn = wakeIn;
	}

	/** Queues a record behind the earlier ones of its tenant. */
	synchronized void add(RecordTask task) {
		Lane lane = this.lanes.computeIfAbsent(task.tenant(), this::lane);
		if (lane.tasks.isEmpty()) {
			this.ring.add(lane);
		}
		lane.tasks.add(task);
		this.size++;
		this.tally.waiting(lane.tenant, 1);
	}

	private Lane lane(String tenant) {
		double limit = this.settings.rateLimitOf(tenant);
		RecordRate rate = (limit > 0) ? new RecordRate(limit) : null;
		if (rate != null) {
			rate.share(this.shared);
		}
		return new Lane(tenant, this.settings.weightOf(tenant), rate);
	}

	/** Whether a rate limit, the listener's or a tenant's, may hold records back. */
	boolean limited() {
		return this.limited;
	}

	/** How many records wait. */
	synchronized int size() {
		return this.size;
	}

	/**
	 * The next record to run, or {@code null} when none may run now: none waits, or every
	 * one waits for a rate limit (a wake-up is then asked for). Its permits are taken.
	 */
	synchronized @Nullable RecordTask poll() {
		if (this.size == 0) {
			return null;
		}
		long now = System.nanoTime();
		RecordRate listener = this.listenerRate;
		if (listener != null) {
			long wait = listener.waitNanos(now);
			if (wait > 0) {
				if (this.throttledSince == 0) {
					this.throttledSince = now;
				}
				wakeIn(now, wait);
				return null;
			}
			if (this.throttledSince != 0) {
				this.tally.listenerThrottled(now - this.throttledSince);
				this.throttledSince = 0;
			}
		}
		long soonest = Long.MAX_VALUE;
		for (int looked = 0, lanes = this.ring.size(); looked < lanes; looked++) {
			Lane lane = this.ring.peek();
			if (lane == null) {
				break;
			}
			long wait = (lane.rate != null) ? lane.rate.waitNanos(now) : 0;
			if (wait > 0) {
				soonest = Math.min(soonest, wait);
				if (lane.throttledSince == 0) {
					lane.throttledSince = now;
				}
				this.ring.add(this.ring.poll()); // its turn is kept for when it may run
				continue;
			}
			RecordTask task = lane.tasks.poll();
			if (task == null) {
				this.ring.poll();
				continue;
			}
			this.size--;
			this.tally.waiting(lane.tenant, -1);
			this.tally.handedOut(lane.tenant);
			if (lane.throttledSince != 0) {
				this.tally.throttled(lane.tenant, now - lane.throttledSince);
				lane.throttledSince = 0;
			}
			if (lane.rate != null) {
				lane.rate.take(now, 1);
			}
			if (listener != null) {
				listener.take(now, 1);
			}
			if (lane.tasks.isEmpty()) {
				this.ring.poll();
				lane.turns = 0;
				if (lane.rate == null || lane.rate.waitNanos(now) == 0) {
					this.lanes.remove(lane.tenant); // a tenant with nothing waiting costs
													// nothing
				}
			}
			else if (++lane.turns >= lane.weight) {
				lane.turns = 0;
				this.ring.add(this.ring.poll());
			}
			return task;
		}
		if (soonest != Long.MAX_VALUE) {
			wakeIn(now, soonest);
		}
		return null;
	}

	/**
	 * Whether a record may run now: one waits, and neither its tenant's limit nor the
	 * listener's holds it back.
	 */
	synchronized boolean hasRunnable() {
		if (this.size == 0) {
			return false;
		}
		long now = System.nanoTime();
		if (this.listenerRate != null && this.listenerRate.waitNanos(now) > 0) {
			return false;
		}
		for (Lane lane : this.ring) {
			if (!lane.tasks.isEmpty() && (lane.rate == null || lane.rate.waitNanos(now) == 0)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Books permits for records that run with one already handed out, in its batch: they
	 * count against the limits, and push the next free permit further, and among the
	 * records handed out.
	 */
	void charge(String tenant, int records) {
		if (records <= 0) {
			return;
		}
		long now = System.nanoTime();
		this.tally.handedOut(tenant, records);
		Lane lane;
		synchronized (this) {
			// its lane may have gone with its last record: its limit still counts them
			lane = (this.settings.rateLimitOf(tenant) > 0) ? this.lanes.computeIfAbsent(tenant, this::lane)
					: this.lanes.get(tenant);
		}
		if (lane != null && lane.rate != null) {
			lane.rate.take(now, records);
		}
		if (this.listenerRate != null) {
			this.listenerRate.take(now, records);
		}
	}

	/**
	 * Takes this instance's share of the limits the group shares: of the listener's and
	 * of every tenant's.
	 */
	synchronized void share(double share) {
		if (this.listenerRate != null) {
			this.listenerRate.share(share);
		}
		this.lanes.values().forEach((lane) -> {
			if (lane.rate != null) {
				lane.rate.share(share);
			}
		});
		this.shared = share;
	}

	/** The records a second the listener may hand out on this instance now, or 0. */
	double listenerRate() {
		RecordRate rate = this.listenerRate;
		return (rate != null) ? rate.rate() : 0;
	}

	/**
	 * The nanos during which the listener's own limit held every record back, up to the
	 * last record it let go.
	 */
	long throttledNanos() {
		return this.tally.listenerThrottledNanos();
	}

	/** Forgets the records that wait: the container stopped. */
	synchronized void clear() {
		this.lanes.values().forEach((lane) -> {
			this.tally.waiting(lane.tenant, -lane.tasks.size());
			lane.tasks.clear();
			lane.turns = 0;
		});
		this.ring.clear();
		this.size = 0;
		this.wakeAt = 0;
	}

	private void wakeIn(long now, long nanos) {
		long at = now + nanos;
		if (this.wakeAt != 0 && this.wakeAt - now > 0 && this.wakeAt - at <= 0) {
			return; // a wake-up no later than this one is asked for already
		}
		this.wakeAt = at;
		this.wakeIn.accept(nanos);
	}

	/** Forgets the wake-up asked for: it came. */
	synchronized void woken() {
		this.wakeAt = 0;
	}

	private static final class Lane {

		final String tenant;

		final int weight;

		final @Nullable RecordRate rate;

		final ArrayDeque<RecordTask> tasks = new ArrayDeque<>();

		/** Turns taken in a row. */
		int turns;

		/** Since when its limit holds its records back, or 0. */
		long throttledSince;

		Lane(String tenant, int weight, @Nullable RecordRate rate) {
			this.tenant = tenant;
			this.weight = weight;
			this.rate = rate;
		}

	}

}
