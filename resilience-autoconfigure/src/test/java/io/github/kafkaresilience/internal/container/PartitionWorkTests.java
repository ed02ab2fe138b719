package io.github.kafkaresilience.internal.container;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

import io.github.kafkaresilience.internal.container.PartitionWork.Taken;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.internal.lock.Lock;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import static io.github.kafkaresilience.internal.container.Records.ORDERS_0;
import static io.github.kafkaresilience.internal.container.Records.record;
import static io.github.kafkaresilience.internal.container.Records.task;
import static io.github.kafkaresilience.internal.container.Records.work;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A partition's per-key queues, its in-flight bound, parking, replay admissions and the
 * offsets it lets commit.
 */
class PartitionWorkTests {

	private final PartitionWork work = work(ORDERS_0, 4);

	@Test
	void aKeyRunsOneRecordAtATimeInOffsetOrderWhileOtherKeysRunAtOnce() {
		RecordTask a0 = task(this.work, 0, "a");
		RecordTask a1 = task(this.work, 1, "a");
		RecordTask b2 = task(this.work, 2, "b");
		RecordTask a3 = task(this.work, 3, "a");
		assertThat(this.work.take(a0)).isEqualTo(Taken.RUN);
		assertThat(this.work.take(a1)).isEqualTo(Taken.QUEUED);
		assertThat(this.work.take(b2)).isEqualTo(Taken.RUN);
		assertThat(this.work.take(a3)).isEqualTo(Taken.QUEUED);
		assertThat(Records.done(this.work, a0)).isSameAs(a1);
		assertThat(Records.done(this.work, b2)).isNull();
		assertThat(Records.done(this.work, a1)).isSameAs(a3);
		assertThat(Records.done(this.work, a3)).isNull();
		assertThat(this.work.committable()).hasValue(4);
	}

	@Test
	void recordsRidingBehindTheirHeadAreNotHandedOutWhenItIsDoneButEachLetsTheNextGoOnceDone() {
		PartitionWork work = work(ORDERS_0, 8);
		RecordTask a0 = task(work, 0, "a");
		RecordTask a1 = task(work, 1, "a");
		RecordTask a2 = task(work, 2, "a");
		RecordTask a3 = task(work, 3, "a");
		List.of(a0, a1, a2, a3).forEach(work::take);
		assertThat(work.riders(a0, 2, (next) -> true)).containsExactly(a1, a2);
		assertThat(work.riders(a0, 5, (next) -> true)).as("riding already: none again").isEmpty();
		assertThat(Records.done(work, a0)).as("its riders' batch tells their outcomes").isNull();
		assertThat(Records.done(work, a1)).isNull();
		assertThat(Records.done(work, a2)).as("the record behind the riders runs now").isSameAs(a3);
		assertThat(Records.done(work, a3)).isNull();
		assertThat(work.committable()).hasValue(4);
	}

	@Test
	void aRiderDoneBeforeItsHeadLeavesTheQueueAndTheHeadHandsOutTheRecordBehindIt() {
		PartitionWork work = work(ORDERS_0, 8);
		RecordTask a0 = task(work, 0, "a");
		RecordTask a1 = task(work, 1, "a");
		RecordTask a2 = task(work, 2, "a");
		List.of(a0, a1, a2).forEach(work::take);
		work.riders(a0, 1, (next) -> true);
		assertThat(Records.done(work, a1)).as("its head's step has not ended").isNull();
		assertThat(work.committable()).as("the head is pending").hasValue(0);
		assertThat(Records.done(work, a0)).isSameAs(a2);
		assertThat(work.committable()).hasValue(2);
	}

	@Test
	void aRiderThatDidNotRunWaitsBehindItsHeadOrRunsNowIfItsHeadIsDone() {
		PartitionWork work = work(ORDERS_0, 8);
		RecordTask a0 = task(work, 0, "a");
		RecordTask a1 = task(work, 1, "a");
		RecordTask a2 = task(work, 2, "a");
		List.of(a0, a1, a2).forEach(work::take);
		work.riders(a0, 2, (next) -> true);
		assertThat(work.unride(a2)).as("behind its head and a1").isNull();
		assertThat(Records.done(work, a0)).as("a1 still rides").isNull();
		assertThat(work.unride(a1)).as("first of its key now").isSameAs(a1);
		assertThat(Records.done(work, a1)).as("a2 no longer rides").isSameAs(a2);
	}

