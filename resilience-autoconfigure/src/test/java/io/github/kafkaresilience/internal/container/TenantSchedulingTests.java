package io.github.kafkaresilience.internal.container;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.container.FairShareSettings;
import io.github.kafkaresilience.container.RateLimitSettings;
import io.github.kafkaresilience.internal.container.PartitionWork.Taken;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.ladder.Delivery;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import static io.github.kafkaresilience.internal.container.Records.ORDERS_0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * How records whose turn it is are shared between tenants: weighted round robin, a
 * tenant's rate limit passing its lane over without holding a worker, and a tenant's
 * share of a partition's in-flight bound, past which its records park and are taken back
 * once it has room.
 */
class TenantSchedulingTests {

	private static final FairShareSettings EQUAL = FairShareSettings.DEFAULTS;

	private final List<Long> wakeUps = new ArrayList<>();

	private final TenantTally tally = new TenantTally(2);

	@Test
	void aTenantWithABacklogTakesOneTurnInTurnWithEachOtherTenant() {
		PartitionWork work = tenantWork(1000, EQUAL);
		FairQueue queue = new FairQueue(EQUAL, RateLimitSettings.NONE, this.tally, this.wakeUps::add);
		for (int i = 0; i < 6; i++) {
			queue.add(task(work, i, "a-" + i, "a"));
		}
		queue.add(task(work, 6, "b-0", "b"));
		queue.add(task(work, 7, "c-0", "c"));
		queue.add(task(work, 8, "b-1", "b"));
		assertThat(tenants(drain(queue))).containsExactly("a", "b", "c", "a", "b", "a", "a", "a", "a");
		assertThat(this.wakeUps).isEmpty();
	}

	@Test
	void aTenantTakesAsManyTurnsInARowAsItsWeight() {
		FairShareSettings weighted = new FairShareSettings(Map.of("b", 3), 0.5, Map.of(), 0, 10);
		PartitionWork work = tenantWork(1000, weighted);
		FairQueue queue = new FairQueue(weighted, RateLimitSettings.NONE, this.tally, this.wakeUps::add);
		for (int i = 0; i < 4; i++) {
			queue.add(task(work, i, "a-" + i, "a"));
		}
		for (int i = 0; i < 6; i++) {
			queue.add(task(work, 4 + i, "b-" + i, "b"));
		}
		assertThat(tenants(drain(queue))).containsExactly("a", "b", "b", "b", "a", "b", "b", "b", "a", "a");
	}

	@Test
	void aTenantAtItsRateLimitIsPassedOverAndAWakeUpIsAskedForWhenNoneMayRun() {
		// one record an hour: its first is free, its second waits far beyond this test
		FairShareSettings limited = new FairShareSettings(Map.of(), 0.5, Map.of("a", 1.0 / 3600), 0, 10);
		PartitionWork work = tenantWork(1000, limited);
		FairQueue queue = new FairQueue(limited, RateLimitSettings.NONE, this.tally, this.wakeUps::add);
		for (int i = 0; i < 3; i++) {
			queue.add(task(work, i, "a-" + i, "a"));
		}
		queue.add(task(work, 3, "b-0", "b"));
		queue.add(task(work, 4, "b-1", "b"));
		assertThat(tenants(drain(queue))).as("a's first, then b's while a waits").containsExactly("a", "b", "b");
		assertThat(queue.size()).as("a's records wait in the queue, on no worker").isEqualTo(2);
		assertThat(queue.hasRunnable()).isFalse();
		assertThat(this.wakeUps).as("a wake-up once a's next permit is free").hasSize(1);
		assertThat(this.wakeUps.get(0)).isGreaterThan(3_000_000_000_000L);
		assertThat(queue.poll()).isNull();
		assertThat(this.wakeUps).as("no second wake-up for the same time").hasSize(1);
	}

