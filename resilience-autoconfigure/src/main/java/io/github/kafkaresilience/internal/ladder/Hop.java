package io.github.kafkaresilience.internal.ladder;

import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.DlqReason;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

/**
 * What a record's hop to a retry stage or the dead-letter topic says about it in its
 * protocol headers (docs/PROTOCOL.md, "Headers"). Where it goes is the step's: a stage,
 * or the dead-letter topic with a reason. It holds no record, so a refusal remembered for
 * a later transaction holds no bytes.
 *
 * @param fromMain whether the record leaves the main topic (its first hop)
 * @param retryCount the attempts that failed so far
 * @param lockId the lock the record carries or is to carry, {@code null} for a record
 * without a key
 * @param failure the failure that makes it move, {@code null} for a forward or a follower
 */
record Hop(boolean fromMain, int retryCount, @Nullable String lockId, @Nullable FailureInfo failure) {

	/**
	 * The hop of the record that {@code moving} moves: its count, lock and failure are
	 * the lock's.
	 */
	static Hop of(Lock moving, boolean fromMain) {
		return new Hop(fromMain, moving.retryCount(), moving.id(), moving.failure());
	}

	/** This hop with the failure a dead letter is to tell instead. */
	Hop failedWith(FailureInfo failure) {
		return new Hop(this.fromMain, this.retryCount, this.lockId, failure);
	}

	/**
	 * The headers {@code record} is sent on with.
	 * @param record the record that hops
	 * @param reason the {@code dlq.reason} of a dead letter, {@code null} for a hop to a
	 * stage
	 * @param owner the group that owns the ladder
	 */
	Headers headers(Delivery record, @Nullable DlqReason reason, Ownership owner) {
		return ProtocolHeaders.forHop(record.headers(), this.fromMain, record.topic(), record.partition(),
				record.offset(), this.retryCount, this.lockId, this.failure, reason, owner);
	}

}