	@Test
	void ridersStopAtAnAdmissionAtARecordWaitingToHandleItsFailureAndWhereTheRouterSaysNo() {
		PartitionWork work = work(ORDERS_0, 8);
		RecordTask a0 = task(work, 0, "a");
		RecordTask a1 = task(work, 1, "a");
		RecordTask a2 = task(work, 2, "a");
		RecordTask a3 = task(work, 3, "a");
		List.of(a0, a1, a2, a3).forEach(work::take);
		assertThat(work.riders(a0, 5, (next) -> next != a2)).containsExactly(a1);
		assertThat(work.unride(a1)).isNull();
		Lock pending = Lock.pendingReplay("lock-1", Bytes.wrap("a".getBytes(StandardCharsets.UTF_8)), 0, 7,
				Instant.EPOCH);
		assertThat(work.queueAdmission(pending)).as("queued behind a3").isNull();
		RecordTask a5 = task(work, 5, "a");
		assertThat(work.take(a5)).isEqualTo(Taken.QUEUED);
		assertThat(work.riders(a0, 5, (next) -> true)).as("not past the admission").containsExactly(a1, a2, a3);
		RecordTask b4 = task(work, 4, "b");
		work.take(b4);
		assertThat(work.riders(b4, 5, (next) -> true)).isEmpty();
		assertThat(work.riders(a1, 5, (next) -> true)).as("not the head of its key").isEmpty();
		assertThat(work.failed(a1, Records.failure())).as("a1 failed behind a0").isTrue();
		assertThat(a1.state()).isEqualTo(RecordState.FAILURE_PENDING);
		work.unride(a2);
		work.unride(a3);
		assertThat(work.riders(a0, 5, (next) -> true)).as("a1 waits to handle its failure").isEmpty();
	}

	@Test
	void aPartitionAtItsBoundRefusesRecordsAndHasRoomAgainAtHalf() {
		for (int offset = 0; offset < 4; offset++) {
			assertThat(this.work.take(task(this.work, offset, "k" + offset))).isEqualTo(Taken.RUN);
		}
		assertThat(this.work.isFull()).isTrue();
		assertThat(this.work.take(task(this.work, 4, "k4"))).isEqualTo(Taken.REFUSED);
		Records.done(this.work, task(this.work, 0, "k0"));
		assertThat(this.work.hasRoom()).isFalse();
		Records.done(this.work, task(this.work, 1, "k1"));
		assertThat(this.work.hasRoom()).isTrue();
		assertThat(this.work.inFlight()).isEqualTo(2);
	}

	@Test
	void aPollsRecordsAreTakenInOrderUpToTheBoundAndOnlyTheFirstOfEachKeyRuns() {
		List<Delivery> polled = List.of(record(ORDERS_0, 0, "a"), record(ORDERS_0, 1, "a"), record(ORDERS_0, 2, "b"),
				record(ORDERS_0, 3, "c"), record(ORDERS_0, 4, "d"));
		List<RecordTask> run = new ArrayList<>();
		assertThat(this.work.takeAll(polled, run, new ArrayList<>())).as("the bound is 4").isEqualTo(4);
		assertThat(run).extracting((task) -> task.delivery.offset()).containsExactly(0L, 2L, 3L);
		assertThat(this.work.isFull()).isTrue();
		assertThat(this.work.takeAll(polled.subList(4, 5), run, new ArrayList<>())).as("full: nothing taken").isZero();
		assertThat(Records.done(this.work, run.get(0))).extracting(Records::offset).isEqualTo(1L);
	}

	@Test
	void theCommitStopsAtTheFirstRecordNotDoneAndNeverGoesBack() {
		RecordTask first = task(this.work, 10, "a");
		RecordTask second = task(this.work, 11, "b");
		this.work.take(first);
		this.work.take(second);
		Records.done(this.work, second);
		assertThat(this.work.committable()).hasValue(10);
		this.work.committed(10);
		assertThat(this.work.committable()).isEmpty();
		assertThat(this.work.committableOnceDone(Set.of(10L))).hasValue(12);
		Records.done(this.work, first);
		assertThat(this.work.committable()).hasValue(12);
	}

