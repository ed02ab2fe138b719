package io.github.kafkaresilience.internal.lock;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import com.sun.management.ThreadMXBean;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The in-memory lock table: idempotent application of lock records (docs/PROTOCOL.md,
 * "Lock records").
 */
class LockTableTests {

	private static final Instant NOW = Instant.parse("2025-01-01T00:00:00Z");

	private static final Bytes K = key("k");

	private static final Bytes OTHER = key("other");

	private final LockTable table = new LockTable();

	// --- basic upsert and delete

	@Test
	void aLockRecordMakesItsLockLiveAndItsKeyLocked() {
		Lock lock = confirmed("L", K, 10, 1, 0);

		assertThat(this.table.apply(0, 0, "L", lock)).isTrue();

		assertThat(this.table.find("L")).isEqualTo(lock);
		assertThat(this.table.locksOf(K)).containsExactly(lock);
		assertThat(this.table.isLocked(K)).isTrue();
		assertThat(this.table.size()).isOne();
		assertThat(this.table.lockedKeys()).isOne();
		assertThat(this.table.snapshot()).containsExactly(lock);
	}

	@Test
	void aNewerRecordOfALockReplacesItWithoutCountingItTwice() {
		Lock moving = moving("L", K, 10, 1, new Position(0, 10));
		Lock confirmed = moving.confirmedAt(4, NOW);

		this.table.apply(0, 0, "L", moving);
		this.table.apply(0, 1, "L", confirmed);

		assertThat(this.table.find("L")).isEqualTo(confirmed);
		assertThat(this.table.locksOf(K)).containsExactly(confirmed);
		assertThat(this.table.size()).isOne();
		assertThat(this.table.lockedKeys()).isOne();
	}

	@Test
	void aTombstoneReleasesTheLock() {
		this.table.apply(0, 0, "L", confirmed("L", K, 10, 1, 0));

		assertThat(this.table.apply(0, 1, "L", null)).isTrue();

		assertThat(this.table.find("L")).isNull();
		assertThat(this.table.locksOf(K)).isEmpty();
		assertThat(this.table.isLocked(K)).isFalse();
		assertThat(this.table.size()).isZero();
		assertThat(this.table.lockedKeys()).isZero();
		assertThat(this.table.snapshot()).isEmpty();
	}

	@Test
	void aKeyStaysLockedUntilItsLastLockIsReleased() {
		this.table.apply(0, 0, "A", confirmed("A", K, 10, 1, 0));
		this.table.apply(0, 1, "B", confirmed("B", K, 11, 1, 1));

		this.table.apply(0, 2, "A", null);

		assertThat(this.table.isLocked(K)).isTrue();
		assertThat(this.table.locksOf(K)).extracting(Lock::id).containsExactly("B");
		this.table.apply(0, 3, "B", null);
		assertThat(this.table.isLocked(K)).isFalse();
	}

	@Test
	void aTombstoneOfAnUnknownLockChangesNoCount() {
		this.table.apply(0, 5, "ghost", null);

		assertThat(this.table.size()).isZero();
		assertThat(this.table.lockedKeys()).isZero();
		assertThat(this.table.snapshot()).isEmpty();
	}

	@Test
	void theVersionIncreasesWithEveryChangeAndOnlyThen() {
		long start = this.table.version();
		this.table.apply(0, 5, "L", confirmed("L", K, 10, 1, 0));
		long afterWrite = this.table.version();
		this.table.apply(0, 5, "L", confirmed("L", K, 10, 1, 0));
		this.table.apply(0, 3, "L", confirmed("L", K, 10, 1, 9));

		assertThat(afterWrite).isGreaterThan(start);
		assertThat(this.table.version()).isEqualTo(afterWrite);
		this.table.apply(0, 6, "L", null);
		assertThat(this.table.version()).isGreaterThan(afterWrite);
	}

	// --- idempotence

	@Test
	void applyingTheSameRecordTwiceChangesNothingTheSecondTime() {
		Lock lock = confirmed("L", K, 10, 1, 0);
		this.table.apply(0, 3, "L", lock);
		long version = this.table.version();

		assertThat(this.table.apply(0, 3, "L", lock)).isFalse();

		assertThat(this.table.version()).isEqualTo(version);
		assertThat(this.table.locksOf(K)).containsExactly(lock);
		assertThat(this.table.size()).isOne();
	}

