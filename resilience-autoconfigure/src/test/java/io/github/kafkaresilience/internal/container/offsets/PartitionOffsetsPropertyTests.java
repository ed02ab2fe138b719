package io.github.kafkaresilience.internal.container.offsets;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The run-length offset sets behind the commit boundary and parking agree, after any
 * sequence of operations, with a plain sorted set of offsets.
 */
class PartitionOffsetsPropertyTests {

	enum Op {

		ADD, REMOVE, PARK, UNPARK

	}

	record Action(Op op, long offset) {
	}

	@Provide
	Arbitrary<List<Action>> actions() {
		Arbitrary<Action> action = Combinators.combine(Arbitraries.of(Op.class), Arbitraries.longs().between(0, 60))
			.as(Action::new);
		return action.list().ofMaxSize(300);
	}

	@Property(tries = 500)
	void offsetRangesBehaveLikeASortedSet(@ForAll("actions") List<Action> actions) {
		OffsetRuns ranges = new OffsetRuns();
		TreeSet<Long> model = new TreeSet<>();
		for (Action action : actions) {
			switch (action.op()) {
				case ADD, PARK -> assertThat(ranges.add(action.offset())).isEqualTo(model.add(action.offset()));
				case REMOVE, UNPARK ->
					assertThat(ranges.remove(action.offset())).isEqualTo(model.remove(action.offset()));
			}
			assertThat(ranges.size()).isEqualTo(model.size());
			assertThat(ranges.first()).isEqualTo(model.isEmpty() ? -1 : model.first());
			assertThat(ranges.last()).isEqualTo(model.isEmpty() ? -1 : model.last());
			for (long offset = 0; offset <= 61; offset++) {
				assertThat(ranges.contains(offset)).isEqualTo(model.contains(offset));
				Long ceiling = model.ceiling(offset);
				assertThat(ranges.ceiling(offset)).isEqualTo((ceiling != null) ? ceiling : -1);
			}
			assertThat(ranges.runs()).isEqualTo(runsOf(model));
		}
	}

	@Property(tries = 500)
	void theTrackerCommitsBelowEveryPendingRecordParkedOrNot(@ForAll("actions") List<Action> actions) {
		PartitionOffsets tracker = new PartitionOffsets();
		TreeSet<Long> pending = new TreeSet<>();
		TreeSet<Long> parked = new TreeSet<>();
		long next = -1;
		for (Action action : actions) {
			long offset = action.offset();
			switch (action.op()) {
				case ADD -> {
					tracker.add(offset);
					pending.add(offset);
					next = Math.max(next, offset + 1);
				}
				case REMOVE -> {
					long expected = pending.isEmpty() || pending.first() != offset ? committable(pending, next)
							: committable(without(pending, offset), next);
					assertThat(tracker.committableOnceDone(offset)).isEqualTo(expected);
					tracker.done(offset);
					pending.remove(offset);
					parked.remove(offset);
				}
				case PARK -> {
					tracker.park(offset);
					if (pending.contains(offset)) {
						parked.add(offset);
					}
				}
				case UNPARK -> assertThat(tracker.unpark(offset)).isEqualTo(parked.remove(offset));
			}
			assertThat(tracker.committable()).isEqualTo(committable(pending, next));
			assertThat(tracker.inFlight()).isEqualTo(pending.size() - parked.size());
			assertThat(tracker.parkedCount()).isEqualTo(parked.size());
		}
	}

	@Test
	void aHundredThousandParkedRecordsInARowCostOneRun() {
		PartitionOffsets tracker = new PartitionOffsets();
		for (long offset = 0; offset < 100_000; offset++) {
			tracker.add(offset);
			tracker.park(offset);
		}
		tracker.add(100_000);
		assertThat(tracker.parkedCount()).isEqualTo(100_000);
		assertThat(tracker.parkedRuns()).isEqualTo(1);
		assertThat(tracker.inFlight()).isEqualTo(1);
		assertThat(tracker.committable()).isZero();
	}

	private static long committable(TreeSet<Long> pending, long next) {
		return pending.isEmpty() ? next : pending.first();
	}

	private static TreeSet<Long> without(TreeSet<Long> set, long offset) {
		TreeSet<Long> copy = new TreeSet<>(set);
		copy.remove(offset);
		return copy;
	}

	private static int runsOf(TreeSet<Long> model) {
		int runs = 0;
		long previous = Long.MIN_VALUE;
		for (long offset : model) {
			if (offset != previous + 1) {
				runs++;
			}
			previous = offset;
		}
		return runs;
	}

	/**
	 * What a transaction commits with the records it finishes is what the tracker commits
	 * once they are done.
	 */
	@Property(tries = 500)
	void committingOnceSomeAreDoneIsCommittingAfterMarkingThemDone(@ForAll("actions") List<Action> actions,
			@ForAll("offsets") Set<Long> finishing) {
		PartitionOffsets tracker = new PartitionOffsets();
		PartitionOffsets marked = new PartitionOffsets();
		for (Action action : actions) {
			if (action.op() == Op.ADD) {
				tracker.add(action.offset());
				marked.add(action.offset());
			}
			else if (action.op() == Op.REMOVE) {
				tracker.done(action.offset());
				marked.done(action.offset());
			}
		}
		finishing.forEach(marked::done);
		assertThat(tracker.committableOnceDone(finishing)).isEqualTo(marked.committable());
	}

	@Provide
	Arbitrary<Set<Long>> offsets() {
		return Arbitraries.longs().between(0, 60).set().ofMaxSize(20);
	}

}
