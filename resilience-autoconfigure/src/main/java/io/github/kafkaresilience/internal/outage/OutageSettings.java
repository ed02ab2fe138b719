package io.github.kafkaresilience.internal.outage;

import java.time.Duration;

/**
 * When a listener's outage breaker opens and how it probes.
 *
 * @param enabled whether the listener holds during an outage; when off, every failure
 * takes the ladder and {@code DependencyUnavailableException} is a transient failure
 * @param minimumDuration how long nearly every first attempt must have failed before it
 * opens: a burst of keys failing at once while others succeed is over sooner
 * @param window the longest a failure episode is looked at: one that has not opened the
 * breaker by then starts over with the next failure
 * @param minimumAttempts the first attempts it needs in an episode before it may open
 * @param failureRate the share of them that failed transiently, at least, for it to open
 * @param minimumKeys the distinct keys among those failures, at least, for it to open:
 * one bad key never opens it
 * @param probeInterval the pause before the first probe
 * @param maxProbeInterval the longest pause between probes (each failed probe doubles
 * it); equal to {@code probeInterval}, the probes come at a fixed pace
 * @param rampUp how long the listener runs on half its workers once the breaker closed,
 * before it runs on all of them: a dependency that just came back does not get the whole
 * backlog at once; zero for no ramp
 * @since 0.1.0
 */
public record OutageSettings(boolean enabled, Duration minimumDuration, Duration window, int minimumAttempts,
		double failureRate, int minimumKeys, Duration probeInterval, Duration maxProbeInterval, Duration rampUp) {

	/**
	 * The defaults: open only when nearly every record fails, across several keys, for
	 * half a second; probe every second, however long the outage; resume on half the
	 * workers for a second.
	 */
	public static final OutageSettings DEFAULTS = new OutageSettings(true, Duration.ofMillis(500),
			Duration.ofSeconds(30), 20, 0.95, 5, Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1));

	/** Outage mode off: the listener never holds. */
	public static final OutageSettings DISABLED = new OutageSettings(false, DEFAULTS.minimumDuration(),
			DEFAULTS.window(), DEFAULTS.minimumAttempts(), DEFAULTS.failureRate(), DEFAULTS.minimumKeys(),
			DEFAULTS.probeInterval(), DEFAULTS.maxProbeInterval(), DEFAULTS.rampUp());

	public OutageSettings {
		require(minimumDuration != null && !minimumDuration.isNegative(),
				"minimum-duration must not be negative, was " + minimumDuration);
		require(window != null && window.compareTo(minimumDuration) > 0,
				"window must be longer than minimum-duration (" + minimumDuration + "), was " + window);
		require(minimumAttempts >= 1, "minimum-attempts must be at least 1, was " + minimumAttempts);
		require(failureRate > 0 && failureRate <= 1, "failure-rate must be above 0 and at most 1, was " + failureRate);
		require(minimumKeys >= 1 && minimumKeys <= minimumAttempts,
				"minimum-keys must be between 1 and minimum-attempts (" + minimumAttempts + "), was " + minimumKeys);
		require(probeInterval != null && probeInterval.toMillis() > 0,
				"probe-interval must be positive, was " + probeInterval);
		require(maxProbeInterval != null && maxProbeInterval.compareTo(probeInterval) >= 0,
				"max-probe-interval must be at least probe-interval (" + probeInterval + "), was " + maxProbeInterval);
		require(rampUp != null && !rampUp.isNegative(), "ramp-up must not be negative, was " + rampUp);
	}

	private static void require(boolean valid, String message) {
		if (!valid) {
			throw new IllegalArgumentException("kafka.resilience.outage: " + message);
		}
	}

}