	@Test
	void replayingALogGivesTheSameTable() {
		List<LogRecord> log = new LockLog(new Random(7), 3, 5).generate(200);
		applyAll(this.table, log);
		TableState once = TableState.of(this.table, log);

		applyAll(this.table, log);

		assertThat(TableState.of(this.table, log)).isEqualTo(once);
	}

	@Test
	void aDuplicateOfEveryRecordGivesTheSameTable() {
		List<LogRecord> log = new LockLog(new Random(11), 3, 5).generate(200);
		LockTable withDuplicates = new LockTable();
		for (LogRecord record : log) {
			record.applyTo(withDuplicates);
			record.applyTo(withDuplicates);
		}

		applyAll(this.table, log);

		assertThat(TableState.of(withDuplicates, log)).isEqualTo(TableState.of(this.table, log));
	}

	// --- own writes (read-your-writes overlay)

	@Test
	void anOwnWriteIsVisibleAtOnce() {
		Lock lock = confirmed("L", K, 10, 2, 8);

		this.table.apply(0, 10, "L", lock);

		assertThat(this.table.find("L")).isEqualTo(lock);
		assertThat(this.table.locksOf(K)).containsExactly(lock);
	}

	@Test
	void olderRecordsReadLaterByTheTailerDoNotRegressAMovedLock() {
		Lock atStage1 = confirmed("L", K, 10, 1, 0);
		Lock movingToStage2 = atStage1.moveTo(2, new Position(1, 0), 2, null, NOW);
		Lock atStage2 = movingToStage2.confirmedAt(8, NOW);
		this.table.apply(0, 10, "L", atStage2);

		assertThat(this.table.apply(0, 3, "L", atStage1)).isFalse();
		assertThat(this.table.apply(0, 7, "L", movingToStage2)).isFalse();
		assertThat(this.table.apply(0, 10, "L", atStage2)).isFalse();

		assertThat(this.table.find("L")).isEqualTo(atStage2);
		assertThat(this.table.locksOf(K)).containsExactly(atStage2);
		assertThat(this.table.size()).isOne();
	}

	@Test
	void olderRecordsReadLaterByTheTailerDoNotResurrectAReleasedLock() {
		Lock moving = moving("L", K, 10, 1, new Position(0, 10));
		Lock atStage1 = moving.confirmedAt(0, NOW);
		this.table.apply(0, 10, "L", null);

		assertThat(this.table.apply(0, 3, "L", moving)).isFalse();
		assertThat(this.table.apply(0, 7, "L", atStage1)).isFalse();

		assertThat(this.table.find("L")).isNull();
		assertThat(this.table.isLocked(K)).isFalse();
		assertThat(this.table.size()).isZero();
	}

	@Test
	void ownWritesStayAheadOfTheTailerUntilItCatchesUp() {
		Lock atStage1 = confirmed("L", K, 10, 1, 0);
		Lock atStage2 = atStage1.moveTo(2, new Position(1, 0), 2, null, NOW).confirmedAt(5, NOW);
		this.table.apply(0, 3, "L", atStage1);
		this.table.tailerReached(0, 4);

		this.table.apply(0, 7, "L", atStage2);
		this.table.apply(0, 10, "L", null);

		assertThat(this.table.apply(0, 7, "L", atStage2)).isFalse();
		this.table.tailerReached(0, 8);
		assertThat(this.table.isLocked(K)).isFalse();
		assertThat(this.table.apply(0, 10, "L", null)).isFalse();
		this.table.tailerReached(0, 11);
		assertThat(this.table.isLocked(K)).isFalse();
		assertThat(this.table.size()).isZero();
	}

	// --- tombstone markers

	@Test
	void aTombstoneMarkerBlocksOlderRecordsUntilTheTailerPassesIt() {
		this.table.apply(0, 10, "L", null);
		this.table.tailerReached(0, 5);
		assertThat(this.table.apply(0, 7, "L", confirmed("L", K, 10, 1, 0))).isFalse();

		this.table.tailerReached(0, 10);
		assertThat(this.table.apply(0, 8, "L", confirmed("L", K, 10, 1, 0))).isFalse();
		assertThat(this.table.isLocked(K)).isFalse();
	}

	/**
	 * The acknowledgement of this instance's own write of a lock can come after the
	 * tailer read that write and a later release of the lock by another instance, and
	 * forgot the release's marker: it changes nothing, or it would bring the released
	 * lock back (the simulation found it with the main and stage partitions of one number
	 * held by different instances).
	 */
	@Test
	void anAcknowledgementOfAnOwnWriteThatTheTailerReadPastChangesNothing() {
		this.table.apply(0, 7, "L", confirmed("L", K, 10, 1, 0)); // read by the tailer
		this.table.apply(0, 10, "L", null); // released by another instance
		this.table.tailerReached(0, 11);

		assertThat(this.table.apply(0, 7, "L", confirmed("L", K, 10, 1, 0))).as("the late acknowledgement").isFalse();
		assertThat(this.table.find("L")).isNull();
		assertThat(this.table.isLocked(K)).isFalse();
	}

