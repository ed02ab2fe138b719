package io.github.kafkaresilience.internal.container.transactions;

import org.jspecify.annotations.Nullable;

/**
 * The step each thread runs, or whose write's completion it runs: what puts a lock write
 * or a publish in the transaction of the record's step. {@link TransactionalWrites}
 * enters a step around it; {@link TransactionalLocks} and {@link TransactionalPublisher}
 * join its transaction when they write.
 */
final class TransactionScope {

	private final ThreadLocal<TransactionStep> steps = new ThreadLocal<>();

	private final Transactions transactions;

	TransactionScope(Transactions transactions) {
		this.transactions = transactions;
	}

	/**
	 * The step the calling thread runs, or whose write's completion it runs; {@code null}
	 * if none.
	 */
	@Nullable TransactionStep current() {
		return this.steps.get();
	}

	/** The calling thread runs {@code step}, or the completion of one of its writes. */
	void enter(TransactionStep step) {
		this.steps.set(step);
	}

	/** The calling thread runs no step any more. */
	void leave() {
		this.steps.remove();
	}

	/** The step of the calling thread, in its transaction once it writes. */
	TransactionStep inTransaction() {
		TransactionStep current = this.steps.get();
		if (current == null) {
			throw new IllegalStateException("In transaction mode a lock write or publish runs in the step of a record");
		}
		this.transactions.join(current);
		return current;
	}

}
