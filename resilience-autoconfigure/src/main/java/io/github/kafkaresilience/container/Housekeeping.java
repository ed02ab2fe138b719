package io.github.kafkaresilience.container;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.github.kafkaresilience.lock.LockReaper;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * A container's housekeeping: while it runs, the reapers of its main topics look for zombie
 * locks every interval, on a thread of their own; their admin client is closed with the
 * consumer. Does nothing for a container without reaping.
 */
final class Housekeeping {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(OrderedRetryContainer.class);

	private final String id;

	private final OrderedRetryContainer.@Nullable Reaping reaping;

	private volatile @Nullable ScheduledExecutorService executor;

	Housekeeping(String id, OrderedRetryContainer.@Nullable Reaping reaping) {
		this.id = id;
		this.reaping = reaping;
	}

	/** Has the reapers look every interval, the first time one interval from now. */
	void start() {
		OrderedRetryContainer.Reaping reaping = this.reaping;
		if (reaping != null) {
			ScheduledExecutorService executor = Executors
				.newSingleThreadScheduledExecutor(Workers.threads("kafka-resilience-" + this.id + "-reaper-"));
			this.executor = executor;
			long interval = reaping.interval().toMillis();
			executor.scheduleWithFixedDelay(() -> reap(reaping), interval, interval, TimeUnit.MILLISECONDS);
		}
	}

	/** Stops looking: a look under way is interrupted. */
	void stop() {
		ScheduledExecutorService executor = this.executor;
		if (executor != null) {
			executor.shutdownNow();
		}
	}

	/** Closes the reapers' admin client, once the container's consumer is closed. */
	void closeAdmin() {
		OrderedRetryContainer.Reaping reaping = this.reaping;
		if (reaping != null) {
			try {
				reaping.admin().close();
			}
			catch (Exception ex) {
				logger.debug("Could not close the reaper's admin client", ex);
			}
		}
	}

	/** One look of every reaper; a failure is logged and the next look tries again. */
	private void reap(OrderedRetryContainer.Reaping reaping) {
		try {
			for (LockReaper reaper : reaping.reapers()) {
				reaper.reap();
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Listener '" + this.id + "' could not look for zombie locks; will try again", ex);
		}
	}

}
