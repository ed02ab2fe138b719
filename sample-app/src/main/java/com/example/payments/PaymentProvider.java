package com.example.payments;

import java.time.Duration;
import java.util.Set;

import io.github.kafkaresilience.PermanentFailureException;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * A payment provider that flaps, the way real ones do. Its behaviour is fixed so that a
 * run can be checked:
 * <ul>
 * <li>for the customers in {@link #OUTAGE_CUSTOMERS} it is unavailable for the first
 * {@code sample.outage} (12 s) of the run: their first payment fails, climbs the 2 s, 5 s
 * and 10 s retry stages and goes through once the outage is over; their later payments
 * wait behind it, in order;</li>
 * <li>payment {@link #TIMEOUT_PAYMENT} never gets an answer: it uses up its attempts and
 * is dead-lettered as {@code exhausted}, then the rest of its customer goes on;</li>
 * <li>the cards of {@link #DECLINED_PAYMENTS} are declined: a permanent failure,
 * dead-lettered at once as {@code permanent}.</li>
 * </ul>
 * Every other charge succeeds.
 */
@Component
public class PaymentProvider {

	/** Customers for whom the provider is down at the start of the run. */
	public static final Set<String> OUTAGE_CUSTOMERS = Set.of("c03", "c08");

	/** The payment the provider never answers. */
	public static final String TIMEOUT_PAYMENT = "c05-4";

	/** Payments whose card is declined. */
	public static final Set<String> DECLINED_PAYMENTS = Set.of("c10-7", "c11-2");

	private final Duration outage;

	private volatile long startNanos = System.nanoTime();

	public PaymentProvider(@Value("${sample.outage:12s}") Duration outage) {
		this.outage = outage;
	}

	/** Starts the outage clock: called when the first payment is sent. */
	void start() {
		this.startNanos = System.nanoTime();
	}

	/**
	 * Charges a payment.
	 * @param customer the customer (the record key)
	 * @param payment the payment id
	 * @throws ProviderUnavailableException when the provider is down or does not answer
	 * (retried)
	 * @throws CardDeclinedException when the card is declined (not retried)
	 */
	public void charge(String customer, String payment) {
		if (DECLINED_PAYMENTS.contains(payment)) {
			throw new CardDeclinedException("card of " + customer + " declined for " + payment);
		}
		if (TIMEOUT_PAYMENT.equals(payment)) {
			throw new ProviderUnavailableException("provider did not answer for " + payment);
		}
		if (OUTAGE_CUSTOMERS.contains(customer) && System.nanoTime() - this.startNanos < this.outage.toNanos()) {
			throw new ProviderUnavailableException("provider unavailable (503) for " + customer);
		}
	}

	/** The provider is down or slow: worth trying again later. */
	public static class ProviderUnavailableException extends RuntimeException {

		ProviderUnavailableException(String message) {
			super(message);
		}

	}

	/** The card was declined: trying again will not help. */
	public static class CardDeclinedException extends PermanentFailureException {

		CardDeclinedException(String message) {
			super(message);
		}

	}

}
