package io.github.kafkaresilience.idempotency;

/**
 * Thrown when an attempt completes a claim that another attempt took over after its lease
 * ran out. The guard reports the attempt as failed; in a transaction, the handler's own
 * writes roll back with it.
 *
 * @since 0.1.0
 */
public class ClaimLostException extends RuntimeException {

	public ClaimLostException(Claim claim) {
		super("The claim on idempotency key '" + claim.key() + "' of '" + claim.scope()
				+ "' was taken over by another attempt after its lease ran out; raise kafka.resilience.idempotency.lease"
				+ " above the longest handler run");
	}

}