	@Test
	void parkingLetsGoOfAKeysRecordsKeepsTheirOffsetsPendingAndTakesThemBackInOrder() {
		RecordTask a0 = task(this.work, 0, "a");
		RecordTask a1 = task(this.work, 1, "a");
		this.work.take(a0);
		this.work.take(a1);
		assertThat(this.work.park(a0, 5_000)).isTrue();
		assertThat(this.work.inFlight()).isZero();
		assertThat(this.work.parked.count()).isEqualTo(2);
		// a later record of the parked key parks behind it; other keys run
		assertThat(this.work.take(task(this.work, 2, "a"))).isEqualTo(Taken.PARKED);
		assertThat(this.work.parked.count()).isEqualTo(3);
		RecordTask b3 = task(this.work, 3, "b");
		assertThat(this.work.take(b3)).isEqualTo(Taken.RUN);
		Records.done(this.work, b3);
		assertThat(this.work.committable()).hasValue(0);
		assertThat(this.work.busiestKeyDepth()).isEqualTo(3);
		// the re-reader looks when asked, and reads from the first parked offset
		assertThat(this.work.parked.startPass(4_999)).isEmpty();
		assertThat(this.work.parked.nextLook(4_999, 200)).isEqualTo(5_000);
		assertThat(this.work.parked.startPass(5_000)).hasValue(0);
		RecordTask again0 = task(this.work, 0, "a");
		RecordTask again1 = task(this.work, 1, "a");
		assertThat(this.work.unpark(again0, new ArrayList<>())).isEqualTo(Taken.RUN);
		assertThat(this.work.unpark(again1, new ArrayList<>())).isEqualTo(Taken.QUEUED);
		assertThat(this.work.unpark(task(this.work, 1, "a"), new ArrayList<>())).as("not parked any more")
			.isEqualTo(Taken.REFUSED);
		assertThat(Records.done(this.work, again0)).isSameAs(again1);
	}

	@Test
	void parkedOffsetsGoneFromTheLogAreDone() {
		RecordTask a0 = task(this.work, 0, "a");
		RecordTask b1 = task(this.work, 1, "b");
		this.work.take(a0);
		this.work.take(b1);
		this.work.park(a0, 1_000);
		this.work.park(b1, 1_000);
		assertThat(this.work.parked.doneIfGone(0, 1)).containsExactly(0L);
		assertThat(this.work.parked.isParked(0)).isFalse();
		assertThat(this.work.parked.parkedFrom(1)).isTrue();
		assertThat(this.work.committable()).hasValue(1);
	}

	@Test
	void aReplayIsAdmittedInItsKeysTurnAndOnlyOnce() {
		RecordTask a0 = task(this.work, 0, "a");
		this.work.take(a0);
		Lock pending = Lock.pendingReplay("lock-1", Bytes.wrap("a".getBytes(StandardCharsets.UTF_8)), 0, 7,
				Instant.EPOCH);
		assertThat(this.work.queueAdmission(pending)).as("behind a0").isNull();
		assertThat(this.work.queueAdmission(pending)).as("queued already").isNull();
		AdmissionTask admission = (AdmissionTask) Records.done(this.work, a0);
		assertThat(admission).isNotNull();
		assertThat(admission.lockId).isEqualTo("lock-1");
		assertThat(admission.lastTaken).isEqualTo(0);
		assertThat(this.work.admitted(admission)).isNull();
		assertThat(this.work.queueAdmission(pending)).as("a new turn once admitted").isNotNull();
	}

	@Test
	void aRevokedPartitionTakesNoMoreChange() {
		RecordTask a0 = task(this.work, 0, "a");
		RecordTask a1 = task(this.work, 1, "a");
		this.work.take(a0);
		this.work.take(a1);
		assertThat(this.work.revoke()).isEqualTo(0);
		assertThat(this.work.isRevoked()).isTrue();
		assertThat(Records.done(this.work, a0)).isNull();
		assertThat(this.work.take(task(this.work, 2, "b"))).isEqualTo(Taken.REFUSED);
		assertThat(this.work.parked.startPass(Long.MAX_VALUE)).isEqualTo(OptionalLong.empty());
	}

}
