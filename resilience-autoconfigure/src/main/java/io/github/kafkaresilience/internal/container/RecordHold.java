package io.github.kafkaresilience.internal.container;

import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.ladder.Step;

/**
 * The one seam where a policy may hold a record back instead of letting its step go on:
 * after its run, before its failure handling, and when its failure handling would begin.
 * The outage hold is one ({@link OutageHold}); a listener without it holds nothing
 * ({@link #NONE}).
 */
interface RecordHold {

	/** Holds nothing. */
	RecordHold NONE = new RecordHold() {

		@Override
		public boolean heldAfter(RecordTask task, Step step) {
			return false;
		}

		@Override
		public boolean defers(RecordTask task, Step step) {
			return false;
		}

		@Override
		public boolean holdsFailureHandling(RecordTask task, HandlerResult failure) {
			return false;
		}

	};

	/** Looks at a record's step after its run; returns true when it holds the record. */
	boolean heldAfter(RecordTask task, Step step);

	/**
	 * Whether the failure handling of a record whose run failed is put off (it is then
	 * queued later); returns false to let it be queued now.
	 */
	boolean defers(RecordTask task, Step step);

	/** Whether the failure handling of a record, about to run, is held instead. */
	boolean holdsFailureHandling(RecordTask task, HandlerResult failure);

}