	@Test
	void theTailerOfAnotherPartitionDoesNotForgetATombstoneMarker() {
		this.table.apply(0, 10, "L", null);

		this.table.tailerReached(1, 100);

		assertThat(this.table.apply(0, 7, "L", confirmed("L", K, 10, 1, 0))).isFalse();
	}

	@Test
	void aTombstoneAtTheTailerPositionReleasesTheLockAndIsForgottenOnceRead() {
		this.table.apply(0, 3, "L", confirmed("L", K, 10, 1, 0));
		this.table.tailerReached(0, 12);

		assertThat(this.table.apply(0, 12, "L", null)).isTrue();
		this.table.tailerReached(0, 13);

		assertThat(this.table.find("L")).isNull();
		assertThat(this.table.size()).isZero();
	}

	// --- full log and compacted log

	@ParameterizedTest
	@ValueSource(longs = { 1, 2, 3, 42, 2025, 123456789 })
	void aCompactedLogWithoutTombstonesGivesTheSameTableAsTheFullLog(long seed) {
		LockLog generator = new LockLog(new Random(seed), 4, 6);
		List<LogRecord> log = generator.generate(400);
		LockTable full = new LockTable();
		LockTable compacted = new LockTable();

		applyAll(full, log);
		applyAll(compacted, compact(log, false));

		assertThat(TableState.of(compacted, log)).isEqualTo(TableState.of(full, log));
		assertThat(full.snapshot()).containsExactlyInAnyOrderElementsOf(generator.live());
		assertThat(full.size()).isEqualTo(generator.live().size());
	}

	@ParameterizedTest
	@ValueSource(longs = { 1, 2, 3, 42, 2025, 123456789 })
	void aCompactedLogThatKeepsTombstonesGivesTheSameTableAsTheFullLog(long seed) {
		LockLog generator = new LockLog(new Random(seed), 4, 6);
		List<LogRecord> log = generator.generate(400);
		LockTable full = new LockTable();
		LockTable compacted = new LockTable();

		applyAll(full, log);
		applyAll(compacted, compact(log, true));

		assertThat(TableState.of(compacted, log)).isEqualTo(TableState.of(full, log));
	}

	@ParameterizedTest
	@ValueSource(longs = { 5, 6, 7 })
	void aLogReadInBatchesByTheTailerGivesTheSameTableAsTheCompactedLog(long seed) {
		LockLog generator = new LockLog(new Random(seed), 4, 6);
		List<LogRecord> log = generator.generate(400);
		LockTable tailed = new LockTable();
		LockTable compacted = new LockTable();

		for (int i = 0; i < log.size(); i++) {
			log.get(i).applyTo(tailed);
			if (i % 17 == 0) {
				for (int p = 0; p < generator.partitions(); p++) {
					tailed.tailerReached(p, generator.positionAfter(log, p, i));
				}
			}
		}
		applyAll(compacted, compact(log, false));

		assertThat(TableState.of(tailed, log)).isEqualTo(TableState.of(compacted, log));
	}

	@Test
	void theGeneratedLogHasMovesReleasesAndSeveralLocksPerKey() {
		LockLog generator = new LockLog(new Random(1), 4, 6);
		List<LogRecord> log = generator.generate(400);

		assertThat(log).anyMatch((record) -> record.lock() == null);
		assertThat(log).anyMatch((record) -> record.lock() != null && record.lock().stage() > 1);
		assertThat(generator.maxLiveLocksOfOneKey()).isGreaterThan(1);
		assertThat(compact(log, false)).hasSizeLessThan(log.size());
	}

	// --- order, predecessor and origin

	@Test
	void locksOfAKeyAreOrderedByOriginWhateverTheOrderTheyArrived() {
		this.table.apply(0, 0, "C", confirmed("C", K, 14, 1, 2));
		this.table.apply(0, 1, "A", confirmed("A", K, 10, 2, 0));
		this.table.apply(0, 2, "B", confirmed("B", K, 11, 1, 1));

		assertThat(this.table.locksOf(K)).extracting(Lock::originOffset).containsExactly(10L, 11L, 14L);
	}

