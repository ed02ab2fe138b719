package com.example.payments;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.springframework.stereotype.Component;

/**
 * The payments ledger, kept in memory: it stands in for a table that
 * {@link LedgerListener} writes with one bulk insert per batch. Its behaviour is fixed so
 * that a run can be checked: the first insert that holds {@link #BUSY_ONCE_PAYMENT} times
 * out at that row, the way a JDBC batch stops at a row whose lock it could not get; the
 * rows before it are booked, and the rows after it are not written. Every later insert of
 * that payment succeeds.
 * <p>
 * The payment id is the table's unique key: a payment booked already is skipped (an
 * {@code INSERT ... ON CONFLICT DO NOTHING}), as a redelivered record must be.
 * Thread-safe: batches of different customers run on several worker threads.
 */
@Component
public class Ledger {

	/** The payment whose first booking times out. */
	public static final String BUSY_ONCE_PAYMENT = "c06-5";

	private final Map<String, Entry> entries = new LinkedHashMap<>();

	private final List<Insert> inserts = new ArrayList<>();

	private final Map<String, Integer> failedBookings = new TreeMap<>();

	private int skipped;

	/**
	 * A payment to book.
	 *
	 * @param customer the customer, the record key
	 * @param payment the payment id
	 * @param amount the amount, e.g. {@code EUR 42.10}
	 * @param stage where the record was read: {@code main} or a retry stage such as
	 * {@code retry.2s}
	 */
	public record Row(String customer, String payment, String amount, String stage) {
	}

	/**
	 * A booked payment.
	 *
	 * @param customer the customer, the record key
	 * @param payment the payment id
	 * @param amount the amount, e.g. {@code EUR 42.10}
	 * @param stage where the record was read: {@code main} or a retry stage such as
	 * {@code retry.2s}
	 * @param insert the number of the insert that booked it, from 1
	 */
	public record Entry(String customer, String payment, String amount, String stage, int insert) {
	}

	/**
	 * One bulk insert.
	 *
	 * @param number its number, from 1
	 * @param rows the rows it was given
	 * @param booked how many of them it wrote (skipped duplicates included): all of them,
	 * or those before the row it failed on
	 * @param failedOn the payment of the row it failed on, or {@code null}
	 */
	public record Insert(int number, int rows, int booked, String failedOn) {
	}

	/**
	 * Books payments in one insert, in the order given.
	 * @param rows the payments
	 * @throws BookingFailedException at a row the insert could not write: the rows before
	 * it are booked, it and the rows after it are not
	 */
	public synchronized void insert(List<Row> rows) {
		int number = this.inserts.size() + 1;
		for (int i = 0; i < rows.size(); i++) {
			Row row = rows.get(i);
			if (BUSY_ONCE_PAYMENT.equals(row.payment()) && !this.failedBookings.containsKey(row.payment())
					&& !this.entries.containsKey(row.payment())) {
				this.failedBookings.merge(row.payment(), 1, Integer::sum);
				this.inserts.add(new Insert(number, rows.size(), i, row.payment()));
				throw new BookingFailedException("lock wait timeout on the ledger row of " + row.payment(), i);
			}
			if (this.entries.putIfAbsent(row.payment(),
					new Entry(row.customer(), row.payment(), row.amount(), row.stage(), number)) != null) {
				this.skipped++;
			}
		}
		this.inserts.add(new Insert(number, rows.size(), rows.size(), null));
	}

	/** The booked payments, in the order they were booked. */
	public synchronized List<Entry> entries() {
		return List.copyOf(this.entries.values());
	}

	/** Every insert, in the order they ran. */
	public synchronized List<Insert> inserts() {
		return List.copyOf(this.inserts);
	}

	/** The payments an insert failed on, with how many times it did. */
	public synchronized Map<String, Integer> failedBookings() {
		return new TreeMap<>(this.failedBookings);
	}

	/** How many rows were skipped because their payment was booked already. */
	public synchronized int skipped() {
		return this.skipped;
	}

	/** How many of the given payments are booked. */
	public synchronized int bookedOf(Set<String> payments) {
		return (int) payments.stream().filter(this.entries::containsKey).count();
	}

	/**
	 * An insert stopped at a row: like a JDBC batch, it tells how many rows it wrote
	 * before.
	 */
	public static class BookingFailedException extends RuntimeException {

		private final int booked;

		BookingFailedException(String message, int booked) {
			super(message);
			this.booked = booked;
		}

		/**
		 * How many rows the insert wrote before the one it failed on: that row's index.
		 */
		public int booked() {
			return this.booked;
		}

	}

}
