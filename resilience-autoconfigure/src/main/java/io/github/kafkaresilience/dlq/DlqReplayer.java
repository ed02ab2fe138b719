package io.github.kafkaresilience.dlq;

/**
 * Sends dead letters back into their consumer group's ladder, on an operator's request
 * only: never automatically.
 * <p>
 * A replay reads the dead-letter topic from its beginning (or from {@code since}) up to
 * its end as of the start of the replay, without a consumer group and without committing,
 * and sends every dead letter of the group that matches the request to stage 1 of the
 * group's ladder on the main topic, in the dead letter's own partition, at most
 * {@code ratePerSecond} a second. It never writes to the main topic: the other groups
 * that read it never see a replay. A replayed record keeps its key, value and user
 * headers and its {@code original.*} headers; its {@code retry.count} is {@code 0}, and
 * {@code replay.from-dlq} ({@code topic/partition/offset} of the dead letter),
 * {@code replay.timestamp} and {@code owner.group} are added. The other protocol headers
 * are dropped. The group's instances take it in behind every record of its key still in
 * the ladder (docs/PROTOCOL.md, rule 2.0). Dead letters of another group are skipped and
 * counted.
 * <p>
 * Only committed dead letters are read: one written by an aborted transaction was never a
 * dead letter. Neither topic is ever created by a replay.
 * <p>
 * Replaying twice sends twice: the handler must be idempotent, or guarded.
 * <p>
 * The auto-configuration defines one, for the {@code replay} command and the actuator
 * endpoint; an application may inject it to replay from its own code.
 *
 * @since 0.1.0
 */
public interface DlqReplayer {

	/**
	 * Runs a replay and returns once every matching dead letter is sent and acknowledged
	 * (or, on a dry run, counted).
	 * @param request what to replay
	 * @return what the replay did
	 * @throws IllegalArgumentException when {@code from} or {@code to} does not exist
	 * @throws IllegalStateException when a send fails, or the replay is interrupted (its
	 * interrupt flag is then set again); the message says how many were sent
	 */
	ReplayReport replay(ReplayRequest request);

	/**
	 * Runs a replay that reads at most {@code maxScanned} records of the dead-letter
	 * topic: it stops there, and the report says where it stopped in each partition it
	 * did not read to its end. Meant for dry runs asked over the web, which must not read
	 * a topic of millions of records for one request.
	 * @param request what to replay
	 * @param maxScanned the most records of the dead-letter topic to read
	 * @return what the replay did
	 * @throws IllegalArgumentException when {@code from} or {@code to} does not exist
	 * @throws IllegalStateException when a send fails, or the replay is interrupted (its
	 * interrupt flag is then set again); the message says how many were sent
	 */
	ReplayReport replay(ReplayRequest request, long maxScanned);

}
