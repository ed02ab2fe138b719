package io.github.kafkaresilience.outage;

import java.time.Duration;

/**
 * When a listener's outage breaker opens and how it probes.
 *
 * @param enabled whether the listener holds during an outage; when off, every failure takes the
 * ladder and {@code DependencyUnavailableException} is a transient failure
 * @param windowSize the most recent attempts the breaker looks at
 * @param window how far back it looks: older attempts are forgotten
 * @param minimumAttempts the attempts it needs in its window before it may open
 * @param failureRate the share of them that failed transiently, at least, for it to open
 * @param minimumKeys the distinct keys among those failures, at least, for it to open: one bad
 * key never opens it
 * @param probeInterval the pause before the first probe
 * @param maxProbeInterval the longest pause between probes (each failed probe doubles it)
 * @since 0.1.0
 */
public record OutageSettings(boolean enabled, int windowSize, Duration window, int minimumAttempts, double failureRate,
		int minimumKeys, Duration probeInterval, Duration maxProbeInterval) {

	/** The defaults: open only when nearly every attempt fails, across several keys. */
	public static final OutageSettings DEFAULTS = new OutageSettings(true, 100, Duration.ofSeconds(30), 20, 0.95, 5,
			Duration.ofSeconds(1), Duration.ofSeconds(30));

	public OutageSettings {
		require(windowSize >= 1, "window-size must be at least 1, was " + windowSize);
		require(window != null && window.toMillis() > 0, "window must be positive, was " + window);
		require(minimumAttempts >= 1 && minimumAttempts <= windowSize,
				"minimum-attempts must be between 1 and window-size (" + windowSize + "), was " + minimumAttempts);
		require(failureRate > 0 && failureRate <= 1, "failure-rate must be above 0 and at most 1, was " + failureRate);
		require(minimumKeys >= 1 && minimumKeys <= minimumAttempts,
				"minimum-keys must be between 1 and minimum-attempts (" + minimumAttempts + "), was " + minimumKeys);
		require(probeInterval != null && probeInterval.toMillis() > 0,
				"probe-interval must be positive, was " + probeInterval);
		require(maxProbeInterval != null && maxProbeInterval.compareTo(probeInterval) >= 0,
				"max-probe-interval must be at least probe-interval (" + probeInterval + "), was " + maxProbeInterval);
	}

	private static void require(boolean valid, String message) {
		if (!valid) {
			throw new IllegalArgumentException("kafka.resilience.outage: " + message);
		}
	}

}