	@Test
	void originsAreComparedAsNumbersNotAsText() {
		this.table.apply(0, 0, "A", confirmed("A", K, 100, 1, 0));
		this.table.apply(0, 1, "B", confirmed("B", K, 9, 1, 1));

		assertThat(this.table.locksOf(K)).extracting(Lock::originOffset).containsExactly(9L, 100L);
	}

	@Test
	void thePredecessorIsTheLiveLockWithTheGreatestOriginBelow() {
		Lock a = confirmed("A", K, 10, 2, 0);
		Lock b = confirmed("B", K, 11, 2, 1);
		Lock c = confirmed("C", K, 14, 2, 2);
		this.table.apply(0, 0, "A", a);
		this.table.apply(0, 1, "B", b);
		this.table.apply(0, 2, "C", c);
		this.table.apply(0, 3, "X", confirmed("X", OTHER, 12, 1, 0));

		assertThat(this.table.predecessor(c)).isEqualTo(b);
		assertThat(this.table.predecessor(b)).isEqualTo(a);
		assertThat(this.table.predecessor(a)).isNull();
	}

	@Test
	void thePredecessorSkipsReleasedLocks() {
		Lock a = confirmed("A", K, 10, 2, 0);
		Lock c = confirmed("C", K, 14, 2, 2);
		this.table.apply(0, 0, "A", a);
		this.table.apply(0, 1, "B", confirmed("B", K, 11, 2, 1));
		this.table.apply(0, 2, "C", c);

		this.table.apply(0, 3, "B", null);

		assertThat(this.table.predecessor(c)).isEqualTo(a);
	}

	@Test
	void aLockOfAnotherKeyIsNeverAPredecessor() {
		this.table.apply(0, 0, "X", confirmed("X", OTHER, 5, 1, 0));
		Lock lock = confirmed("L", K, 10, 1, 1);
		this.table.apply(0, 1, "L", lock);

		assertThat(this.table.predecessor(lock)).isNull();
		assertThat(this.table.predecessor(confirmed("Y", key("unknown"), 10, 1, 1))).isNull();
	}

	@Test
	void thePredecessorOfALockNotInTheTableIsFoundByItsOrigin() {
		Lock b = confirmed("B", K, 11, 1, 1);
		this.table.apply(0, 0, "A", confirmed("A", K, 10, 1, 0));
		this.table.apply(0, 1, "B", b);
		this.table.apply(0, 2, "C", confirmed("C", K, 14, 1, 2));

		assertThat(this.table.predecessor(confirmed("N", K, 12, 1, 3))).isEqualTo(b);
	}

	@Test
	void byOriginFindsTheLockOfARecord() {
		Lock a = confirmed("A", K, 10, 1, 0);
		Lock b = confirmed("B", K, 11, 1, 1);
		this.table.apply(0, 0, "A", a);
		this.table.apply(0, 1, "B", b);

		assertThat(this.table.byOrigin(K, 10)).isEqualTo(a);
		assertThat(this.table.byOrigin(K, 11)).isEqualTo(b);
		assertThat(this.table.byOrigin(K, 12)).isNull();
		assertThat(this.table.byOrigin(K, 9)).isNull();
		assertThat(this.table.byOrigin(OTHER, 10)).isNull();
	}

	@Test
	void byOriginForgetsAReleasedLock() {
		this.table.apply(0, 0, "A", confirmed("A", K, 10, 1, 0));
		this.table.apply(0, 1, "A", null);

		assertThat(this.table.byOrigin(K, 10)).isNull();
	}

	@Test
	void twoLocksWithTheSameOriginAndDifferentIdsAreBothKept() {
		Lock first = confirmed("aaa", K, 10, 1, 0);
		Lock second = confirmed("bbb", K, 10, 1, 3);
		Lock later = confirmed("ccc", K, 11, 1, 4);
		this.table.apply(0, 0, "bbb", second);
		this.table.apply(0, 1, "aaa", first);
		this.table.apply(0, 2, "ccc", later);

		assertThat(this.table.locksOf(K)).containsExactly(first, second, later);
		assertThat(this.table.size()).isEqualTo(3);
		assertThat(this.table.byOrigin(K, 10)).isIn(first, second);
		assertThat(this.table.predecessor(later)).isEqualTo(second);
		assertThat(this.table.predecessor(first)).isNull();
		assertThat(this.table.predecessor(second)).isNull();

		this.table.apply(0, 3, "aaa", null);
		assertThat(this.table.locksOf(K)).containsExactly(second, later);
		assertThat(this.table.byOrigin(K, 10)).isEqualTo(second);
	}

