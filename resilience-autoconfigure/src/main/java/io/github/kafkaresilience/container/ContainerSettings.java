package io.github.kafkaresilience.container;

import java.time.Duration;

import io.github.kafkaresilience.internal.container.WorkerThreads;

/**
 * How a container consumes.
 *
 * @param concurrency worker threads: the most records that run at once
 * @param maxInFlightPerPartition records of one partition in flight before it is paused
 * @param pollTimeout how long one poll waits for records
 * @param commitInterval how often done offsets are committed
 * @param shutdownTimeout how long stopping waits for running handlers
 * @param recheckInterval how often a record waiting for its key looks again, in case a
 * change went unnoticed
 * @param parkAfter a retry due later than this is parked: dropped from memory and read
 * again from its stage shortly before it is due
 * @param virtualThreads whether the workers are virtual threads (Java 21 or later): a
 * handler that waits on I/O then holds no operating system thread, and the concurrency
 * may be in the thousands; platform threads otherwise
 * @since 0.1.0
 */
public record ContainerSettings(int concurrency, int maxInFlightPerPartition, Duration pollTimeout,
		Duration commitInterval, Duration shutdownTimeout, Duration recheckInterval, Duration parkAfter,
		boolean virtualThreads) {

	public ContainerSettings {
		if (concurrency < 1) {
			throw new IllegalArgumentException("concurrency must be at least 1, was " + concurrency);
		}
		if (maxInFlightPerPartition < 1) {
			throw new IllegalArgumentException(
					"max-in-flight-per-partition must be at least 1, was " + maxInFlightPerPartition);
		}
		if (parkAfter.compareTo(Duration.ofSeconds(1)) < 0) {
			throw new IllegalArgumentException("park-after must be at least 1s, was " + parkAfter);
		}
		if (virtualThreads && !WorkerThreads.virtualAvailable()) {
			throw new IllegalArgumentException(
					"Virtual worker threads need Java 21 or later; this is Java " + Runtime.version().feature());
		}
	}

	/** These settings with another concurrency, for a listener that sets its own. */
	public ContainerSettings withConcurrency(int concurrency) {
		return new ContainerSettings(concurrency, this.maxInFlightPerPartition, this.pollTimeout, this.commitInterval,
				this.shutdownTimeout, this.recheckInterval, this.parkAfter, this.virtualThreads);
	}

	/** How long before its due time a parked record is read again. */
	public long rereadLeadMillis() {
		return Math.min(this.parkAfter.toMillis() / 2, 2000);
	}

}
