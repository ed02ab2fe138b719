package io.github.kafkaresilience.internal.actuate;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * At most one scan of a ladder's dead-letter topic at a time for the endpoint's reads (a
 * listing of dead letters, a replay dry run): each opens a consumer and reads up to the
 * scan limit, so a burst of requests must not run many at once. A request that finds its
 * ladder being scanned is answered 429 at once rather than queued.
 */
public final class ScanPermits {

	private final Set<String> scanning = ConcurrentHashMap.newKeySet();

	/**
	 * The permit to scan a dead-letter topic, or {@code null} while another scan of it
	 * runs.
	 * @param dlqTopic the dead-letter topic of the ladder
	 */
	@Nullable Permit take(String dlqTopic) {
		return this.scanning.add(dlqTopic) ? new Permit(dlqTopic) : null;
	}

	/** A scan under way; closing it lets the next one start. */
	final class Permit implements AutoCloseable {

		private final String dlqTopic;

		private Permit(String dlqTopic) {
			this.dlqTopic = dlqTopic;
		}

		@Override
		public void close() {
			ScanPermits.this.scanning.remove(this.dlqTopic);
		}

	}

}