	// --- listeners

	@Test
	void listenersAreCalledWithTheKeyOfEveryChange() {
		List<Bytes> changed = new ArrayList<>();
		this.table.addListener(changed::add);
		Lock lock = moving("L", K, 10, 1, new Position(0, 10));

		this.table.apply(0, 0, "L", lock);
		this.table.apply(0, 1, "X", confirmed("X", OTHER, 3, 1, 0));
		this.table.apply(0, 2, "L", lock.confirmedAt(0, NOW));
		this.table.apply(0, 3, "L", null);

		assertThat(changed).containsExactly(K, OTHER, K, K);
	}

	@Test
	void listenersAreNotCalledWhenNothingChanged() {
		List<Bytes> changed = new ArrayList<>();
		this.table.apply(0, 5, "L", confirmed("L", K, 10, 1, 0));
		this.table.addListener(changed::add);

		this.table.apply(0, 5, "L", confirmed("L", K, 10, 1, 0));
		this.table.apply(0, 4, "L", null);
		this.table.apply(0, 6, "ghost", null);

		assertThat(changed).isEmpty();
	}

	@Test
	void everyListenerIsCalled() {
		List<Bytes> first = new ArrayList<>();
		List<Bytes> second = new ArrayList<>();
		this.table.addListener(first::add);
		this.table.addListener(second::add);

		this.table.apply(0, 0, "L", confirmed("L", K, 10, 1, 0));

		assertThat(first).containsExactly(K);
		assertThat(second).containsExactly(K);
	}

	// --- compact storage: what the table stores comes back as it was applied

	@ParameterizedTest
	@MethodSource("everyKindOfLock")
	void everyKindOfLockComesBackAsItWasApplied(Lock lock) {
		this.table.apply(lock.originPartition(), 0, lock.id(), lock);

		assertThat(this.table.find(lock.id())).isEqualTo(lock);
		assertThat(this.table.locksOf(lock.key())).containsExactly(lock);
		assertThat(this.table.snapshot()).containsExactly(lock);
		assertThat(this.table.oldest(1)).containsExactly(lock);
		assertThat(this.table.byOrigin(lock.key(), lock.originOffset()))
			.isEqualTo((lock.entry() == null) ? lock : null);
		assertThat(this.table.pending(lock.originPartition())).isEqualTo(lock.isPending() ? List.of(lock) : List.of());
	}

	@Test
	void everyKindOfLockComesBackAmongOtherLocksOfItsKeyInOriginOrder() {
		List<Lock> locks = new ArrayList<>();
		List<Lock> kinds = everyKindOfLock().toList();
		for (int i = 0; i < kinds.size(); i++) {
			Lock kind = kinds.get(i);
			// ids whose first digit makes some of them negative as longs
			String id = new UUID((long) i << 59, i).toString();
			locks.add(new Lock(id, K, 0, kind.originOffset(), kind.stage(), kind.at(), kind.from(), kind.retryCount(),
					kind.failure(), kind.updated(), kind.entry()));
		}
		for (int i = 0; i < locks.size(); i++) {
			this.table.apply(0, i, locks.get(i).id(), locks.get(i));
		}

		assertThat(this.table.locksOf(K)).containsExactlyElementsOf(locks.stream().sorted(Lock.BY_ORIGIN).toList());
		assertThat(locks).allSatisfy((lock) -> assertThat(this.table.find(lock.id())).isEqualTo(lock));
		assertThat(this.table.snapshot()).containsExactlyInAnyOrderElementsOf(locks);
		assertThat(this.table.lockedKeys()).isOne();
	}

	@Test
	void lookingUpAKeyWithoutLocksAllocatesNothing() {
		for (int i = 0; i < 1_000; i++) {
			this.table.apply(0, i, "lock-" + i, confirmed("lock-" + i, key("locked-" + i), i, 1, i));
		}
		List<Bytes> unlocked = IntStream.range(0, 1_000).mapToObj((i) -> key("free-" + i)).toList();
		unlocked.forEach(Bytes::hashCode);
		ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
		lookUpEach(unlocked);

		long before = threads.getCurrentThreadAllocatedBytes();
		lookUpEach(unlocked);
		long allocated = threads.getCurrentThreadAllocatedBytes() - before;

		// what the measurement itself takes, if anything; 1,000 lookups of 8 bytes would
		// be 8,000
		assertThat(allocated).isLessThan(100);
	}

