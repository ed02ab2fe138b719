package io.github.kafkaresilience.internal.support;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Callbacks registered by observers (meters, for instance) and run on an event; one that
 * throws is logged and does not keep the others, or the caller, from going on.
 *
 * @since 0.1.0
 */
public final class Callbacks {

	private static final Log logger = LogFactory.getLog(Callbacks.class);

	private final List<Runnable> callbacks = new CopyOnWriteArrayList<>();

	private final String event;

	/**
	 * @param event what the callbacks are run on, for the log
	 */
	public Callbacks(String event) {
		this.event = event;
	}

	public void add(Runnable callback) {
		this.callbacks.add(callback);
	}

	public void run() {
		for (Runnable callback : this.callbacks) {
			try {
				callback.run();
			}
			catch (RuntimeException ex) {
				logger.warn("A callback on " + this.event + " failed", ex);
			}
		}
	}

}
