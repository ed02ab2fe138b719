package io.github.kafkaresilience.internal.container;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static io.github.kafkaresilience.internal.container.Records.ORDERS_0;
import static io.github.kafkaresilience.internal.container.Records.task;
import static io.github.kafkaresilience.internal.container.Records.work;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The step of a {@code @SendTo} record in {@code transaction} mode waits until the
 * records before it in its partition are done, so that the offset its transaction commits
 * passes it.
 */
class OffsetLineTests {

	private final PartitionWork work = work(ORDERS_0, 10);

	private final OffsetLine line = new OffsetLine();

	private final List<Long> stepped = new ArrayList<>();

	@Test
	void aRecordFirstPendingInItsPartitionTakesItsStepAtOnce() {
		RecordTask first = taken(10, "a");
		taken(11, "b");
		this.line.await(this.work, 10, () -> this.stepped.add(10L));
		assertThat(this.stepped).containsExactly(10L);
		assertThat(this.line.size()).isZero();
		assertThat(first.state()).isEqualTo(RecordState.QUEUED);
	}

	@Test
	void aRecordBehindOthersTakesItsStepOnceEveryRecordBeforeItIsDoneInWhateverOrder() {
		RecordTask first = taken(10, "a");
		RecordTask second = taken(11, "b");
		taken(12, "c");
		this.line.await(this.work, 12, () -> this.stepped.add(12L));
		Records.done(this.work, second);
		this.line.released(this.work);
		assertThat(this.stepped).as("10 is still pending").isEmpty();
		Records.done(this.work, first);
		this.line.released(this.work);
		assertThat(this.stepped).containsExactly(12L);
		assertThat(this.line.size()).isZero();
	}

	@Test
	void recordsInLineTakeTheirStepsInOffsetOrderAsEachBecomesFirstPending() {
		RecordTask first = taken(10, "a");
		RecordTask second = taken(11, "b");
		RecordTask third = taken(12, "c");
		this.line.await(this.work, 12, () -> this.stepped.add(12L));
		this.line.await(this.work, 11, () -> this.stepped.add(11L));
		Records.done(this.work, first);
		this.line.released(this.work);
		assertThat(this.stepped).containsExactly(11L);
		Records.done(this.work, second);
		this.line.released(this.work);
		assertThat(this.stepped).containsExactly(11L, 12L);
		Records.done(this.work, third);
	}

	@Test
	void aRevokedPartitionsRecordsInLineNeverTakeTheirStep() {
		RecordTask first = taken(10, "a");
		taken(11, "b");
		this.line.await(this.work, 11, () -> this.stepped.add(11L));
		Records.done(this.work, first);
		this.work.revoke();
		this.line.released(this.work);
		assertThat(this.stepped).isEmpty();
		assertThat(this.line.size()).isZero();
	}

	private RecordTask taken(long offset, String key) {
		RecordTask task = task(this.work, offset, key);
		assertThat(this.work.take(task)).isEqualTo(PartitionWork.Taken.RUN);
		return task;
	}

}