	private void lookUpEach(List<Bytes> unlocked) {
		for (Bytes key : unlocked) {
			if (!this.table.locksOf(key).isEmpty() || this.table.byOrigin(key, 7) != null || this.table.isLocked(key)) {
				throw new AssertionError(key);
			}
		}
	}

	@Test
	void locksOfOneOriginAreOrderedByTheirIdsAsText() {
		// as a long, an id from 8 on is negative; as text it sorts after 7 and before
		// upper case
		List<String> ids = List.of("80000000-0000-0000-0000-000000000000", "zzz",
				"7fffffff-ffff-ffff-ffff-ffffffffffff", "A0000000-0000-0000-0000-000000000000",
				"7fffffff-ffff-ffff-ffff-fffffffffff0");
		for (int i = 0; i < ids.size(); i++) {
			this.table.apply(0, i, ids.get(i), confirmed(ids.get(i), K, 10, 1, i));
		}
		Lock later = confirmed("later", K, 11, 1, 9);

		assertThat(this.table.locksOf(K)).extracting(Lock::id)
			.containsExactlyElementsOf(ids.stream().sorted().toList());
		assertThat(this.table.predecessor(later)).extracting(Lock::id).isEqualTo("zzz");
	}

	@Test
	void aLargeTableAgreesWithASimpleModelAsItGrowsAndEmpties() {
		Random random = new Random(2025);
		List<Bytes> keys = IntStream.range(0, 2_000).mapToObj((i) -> key("order-" + i)).toList();
		Map<String, Lock> model = new HashMap<>();
		List<String> liveIds = new ArrayList<>();
		long[] nextOffset = new long[3];
		long origin = 0;
		for (int step = 0; step < 80_000; step++) {
			boolean creating = step < 50_000 && (liveIds.isEmpty() || random.nextInt(10) < 5);
			if (creating) {
				Bytes key = keys.get(random.nextInt(keys.size()));
				// every tenth id is not a UUID
				String id = (step % 10 == 0) ? "lock-" + step
						: new UUID(random.nextLong(), random.nextLong()).toString();
				Lock lock = Lock.moving(id, key, partitionOf(key), origin++, 1, new Position(0, origin), 0, null, NOW);
				this.table.apply(lock.originPartition(), nextOffset[lock.originPartition()]++, id, lock);
				model.put(id, lock);
				liveIds.add(id);
			}
			else if (!liveIds.isEmpty()) {
				int index = random.nextInt(liveIds.size());
				Lock lock = model.get(liveIds.get(index));
				long offset = nextOffset[lock.originPartition()]++;
				if (step >= 50_000 || random.nextInt(3) == 0) {
					this.table.apply(lock.originPartition(), offset, lock.id(), null);
					model.remove(lock.id());
					liveIds.set(index, liveIds.get(liveIds.size() - 1));
					liveIds.remove(liveIds.size() - 1);
				}
				else {
					Lock next = lock.isMoving() ? lock.confirmedAt(offset, NOW.plusMillis(step))
							: lock.moveTo(lock.stage() + 1, lock.position(), lock.retryCount() + 1, null, NOW);
					this.table.apply(lock.originPartition(), offset, lock.id(), next);
					model.put(lock.id(), next);
				}
			}
			if (step % 7_000 == 0) {
				// forget the remembered tombstones so far
				for (int p = 0; p < nextOffset.length; p++) {
					this.table.tailerReached(p, nextOffset[p]);
				}
			}
			if (step % 10_000 == 0 || step == 79_999) {
				assertAgrees(model, keys);
			}
		}
		assertThat(model).isEmpty();
		assertThat(this.table.size()).isZero();
		assertThat(this.table.lockedKeys()).isZero();
		assertThat(this.table.snapshot()).isEmpty();
	}

	private void assertAgrees(Map<String, Lock> model, List<Bytes> keys) {
		Map<Bytes, List<Lock>> byKey = new HashMap<>();
		model.values()
			.stream()
			.sorted(Lock.BY_ORIGIN)
			.forEach((lock) -> byKey.computeIfAbsent(lock.key(), (k) -> new ArrayList<>()).add(lock));
		for (Bytes key : keys) {
			List<Lock> expected = byKey.getOrDefault(key, List.of());
			assertThat(this.table.locksOf(key)).isEqualTo(expected);
			assertThat(this.table.isLocked(key)).isEqualTo(!expected.isEmpty());
		}
		assertThat(this.table.size()).isEqualTo(model.size());
		assertThat(this.table.lockedKeys()).isEqualTo(byKey.size());
		model.forEach((id, lock) -> assertThat(this.table.find(id)).isEqualTo(lock));
		assertThat(new HashSet<>(this.table.snapshot())).isEqualTo(new HashSet<>(model.values()));
	}

