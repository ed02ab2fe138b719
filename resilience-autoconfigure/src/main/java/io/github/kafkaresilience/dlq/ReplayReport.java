package io.github.kafkaresilience.dlq;

import java.time.Duration;

/**
 * What a replay did.
 *
 * @param request the request it ran
 * @param scanned dead letters read from the dead-letter topic (up to its end as of the start)
 * @param matched dead letters that passed every filter
 * @param published dead letters sent to the target topic and acknowledged; 0 on a dry run
 * @param took how long the replay ran
 * @since 0.1.0
 */
public record ReplayReport(ReplayRequest request, long scanned, long matched, long published, Duration took) {

	@Override
	public String toString() {
		return "Replay " + this.request + ": scanned " + this.scanned + ", matched " + this.matched + ", "
				+ (this.request.dryRun() ? "published nothing (dry run)" : "published " + this.published) + " in "
				+ this.took.toMillis() + " ms";
	}

}
