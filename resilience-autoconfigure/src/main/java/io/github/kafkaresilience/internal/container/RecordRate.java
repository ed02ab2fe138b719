package io.github.kafkaresilience.internal.container;

/**
 * A limit on the records a second handed to a handler, as permits spaced {@code 1 / rate}
 * apart: a permit is free once the time it was booked for has come. A permit taken late
 * is booked for its time, not for when it was taken, up to {@link #CATCH_UP} late (at
 * least one permit's spacing), so a timer that wakes a millisecond late costs no rate;
 * after an idle spell that many may be taken at once. In any second at most {@code rate}
 * are taken, plus those of the catch-up, plus one; a batch books all of its records at
 * once, so it may overrun by one batch. Never blocks: it says how long to wait.
 * Thread-safe.
 */
final class RecordRate {

	private static final long SECOND = 1_000_000_000L;

	/** How late a permit may be taken and still be booked for its time: 2 ms. */
	static final long CATCH_UP = 2_000_000L;

	/** The limit as configured, records a second. */
	private final double limit;

	/** The nanos between two permits at this instance's share of the limit. */
	private volatile double interval;

	/** When the next permit is free, in {@link System#nanoTime()}. */
	private long next;

	private boolean started;

	RecordRate(double limit) {
		this.limit = limit;
		this.interval = SECOND / limit;
	}

	/**
	 * Takes a share of the limit: this instance's share of a limit the group shares, 0 to
	 * 1. With no share at all nothing is handed out.
	 */
	void share(double share) {
		this.interval = (share > 0) ? SECOND / (this.limit * Math.min(1, share)) : Double.POSITIVE_INFINITY;
	}

	/** The records a second this instance may hand out now. */
	double rate() {
		return SECOND / this.interval;
	}

	/**
	 * How long until a permit is free, in nanos: 0 when one is free now.
	 * @param now {@link System#nanoTime()}
	 */
	synchronized long waitNanos(long now) {
		if (Double.isInfinite(this.interval)) {
			return SECOND;
		}
		return (!this.started || this.next - now <= 0) ? 0 : this.next - now;
	}

	/**
	 * Books {@code permits}, free or not: a permit free now is taken, later ones push the
	 * next free permit further.
	 * @param now {@link System#nanoTime()}
	 */
	synchronized void take(long now, int permits) {
		double interval = this.interval;
		if (Double.isInfinite(interval)) {
			return;
		}
		long burst = (long) Math.max(interval, CATCH_UP);
		long from = (!this.started || now - this.next > burst) ? now - burst : this.next;
		if (!this.started) {
			from = now;
			this.started = true;
		}
		this.next = from + (long) (interval * permits);
	}

}