	private static int partitionOf(Bytes key) {
		return Math.floorMod(key.hashCode(), 3);
	}

	static Stream<Lock> everyKindOfLock() {
		String id = "3f2a9c1e-7b4d-4e8a-9f00-0123456789ab";
		Instant precise = Instant.parse("2025-03-04T05:06:07.123456789Z");
		FailureInfo failure = new FailureInfo("transient", "timed out", "java.util.concurrent.TimeoutException",
				"2025-03-04T05:06:07.123456789Z");
		Lock moving = Lock.moving(id, K, 3, 42, 1, new Position(0, 42), 0, null, precise);
		Lock confirmed = moving.confirmedAt(7, precise);
		Lock pending = Lock.pendingReplay(id, K, 2, 17, precise);
		Lock admitted = pending.admittedAfter(40, precise.plusSeconds(1));
		return Stream.of(moving, Lock.moving(id, K, 3, 42, 1, new Position(0, 42), 0, failure, precise), confirmed,
				confirmed.moveTo(3, new Position(1, 7), 2, failure, precise),
				confirmed.moveTo(3, new Position(1, 7), 2, new FailureInfo("permanent", "", "", ""), precise), pending,
				admitted, admitted.confirmedAt(90, precise),
				admitted.confirmedAt(90, precise).moveTo(2, new Position(1, 90), 1, failure, precise),
				// ids that are not canonical UUIDs are kept as written
				new Lock("L", K, 0, 0, 1, 0L, null, 0, null, Instant.EPOCH),
				new Lock(id.toUpperCase(Locale.ROOT), K, 0, 5, 1, 5L, null, 0, null, NOW),
				new Lock(id.replace('-', '_'), K, 0, 5, 1, 5L, null, 0, null, NOW),
				// extremes of every field
				new Lock(id, Bytes.wrap(new byte[0]), Integer.MAX_VALUE, Long.MAX_VALUE - 1, Integer.MAX_VALUE,
						Long.MAX_VALUE, null, Integer.MAX_VALUE, null, Instant.MAX),
				new Lock(id, Bytes.wrap(new byte[] { 0, (byte) 0xff, -1 }), 0, 0, 1, null, new Position(0, 0), 0, null,
						Instant.MIN));
	}

	// --- partitions

	@Test
	void clearingAPartitionForgetsOnlyItsLocks() {
		Bytes keyOfPartition1 = key("p1");
		this.table.apply(0, 0, "A", confirmed("A", K, 10, 1, 0));
		this.table.apply(1, 0, "B", new Lock("B", keyOfPartition1, 1, 10, 1, 0L, null, 1, null, NOW));

		this.table.clearPartition(0);

		assertThat(this.table.find("A")).isNull();
		assertThat(this.table.isLocked(K)).isFalse();
		assertThat(this.table.locksOf(keyOfPartition1)).extracting(Lock::id).containsExactly("B");
		assertThat(this.table.size()).isOne();
		assertThat(this.table.lockedKeys()).isOne();
	}

	// --- helpers

	private static Bytes key(String text) {
		return Bytes.wrap(text.getBytes(StandardCharsets.UTF_8));
	}

	private static Lock confirmed(String id, Bytes key, long origin, int stage, long at) {
		return new Lock(id, key, 0, origin, stage, at, null, stage, null, NOW);
	}

	private static Lock moving(String id, Bytes key, long origin, int stage, Position from) {
		return Lock.moving(id, key, 0, origin, stage, from, 1, null, NOW);
	}

	private static void applyAll(LockTable table, List<LogRecord> log) {
		log.forEach((record) -> record.applyTo(table));
	}

	/**
	 * What log compaction leaves: the last record of every lock id, at its original
	 * offset; a tombstone that is the last record of its id is dropped once
	 * delete.retention has passed.
	 */
	private static List<LogRecord> compact(List<LogRecord> log, boolean keepTombstones) {
		Map<String, LogRecord> last = new LinkedHashMap<>();
		log.forEach((record) -> last.put(record.id(), record));
		return log.stream()
			.filter((record) -> last.get(record.id()) == record)
			.filter((record) -> keepTombstones || record.lock() != null)
			.toList();
	}

