package io.github.kafkaresilience.internal.support;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock for tests: it stands still until the test moves it forward. */
public final class MovingClock extends Clock {

	private volatile Instant now;

	public MovingClock(Instant start) {
		this.now = start;
	}

	/** Moves the clock forward; time never goes back. */
	public void advance(Duration delta) {
		if (delta.isNegative()) {
			throw new IllegalArgumentException("time goes forward");
		}
		this.now = this.now.plus(delta);
	}

	/** Moves the clock forward by {@code millis}. */
	public void advance(long millis) {
		advance(Duration.ofMillis(millis));
	}

	@Override
	public long millis() {
		return this.now.toEpochMilli();
	}

	@Override
	public Instant instant() {
		return this.now;
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
