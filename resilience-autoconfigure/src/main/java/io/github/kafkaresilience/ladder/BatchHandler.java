package io.github.kafkaresilience.ladder;

import java.util.List;

/**
 * Runs the user's batch handler on records that may all run now: deserializes them and
 * invokes the listener method with the batch.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface BatchHandler {

	/**
	 * Runs the handler on a batch.
	 * @param records the records, in the order the method gets them; records of one key
	 * (in one partition) come in offset order
	 * @return the outcome of each record, in order; a record without one did not run (the
	 * method failed on an earlier one and named it, or an earlier record of its key did
	 * not succeed), and runs again later without an attempt counted
	 */
	BatchResult handle(List<Delivery> records);

}
