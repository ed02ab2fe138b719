package io.github.kafkaresilience.ladder;

/**
 * How a move keeps its two writes, the lock and the published record, consistent
 * (docs/PROTOCOL.md, rule 9).
 *
 * @since 0.1.0
 */
public enum DualWrite {

	/**
	 * Lock first, publish second; a failed publish puts the lock back and the record is
	 * delivered again. A crash between the two heals when the record is delivered again.
	 */
	COMPENSATE,

	/**
	 * The lock writes, the publish and the source offset commit go in one Kafka
	 * transaction; lock and retry topics are read committed and an instance that lost its
	 * partitions cannot commit.
	 */
	TRANSACTION

}
