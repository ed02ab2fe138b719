package io.github.kafkaresilience.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.kafkaresilience.internal.outage.OutageSettings;
import jakarta.validation.Valid;
import org.jspecify.annotations.Nullable;

/**
 * Outage mode ({@code kafka.resilience.outage.*}): when nearly every attempt of a
 * listener fails across several keys, or its handler throws
 * {@code DependencyUnavailableException}, the listener holds its records instead of
 * moving every key into the ladder, and resumes when a probe succeeds. Each setting may
 * be given for one listener under
 * {@code kafka.resilience.outage.listeners.<listener id>.*}.
 *
 * @since 0.1.0
 */
public class OutageProperties extends OutageListenerProperties {

	/**
	 * Settings of single listeners, by listener id: what is not set there is taken from
	 * above.
	 */
	private final Map<String, @Valid OutageListenerProperties> listeners = new LinkedHashMap<>();

	public OutageProperties() {
		OutageSettings defaults = OutageSettings.DEFAULTS;
		setEnabled(defaults.enabled());
		setMinimumDuration(defaults.minimumDuration());
		setWindow(defaults.window());
		setMinimumAttempts(defaults.minimumAttempts());
		setFailureRate(defaults.failureRate());
		setMinimumKeys(defaults.minimumKeys());
		setProbeInterval(defaults.probeInterval());
		// no max-probe-interval: the probe interval's, a fixed pace, whatever that is set
		// to
		setRampUp(defaults.rampUp());
	}

	public Map<String, OutageListenerProperties> getListeners() {
		return this.listeners;
	}

	/**
	 * The settings of a listener: its own where given, these otherwise.
	 * @throws IllegalArgumentException when they do not make sense together
	 */
	OutageSettings settings(String listenerId) {
		OutageListenerProperties own = this.listeners.getOrDefault(listenerId, new OutageListenerProperties());
		Duration probeInterval = pick(own.getProbeInterval(), getProbeInterval());
		Duration maxProbeInterval = (own.getMaxProbeInterval() != null) ? own.getMaxProbeInterval()
				: (getMaxProbeInterval() != null) ? getMaxProbeInterval() : probeInterval;
		return new OutageSettings(pick(own.getEnabled(), getEnabled()),
				pick(own.getMinimumDuration(), getMinimumDuration()), pick(own.getWindow(), getWindow()),
				pick(own.getMinimumAttempts(), getMinimumAttempts()), pick(own.getFailureRate(), getFailureRate()),
				pick(own.getMinimumKeys(), getMinimumKeys()), probeInterval, maxProbeInterval,
				pick(own.getRampUp(), getRampUp()));
	}

	/**
	 * Checks the shared settings and every listener's, so that settings that cannot work
	 * together fail the start, naming themselves.
	 * @return these properties
	 * @throws IllegalArgumentException naming the setting at fault
	 */
	public OutageProperties validated() {
		settings("");
		this.listeners.keySet().forEach((listenerId) -> {
			try {
				settings(listenerId);
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalArgumentException(
						ex.getMessage() + " (kafka.resilience.outage.listeners." + listenerId + ")", ex);
			}
		});
		return this;
	}

	private static <T> T pick(@Nullable T own, @Nullable T shared) {
		if (own != null) {
			return own;
		}
		if (shared == null) {
			throw new IllegalArgumentException("kafka.resilience.outage: a setting was set to nothing");
		}
		return shared;
	}

}
