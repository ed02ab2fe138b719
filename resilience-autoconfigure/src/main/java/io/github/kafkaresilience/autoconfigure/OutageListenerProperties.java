package io.github.kafkaresilience.autoconfigure;

import java.time.Duration;

import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;

import org.jspecify.annotations.Nullable;

/**
 * Outage mode's settings of one listener
 * ({@code kafka.resilience.outage.listeners.<id>.*}), and the base of the shared ones:
 * what a listener does not set is taken from the shared settings.
 *
 * @since 0.1.0
 */
public class OutageListenerProperties {

	/**
	 * Whether a listener holds its records during an outage. When off, every failure
	 * takes the ladder, and DependencyUnavailableException is a transient failure like
	 * any other.
	 */
	private @Nullable Boolean enabled;

	/**
	 * How long nearly every record must have failed, or been held behind a failure,
	 * before the breaker opens: a burst of keys failing at once while other keys still
	 * succeed is over sooner.
	 */
	@MinDuration("0ms")
	private @Nullable Duration minimumDuration;

	/**
	 * The longest the breaker looks at one failure episode (from a transient failure on):
	 * one that has not opened it by then starts over with the next failure.
	 */
	@MinDuration("1ms")
	private @Nullable Duration window;

	/** First attempts the breaker needs in an episode before it may open. */
	@Min(1)
	private @Nullable Integer minimumAttempts;

	/**
	 * Share of those attempts that failed transiently, at least, for the breaker to open
	 * (0 to 1). Permanent failures and records that cannot be deserialized do not count
	 * as failed.
	 */
	@DecimalMin(value = "0", inclusive = false, message = "must be a share of the attempts above 0")
	@DecimalMax(value = "1", message = "must be a share of the attempts, at most 1")
	private @Nullable Double failureRate;

	/** Distinct keys among those failures, at least, for the breaker to open. */
	@Min(1)
	private @Nullable Integer minimumKeys;

	/** Pause before the first probe after the breaker opened. */
	@MinDuration("1ms")
	private @Nullable Duration probeInterval;

	/**
	 * Longest pause between probes: each failed probe doubles the pause up to it. Unset,
	 * it is the probe interval, and probes come at that fixed pace however long the
	 * outage; set it longer for a dependency that asks its callers to back off.
	 */
	@MinDuration("1ms")
	private @Nullable Duration maxProbeInterval;

	/**
	 * How long the listener runs on half its workers after the breaker closed, before it
	 * runs on all of them, so that a dependency that just came back does not get the
	 * whole backlog at once. 0 resumes on every worker at once.
	 */
	@MinDuration("0ms")
	private @Nullable Duration rampUp;

	public @Nullable Boolean getEnabled() {
		return this.enabled;
	}

	public void setEnabled(@Nullable Boolean enabled) {
		this.enabled = enabled;
	}

	public @Nullable Duration getMinimumDuration() {
		return this.minimumDuration;
	}

	public void setMinimumDuration(@Nullable Duration minimumDuration) {
		this.minimumDuration = minimumDuration;
	}

	public @Nullable Duration getWindow() {
		return this.window;
	}

	public void setWindow(@Nullable Duration window) {
		this.window = window;
	}

	public @Nullable Integer getMinimumAttempts() {
		return this.minimumAttempts;
	}

	public void setMinimumAttempts(@Nullable Integer minimumAttempts) {
		this.minimumAttempts = minimumAttempts;
	}

	public @Nullable Double getFailureRate() {
		return this.failureRate;
	}

	public void setFailureRate(@Nullable Double failureRate) {
		this.failureRate = failureRate;
	}

	public @Nullable Integer getMinimumKeys() {
		return this.minimumKeys;
	}

	public void setMinimumKeys(@Nullable Integer minimumKeys) {
		this.minimumKeys = minimumKeys;
	}

	public @Nullable Duration getProbeInterval() {
		return this.probeInterval;
	}

	public void setProbeInterval(@Nullable Duration probeInterval) {
		this.probeInterval = probeInterval;
	}

	public @Nullable Duration getMaxProbeInterval() {
		return this.maxProbeInterval;
	}

	public void setMaxProbeInterval(@Nullable Duration maxProbeInterval) {
		this.maxProbeInterval = maxProbeInterval;
	}

	public @Nullable Duration getRampUp() {
		return this.rampUp;
	}

	public void setRampUp(@Nullable Duration rampUp) {
		this.rampUp = rampUp;
	}

}