	/** One record of the lock topic. */
	private record LogRecord(int partition, long offset, String id, @Nullable Lock lock) {

		void applyTo(LockTable table) {
			table.apply(this.partition, this.offset, this.id, this.lock);
		}

	}

	/** What a user of the table observes. */
	private record TableState(Set<Lock> snapshot, Map<Bytes, List<Lock>> locksByKey, Map<String, Lock> byId, int size,
			int lockedKeys) {

		static TableState of(LockTable table, List<LogRecord> log) {
			Map<Bytes, List<Lock>> byKey = new HashMap<>();
			Map<String, Lock> byId = new HashMap<>();
			for (LogRecord record : log) {
				if (record.lock() != null) {
					byKey.put(record.lock().key(), table.locksOf(record.lock().key()));
				}
				Lock found = table.find(record.id());
				if (found != null) {
					byId.put(record.id(), found);
				}
			}
			return new TableState(new HashSet<>(table.snapshot()), byKey, byId, table.size(), table.lockedKeys());
		}

	}

	/**
	 * Writes a random but protocol-shaped lock log: keys spread over partitions, several
	 * locks per key created in origin order, moves (in flight, then confirmed) to later
	 * stages and releases, each record at the next offset of its key's lock partition.
	 */
	private static final class LockLog {

		private final Random random;

		private final int partitions;

		private final List<Bytes> keys;

		private final Map<Integer, Long> nextOffset = new HashMap<>();

		private final Map<Integer, Long> nextOrigin = new HashMap<>();

		private final Map<String, Lock> live = new LinkedHashMap<>();

		private int maxLiveLocksOfOneKey;

		private int ids;

		LockLog(Random random, int partitions, int keys) {
			this.random = random;
			this.partitions = partitions;
			this.keys = IntStream.range(0, keys).mapToObj((i) -> key("key-" + i)).toList();
		}

		int partitions() {
			return this.partitions;
		}

		List<Lock> live() {
			return List.copyOf(this.live.values());
		}

		int maxLiveLocksOfOneKey() {
			return this.maxLiveLocksOfOneKey;
		}

		/**
		 * The tailer position of a partition after reading the records up to index
		 * {@code i}.
		 */
		long positionAfter(List<LogRecord> log, int partition, int i) {
			long position = 0;
			for (int j = 0; j <= i; j++) {
				if (log.get(j).partition() == partition) {
					position = log.get(j).offset() + 1;
				}
			}
			return position;
		}

		List<LogRecord> generate(int records) {
			List<LogRecord> log = new ArrayList<>();
			while (log.size() < records) {
				int choice = this.random.nextInt(10);
				if (this.live.isEmpty() || choice < 3) {
					create(log);
				}
				else {
					Lock lock = new ArrayList<>(this.live.values()).get(this.random.nextInt(this.live.size()));
					if (lock.isMoving()) {
						write(log, lock.confirmedAt(this.random.nextInt(1000), NOW));
					}
					else if (choice < 7) {
						write(log, lock.moveTo(lock.stage() + this.random.nextInt(2), lock.position(),
								lock.retryCount() + 1, null, NOW));
					}
					else {
						release(log, lock);
					}
				}
				long maxOfOneKey = this.keys.stream()
					.mapToLong((key) -> this.live.values().stream().filter((lock) -> lock.key().equals(key)).count())
					.max()
					.orElse(0);
				this.maxLiveLocksOfOneKey = Math.max(this.maxLiveLocksOfOneKey, (int) maxOfOneKey);
			}
			return log;
		}

		private void create(List<LogRecord> log) {
			int index = this.random.nextInt(this.keys.size());
			Bytes key = this.keys.get(index);
			int partition = index % this.partitions;
			long origin = this.nextOrigin.merge(partition, 1L + this.random.nextInt(3), Long::sum);
			String id = "lock-" + (this.ids++);
			write(log, Lock.moving(id, key, partition, origin, 1, new Position(0, origin), this.random.nextInt(2), null,
					NOW));
		}

		private void write(List<LogRecord> log, Lock lock) {
			this.live.put(lock.id(), lock);
			log.add(new LogRecord(lock.originPartition(), offset(lock.originPartition()), lock.id(), lock));
		}

		private void release(List<LogRecord> log, Lock lock) {
			this.live.remove(lock.id());
			log.add(new LogRecord(lock.originPartition(), offset(lock.originPartition()), lock.id(), null));
		}

		private long offset(int partition) {
			return this.nextOffset.merge(partition, 1L, Long::sum) - 1;
		}

	}

}
