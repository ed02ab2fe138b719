package io.github.kafkaresilience.internal.idempotency;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.idempotency.Claim;
import io.github.kafkaresilience.idempotency.ClaimHeldException;
import io.github.kafkaresilience.idempotency.IdempotencyKeyResolver;
import io.github.kafkaresilience.idempotency.IdempotencyObserver;
import io.github.kafkaresilience.idempotency.IdempotencyStore;
import io.github.kafkaresilience.ladder.HandlerResult;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionOperations;

/**
 * Runs a listener's handler at most once per idempotency key, as far as the store knows:
 * claims the record's key first, skips the record when its key was completed, completes
 * the key when the handler succeeds and releases it when the handler fails, so that a
 * retry runs.
 * <p>
 * With a transaction, the handler and the completion of its key run in one transaction: a
 * handler whose database writes join it commits them together with the key, or neither.
 *
 * @since 0.1.0
 */
public class IdempotencyGuard {

	private static final Log logger = LogFactory.getLog(IdempotencyGuard.class);

	private final String scope;

	private final IdempotencyStore store;

	private final IdempotencyKeyResolver keys;

	private final Duration lease;

	private final @Nullable TransactionOperations transactions;

	private final IdempotencyObserver observer;

	/**
	 * @param scope the listener whose keys this guard claims
	 * @param store where claims are kept
	 * @param keys gives a record's idempotency key
	 * @param lease how long a claim holds before another attempt may take it over
	 * @param transactions runs the handler and the completion of its key in one
	 * transaction, or {@code null} to complete the key after the handler returns
	 * @param observer hears skipped records and held keys
	 */
	public IdempotencyGuard(String scope, IdempotencyStore store, IdempotencyKeyResolver keys, Duration lease,
			@Nullable TransactionOperations transactions, IdempotencyObserver observer) {
		this.scope = scope;
		this.store = store;
		this.keys = keys;
		this.lease = lease;
		this.transactions = transactions;
		this.observer = observer;
	}

	/**
	 * Runs the handler of a record unless its key was completed.
	 * @param record the deserialized record
	 * @param handler runs the listener method and says how it went
	 * @return the handler's result; success for a skipped record; a transient failure
	 * when the key is held elsewhere or the store failed; a permanent one when no key can
	 * be found
	 */
	public HandlerResult run(ConsumerRecord<?, ?> record, Supplier<HandlerResult> handler) {
		Admission admission = admit(record);
		Claim claim = admission.claim();
		if (claim == null) {
			return Objects.requireNonNull(admission.decided()); // no claim: decided
		}
		HandlerResult result;
		try {
			// one record is a call of its own: its claim completed with its success, in
			// the transaction if any
			result = callCompleting(handler,
					(outcome) -> (outcome.outcome() == HandlerResult.Outcome.SUCCESS) ? List.of(claim) : List.of());
		}
		catch (RuntimeException ex) {
			result = HandlerResult.failed(ex);
		}
		if (result.outcome() != HandlerResult.Outcome.SUCCESS) {
			release(claim, result);
		}
		return result;
	}

	/**
	 * Ends the attempt of a record whose method's result completed later, run under a
	 * claim from {@link #admit}: completes the claim when the attempt succeeded, releases
	 * it otherwise. Call it on a thread that may block on the store.
	 * @param claim the record's claim
	 * @param result how the attempt went
	 * @return {@code result}, or a failure when the claim of a success could not be
	 * completed
	 */
	public HandlerResult finish(Claim claim, HandlerResult result) {
		HandlerResult outcome = result;
		if (outcome.outcome() == HandlerResult.Outcome.SUCCESS) {
			try {
				this.store.complete(claim);
				return outcome;
			}
			catch (RuntimeException ex) {
				outcome = HandlerResult.failed(ex);
			}
		}
		release(claim, outcome);
		return outcome;
	}

