package io.github.kafkaresilience.simulation;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that only moves when the simulation says so. */
final class SimClock extends Clock {

	private long millis;

	SimClock(long start) {
		this.millis = start;
	}

	void advance(long delta) {
		if (delta < 0) {
			throw new IllegalArgumentException("time goes forward");
		}
		this.millis += delta;
	}

	@Override
	public long millis() {
		return this.millis;
	}

	@Override
	public Instant instant() {
		return Instant.ofEpochMilli(this.millis);
	}

	@Override
	public ZoneId getZone() {
		return ZoneOffset.UTC;
	}

	@Override
	public Clock withZone(ZoneId zone) {
		return this;
	}

}
