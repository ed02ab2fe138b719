package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.github.kafkaresilience.internal.lock.LockReaper;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * A container's housekeeping: while it runs, the reapers of its main topics look for
 * zombie locks every interval, on a thread of their own. Each start makes them anew, with
 * an admin client of their own that is closed after the consumer, so a container stopped
 * and started again does not look through a closed client. Does nothing for a container
 * without reaping.
 */
final class Housekeeping {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(Housekeeping.class);

	/** How long closing the admin client waits for an interrupted look to end. */
	private static final Duration LOOK_END = Duration.ofSeconds(5);

	private final String id;

	private final RetryContainer.@Nullable Reaping reaping;

	private volatile @Nullable ScheduledExecutorService executor;

	/** The reapers of the current run, until their admin client is closed. */
	private volatile RetryContainer.@Nullable Reapers reapers;

	Housekeeping(String id, RetryContainer.@Nullable Reaping reaping) {
		this.id = id;
		this.reaping = reaping;
	}

	/** Has the reapers look every interval, the first time one interval from now. */
	void start() {
		RetryContainer.Reaping reaping = this.reaping;
		if (reaping != null) {
			RetryContainer.Reapers reapers = reaping.open().get();
			this.reapers = reapers;
			ScheduledExecutorService executor = Executors
				.newSingleThreadScheduledExecutor(WorkerThreads.platform("kafka-resilience-" + this.id + "-reaper-"));
			this.executor = executor;
			long interval = reaping.interval().toMillis();
			executor.scheduleWithFixedDelay(() -> reap(reapers), interval, interval, TimeUnit.MILLISECONDS);
		}
	}

	/** Stops looking: a look under way is interrupted. */
	void stop() {
		ScheduledExecutorService executor = this.executor;
		if (executor != null) {
			executor.shutdownNow();
		}
	}

	/**
	 * Closes the reapers' admin client, once the container's consumer is closed, and once
	 * a look under way (interrupted by {@link #stop()}) has ended, for up to
	 * {@link #LOOK_END}: no look goes on through a closed client.
	 */
	void closeAdmin() {
		awaitLookEnded();
		RetryContainer.Reapers reapers = this.reapers;
		this.reapers = null;
		if (reapers != null) {
			try {
				reapers.admin().close();
			}
			catch (Exception ex) {
				logger.debug("Could not close the reaper's admin client", ex);
			}
		}
	}

	private void awaitLookEnded() {
		ScheduledExecutorService executor = this.executor;
		if (executor == null) {
			return;
		}
		try {
			if (!executor.awaitTermination(LOOK_END.toMillis(), TimeUnit.MILLISECONDS)) {
				logger.debug("Listener '" + this.id + "' closes the reaper's admin client during a look");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** One look of every reaper; a failure is logged and the next look tries again. */
	private void reap(RetryContainer.Reapers reapers) {
		try {
			for (LockReaper reaper : reapers.reapers()) {
				reaper.reap();
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Listener '" + this.id + "' could not look for zombie locks; will try again", ex);
		}
	}

}
