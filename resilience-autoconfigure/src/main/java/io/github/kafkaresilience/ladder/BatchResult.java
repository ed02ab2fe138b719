package io.github.kafkaresilience.ladder;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * What running a batch handler gave.
 *
 * @param results the outcome of each record of the batch, in the batch's order;
 * {@code null} for a record that did not run (the method failed on an earlier one and
 * named it, or an earlier record of its key did not succeed)
 * @param bisections how many times the batch, or a part of it, was split in halves to
 * find the records that fail on their own
 * @since 0.1.0
 */
public record BatchResult(List<@Nullable HandlerResult> results, int bisections) {

	public BatchResult {
		results = Collections.unmodifiableList(new ArrayList<>(results));
	}

	/** A batch run without a split. */
	public static BatchResult of(List<@Nullable HandlerResult> results) {
		return new BatchResult(results, 0);
	}

}
