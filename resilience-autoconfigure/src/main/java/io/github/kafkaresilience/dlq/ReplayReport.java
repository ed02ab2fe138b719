package io.github.kafkaresilience.dlq;

import java.time.Duration;
import java.util.List;

/**
 * What a replay did.
 *
 * @param request the request it ran
 * @param scanned dead letters read from the dead-letter topic (up to its end as of the
 * start)
 * @param foreign dead letters skipped because another consumer group owns them (or, on a
 * dead-letter topic named after the group, because they have no {@code owner.group}
 * header)
 * @param matched dead letters of the group that passed every filter
 * @param target the topic the dead letters were sent to: stage 1 of the group's ladder
 * @param published dead letters sent to the target topic and acknowledged; 0 on a dry run
 * @param took how long the replay ran
 * @param stoppedAt where a replay with a limit on the records it reads stopped, in each
 * partition it did not read to its end; empty when it read everything
 * @since 0.1.0
 */
public record ReplayReport(ReplayRequest request, long scanned, long foreign, long matched, String target,
		long published, Duration took, List<ScanPosition> stoppedAt) {

	public ReplayReport {
		stoppedAt = List.copyOf(stoppedAt);
	}

	/** A replay that read its dead-letter topic to the end. */
	public ReplayReport(ReplayRequest request, long scanned, long foreign, long matched, String target, long published,
			Duration took) {
		this(request, scanned, foreign, matched, target, published, took, List.of());
	}

	/** Whether the replay read every dead letter up to the end (as of its start). */
	public boolean isComplete() {
		return this.stoppedAt.isEmpty();
	}

	@Override
	public String toString() {
		return "Replay " + this.request + " into '" + this.target + "': scanned " + this.scanned
				+ ((this.foreign > 0) ? " (" + this.foreign + " of another group, skipped)" : "")
				+ (isComplete() ? "" : " and stopped at its limit, at " + this.stoppedAt) + ", matched " + this.matched
				+ ", " + (this.request.dryRun() ? "published nothing (dry run)" : "published " + this.published)
				+ " in " + this.took.toMillis() + " ms";
	}

}