	@Test
	void theListenersRateLimitHoldsEveryTenantBack() {
		RateLimitSettings limit = new RateLimitSettings(1.0 / 3600, false);
		PartitionWork work = tenantWork(1000, EQUAL);
		FairQueue queue = new FairQueue(EQUAL, limit, this.tally, this.wakeUps::add);
		queue.add(task(work, 0, "a-0", "a"));
		queue.add(task(work, 1, "b-0", "b"));
		assertThat(tenants(drain(queue))).containsExactly("a");
		assertThat(queue.hasRunnable()).isFalse();
		assertThat(this.wakeUps).hasSize(1);
	}

	@Test
	void aSharedLimitGivesThisInstanceItsShareAndNothingBeforeItHasPartitions() {
		FairQueue queue = new FairQueue(EQUAL, new RateLimitSettings(200, true), this.tally, this.wakeUps::add);
		assertThat(queue.listenerRate()).isEqualTo(200.0);
		queue.share(0.25);
		assertThat(queue.listenerRate()).isEqualTo(50.0);
		queue.share(0);
		assertThat(queue.listenerRate()).isZero();
	}

	@Test
	void permitsAreSpacedByTheRateAndALateOneIsBookedForItsTimeUpToTheCatchUp() {
		RecordRate rate = new RecordRate(500); // 2 ms apart
		long start = 1_000_000_000L;
		assertThat(rate.waitNanos(start)).isZero();
		rate.take(start, 1);
		assertThat(rate.waitNanos(start)).isEqualTo(2_000_000L);
		assertThat(rate.waitNanos(start + 2_000_000L)).isZero();
		// taken 1 ms late: booked for its time, so the next is free 1 ms after now
		rate.take(start + 3_000_000L, 1);
		assertThat(rate.waitNanos(start + 3_000_000L)).isEqualTo(1_000_000L);
		// a batch books all of its records
		rate.take(start + 4_000_000L, 10);
		assertThat(rate.waitNanos(start + 4_000_000L)).isEqualTo(20_000_000L);
		// after an idle second, at most the catch-up's permits at once
		long idle = start + 2_000_000_000L;
		int taken = 0;
		while (rate.waitNanos(idle) == 0) {
			rate.take(idle, 1);
			taken++;
		}
		assertThat(taken).isEqualTo(2);
	}

	@Test
	void aTenantPastItsShareOfThePartitionParksAndIsTakenBackOnceItHasRoom() {
		List<Integer> rereads = new ArrayList<>();
		Tenants tenants = new Tenants("orders", (record) -> header(record), EQUAL, this.tally);
		tenants.rereadWith(() -> rereads.add(1));
		PartitionWork work = new PartitionWork(ORDERS_0, new RetryContainer.Route(null, null), 8, 4, tenants);
		assertThat(tenants.capOf(8)).isEqualTo(4);
		List<RecordTask> a = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			a.add(task(work, i, "a-" + i, "a"));
		}
		List<Taken> taken = a.stream().map(work::take).toList();
		assertThat(taken).containsExactly(Taken.RUN, Taken.RUN, Taken.RUN, Taken.RUN, Taken.PARKED_AT_CAP,
				Taken.PARKED_AT_CAP);
		RecordTask b = task(work, 6, "b-0", "b");
		assertThat(work.take(b)).as("another tenant behind the flood is taken").isEqualTo(Taken.RUN);
		assertThat(work.inFlightOf("a")).isEqualTo(4);
		assertThat(this.tally.figures())
			.extracting(TenantTally.TenantFigures::tenant, TenantTally.TenantFigures::inFlight)
			.containsExactlyInAnyOrder(tuple("a", 4), tuple("b", 1), tuple(TenantTally.OTHER, 0));