	/**
	 * Claims a record's idempotency key before its batch runs.
	 * @param record the deserialized record
	 * @return the claim, when the record may run; otherwise what the record's outcome is
	 * without running: success for a key completed before, a transient failure when the
	 * key is held elsewhere or the store failed, a permanent one when no key can be found
	 */
	public Admission admit(ConsumerRecord<?, ?> record) {
		String key;
		try {
			key = this.keys.keyOf(record);
		}
		catch (RuntimeException ex) {
			return Admission.decided(HandlerResult.failed(new PermanentFailureException(
					"Cannot compute the idempotency key of " + where(record) + ": " + ex.getMessage(), ex)));
		}
		if (!IdempotencyKeyResolver.isUsable(key)) {
			return Admission.decided(HandlerResult.failed(new PermanentFailureException("The idempotency key of "
					+ where(record) + " is empty; the key resolver must give every record a key")));
		}
		Claim claim;
		try {
			claim = this.store.claim(this.scope, key, this.lease);
		}
		catch (RuntimeException ex) {
			return Admission.decided(HandlerResult.failed(ex)); // the store is down: a
																// transient failure,
																// retried
		}
		if (claim.status() == Claim.Status.COMPLETED) {
			this.observer.skipped();
			if (logger.isDebugEnabled()) {
				logger.debug("Skipping " + where(record) + ": idempotency key '" + key + "' was completed at "
						+ claim.since());
			}
			return Admission.decided(HandlerResult.success());
		}
		if (claim.status() == Claim.Status.HELD) {
			this.observer.held();
			return Admission.decided(HandlerResult.failed(new ClaimHeldException(this.scope, key, claim.since())));
		}
		return new Admission(null, claim);
	}

	/**
	 * Makes one call of the method on claimed records: in the guard's transaction, if it
	 * has one, together with the completion of the claims of the records the call says
	 * succeeded; the transaction is rolled back when none did.
	 * @param call calls the method and says how it went
	 * @param succeeded the claims of the records that succeeded, by what the call gave
	 * @return what the call gave
	 */
	public <T> T callCompleting(Supplier<T> call, Function<T, List<Claim>> succeeded) {
		TransactionOperations transactions = this.transactions;
		if (transactions == null) {
			T outcome = call.get();
			succeeded.apply(outcome).forEach(this.store::complete);
			return outcome;
		}
		T result = transactions.execute((status) -> {
			T outcome = call.get();
			List<Claim> done = succeeded.apply(outcome);
			if (done.isEmpty()) {
				status.setRollbackOnly();
			}
			done.forEach(this.store::complete);
			return outcome;
		});
		if (result == null) {
			throw new IllegalStateException("The transaction gave no result");
		}
		return result;
	}

	/**
	 * Releases the claim of a record that failed or did not run, so that its next attempt
	 * runs.
	 * @param claim the claim
	 * @param result the record's outcome; a failure to release is added to its failure
	 */
	public void release(Claim claim, HandlerResult result) {
		try {
			this.store.release(claim);
		}
		catch (RuntimeException ex) {
			// the claim stays until its lease runs out; until then the record's retries
			// find it held
			if (result.failure() != null) {
				result.failure().addSuppressed(ex);
			}
			logger.warn("Could not release the claim on idempotency key '" + claim.key() + "' of '" + this.scope
					+ "'; it is held until kafka.resilience.idempotency.lease runs out", ex);
		}
	}

	/**
	 * What the guard decided about a record before it runs.
	 *
	 * @param decided the record's outcome without running, {@code null} when it may run
	 * @param claim the claim the record runs under, {@code null} when it does not run
	 */
	public record Admission(@Nullable HandlerResult decided, @Nullable Claim claim) {

		static Admission decided(HandlerResult result) {
			return new Admission(result, null);
		}

	}

	private static String where(ConsumerRecord<?, ?> record) {
		return record.topic() + "/" + record.partition() + "/" + record.offset();
	}

}
