package io.github.kafkaresilience.idempotency;

import java.time.Duration;
import java.time.Instant;

/**
 * Remembers which idempotency keys were claimed and completed. Implementations must
 * decide races: of two attempts that claim the same key at once, exactly one gets it.
 * <p>
 * A key is scoped: the same key completed by one listener does not stop another listener.
 *
 * @since 0.1.0
 * @see JdbcIdempotencyStore
 * @see InMemoryIdempotencyStore
 */
public interface IdempotencyStore {

	/**
	 * Claims a key for one attempt.
	 * @param scope the listener the key belongs to
	 * @param key the idempotency key
	 * @param lease how long a claim holds without being completed or released; an older
	 * one was abandoned (its instance crashed) and may be taken over
	 * @return the claim: {@link Claim.Status#CLAIMED} when this attempt may run,
	 * {@link Claim.Status#COMPLETED} when the key was completed before, or
	 * {@link Claim.Status#HELD} when another attempt holds a live claim on it
	 */
	Claim claim(String scope, String key, Duration lease);

	/**
	 * Marks a claimed key completed. Runs in the caller's transaction when there is one,
	 * so that the completion commits or rolls back with the handler's own writes.
	 * @param claim a claim this store gave with status {@link Claim.Status#CLAIMED}
	 * @throws ClaimLostException if the claim is no longer this attempt's: it outlived
	 * its lease and another attempt took it over
	 */
	void complete(Claim claim);

	/**
	 * Gives a claimed key up so that a later attempt can claim it. Does nothing when the
	 * claim is no longer this attempt's.
	 * @param claim a claim this store gave with status {@link Claim.Status#CLAIMED}
	 */
	void release(Claim claim);

	/**
	 * Forgets keys last changed before the given time: completed keys, and claims
	 * abandoned long ago.
	 * @param before the cut-off
	 * @return how many keys were forgotten
	 */
	int expire(Instant before);

}