		RecordTask again = task(work, 4, "a-4", "a");
		assertThat(work.unpark(again, new ArrayList<>())).as("a has no room yet").isEqualTo(Taken.REFUSED);
		Records.done(work, a.get(0));
		assertThat(rereads).as("a at three of its four: not yet half").isEmpty();
		Records.done(work, a.get(1));
		assertThat(rereads).as("a drained to half its cap, with records parked").hasSize(1);
		assertThat(work.unpark(again, new ArrayList<>())).isEqualTo(Taken.RUN);
		assertThat(work.committable()).as("the parked offset 5 holds commits back").hasValue(2);
	}

	@Test
	void aReplaysAdmissionWaitsForTheParkedRecordsOfItsKeyAndJoinsItsQueueBehindThem() {
		Tenants tenants = new Tenants("orders", TenantSchedulingTests::header, EQUAL, this.tally);
		PartitionWork work = new PartitionWork(ORDERS_0, new RetryContainer.Route(null, null), 4, 2, tenants);
		RecordTask a = task(work, 0, "a", "t");
		RecordTask b = task(work, 1, "b", "t");
		assertThat(List.of(work.take(a), work.take(b))).containsOnly(Taken.RUN);
		assertThat(work.take(task(work, 2, "c", "t"))).as("t at its cap of 2").isEqualTo(Taken.PARKED_AT_CAP);
		Lock replay = Lock.pendingReplay("replay-c", Bytes.wrap("c".getBytes(StandardCharsets.UTF_8)), 0, 7,
				Instant.now());
		assertThat(work.queueAdmission(replay)).as("c's record 2, taken before it, is parked").isNull();

		Records.done(work, a);
		List<AdmissionTask> admissions = new ArrayList<>();
		RecordTask c = task(work, 2, "c", "t");
		assertThat(work.unpark(c, admissions)).isEqualTo(Taken.RUN);
		assertThat(admissions).as("queued behind c's record 2, not run yet").isEmpty();
		KeyedTask next = Records.done(work, c);
		assertThat(next).as("c's record 2 done: the admission's turn").isInstanceOf(AdmissionTask.class);
		assertThat(((AdmissionTask) next).lockId).isEqualTo("replay-c");
	}

	@Test
	void tenantsPastTheTaggedOnesAreCountedAsOther() {
		PartitionWork work = tenantWork(1000, EQUAL);
		FairQueue queue = new FairQueue(EQUAL, RateLimitSettings.NONE, this.tally, this.wakeUps::add);
		queue.add(task(work, 0, "a-0", "a"));
		queue.add(task(work, 1, "b-0", "b"));
		queue.add(task(work, 2, "c-0", "c"));
		queue.add(task(work, 3, "d-0", "d"));
		drain(queue);
		assertThat(this.tally.figures()).extracting(TenantTally.TenantFigures::tenant)
			.containsExactlyInAnyOrder("a", "b", TenantTally.OTHER);
		assertThat(this.tally.figures()).extracting(TenantTally.TenantFigures::records).containsExactly(1L, 1L, 2L);
		assertThat(this.tally.isTagged("c")).isFalse();
	}

	private PartitionWork tenantWork(int bound, FairShareSettings settings) {
		Tenants tenants = new Tenants("orders", TenantSchedulingTests::header, settings, this.tally);
		return new PartitionWork(ORDERS_0, new RetryContainer.Route(null, null), bound, bound / 2, tenants);
	}

	private static String header(Delivery record) {
		return new String(record.headers().lastHeader("tenant").value(), StandardCharsets.UTF_8);
	}

	private static RecordTask task(PartitionWork work, long offset, String key, String tenant) {
		RecordHeaders headers = new RecordHeaders();
		headers.add("tenant", tenant.getBytes(StandardCharsets.UTF_8));
		return new RecordTask(work, new Delivery(work.partition.topic(), work.partition.partition(), offset, 0L,
				key.getBytes(StandardCharsets.UTF_8), new byte[0], headers));
	}

	private static List<RecordTask> drain(FairQueue queue) {
		List<RecordTask> taken = new ArrayList<>();
		for (RecordTask task; (task = queue.poll()) != null;) {
			taken.add(task);
		}
		return taken;
	}

	private static List<String> tenants(List<RecordTask> tasks) {
		return tasks.stream().map(RecordTask::tenant).toList();
	}

}
