package io.github.kafkaresilience.internal.container;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import io.github.kafkaresilience.container.ContainerSettings;

import static io.github.kafkaresilience.internal.container.Records.ORDERS_0;
import static io.github.kafkaresilience.internal.container.Records.task;
import static io.github.kafkaresilience.internal.container.Records.work;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The re-reader hands parked records back to their partition when they are nearly due, in
 * offset order, stops at the first one not nearly due unless an earlier record of its key
 * went back in the same pass, and takes parked offsets the log no longer holds as done.
 * For operators' commands it hands back the commanded records with their keys' records
 * behind them, and nothing of any other key.
 */
class RereaderTests {

	private static final long NOW = 1_000_000;

	/** Reads again 2 s before the due time: half of park-after, at most 2 s. */
	private static final ContainerSettings SETTINGS = new ContainerSettings(1, 10, Duration.ofMillis(5),
			Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(10), false);

	private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>(AutoOffsetResetStrategy.EARLIEST.name());

	private final Partitions partitions = new Partitions();

	private final PartitionWork work = work(ORDERS_0, 10);

	private final Map<Long, Long> due = new HashMap<>();

	private final Map<Long, String> keys = new HashMap<>();

	private final List<Long> handedBack = new ArrayList<>();

	private final Rereader rereader = new Rereader("test", this.consumer, this.partitions, SETTINGS,
			Clock.fixed(Instant.ofEpochMilli(NOW), ZoneOffset.UTC), (work, record) -> this.due.get(record.offset()),
			(work, record) -> {
				this.handedBack.add(record.offset());
				return work.unpark(new RecordTask(work, record), new ArrayList<>()) != PartitionWork.Taken.REFUSED;
			});

	RereaderTests() {
		this.partitions.add(this.work);
		this.consumer.updateBeginningOffsets(Map.of(ORDERS_0, 0L));
	}

	@Test
	void nearlyDueRecordsGoBackInOrderAndThePassStopsAtTheFirstOneNotNearlyDue() {
		park(0, "a", NOW + 1_000); // nearly due
		park(1, "b", NOW + 60_000); // behind nothing: ends the pass
		park(2, "c", NOW + 1_500);
		inTheLog(0, 1, 2);
		assertThat(this.rereader.visit(this.work)).isEqualTo(NOW + 60_000 - 2_000);
		assertThat(this.handedBack).containsExactly(0L);
		assertThat(this.work.parked.isParked(0)).isFalse();
		assertThat(this.work.parked.isParked(1)).isTrue();
	}

	@Test
	void aRecordBehindOneOfItsKeyHandedBackInThePassGoesBackTooWhateverItsDueTime() {
		park(0, "a", NOW + 1_000);
		park(1, "a", NOW + 60_000);
		inTheLog(0, 1);
		this.rereader.visit(this.work);
		assertThat(this.handedBack).containsExactly(0L, 1L);
		assertThat(this.work.parked.count()).isZero();
	}

	@Test
	void nothingIsReadBeforeItIsTimeToLook() {
		park(0, "a", NOW + 60_000);
		inTheLog(0);
		assertThat(this.rereader.visit(this.work)).isEqualTo(NOW + 60_000 - 2_000);
		assertThat(this.handedBack).isEmpty();
	}

	@Test
	void parkedOffsetsTheLogNoLongerHoldsAreDone() {
		park(0, "a", NOW);
		park(1, "b", NOW);
		park(2, "c", NOW);
		inTheLog(2); // 0 and 1 deleted by retention
		this.rereader.visit(this.work);
		assertThat(this.handedBack).containsExactly(2L);
		assertThat(this.work.parked.count()).isZero();
		assertThat(this.work.committable()).hasValue(2);
	}

	/**
	 * Heads of keys a, b and c wait an hour in a stage, each with a follower behind it
	 * that may run at once but waits for its head. A command on c's head hands back c's
	 * records only: the others' followers stay parked behind their heads, where taken
	 * back alone they would queue ahead of them. Commands on a's and b's heads hand back
	 * both keys, each head first.
	 */
	@Test
	void aCommandPassHandsBackTheCommandedKeysAndNothingOfAnotherKey() {
		long hour = NOW + 3_600_000;
		park(0, "a", hour);
		park(1, "b", hour);
		park(2, "c", hour);
		parkBehind(3, "a", NOW); // a follower: it may run at once, in its key's turn
		parkBehind(4, "b", NOW);
		parkBehind(5, "c", NOW);
		inTheLog(0, 1, 2, 3, 4, 5);
		this.rereader.passForCommands(this.work, keys("c"));
		assertThat(this.handedBack).containsExactly(2L, 5L);
		assertThat(this.work.parked.isParked(3)).as("a's follower stays behind its head").isTrue();

		this.handedBack.clear();
		inTheLog(0, 1, 3, 4);
		this.rereader.passForCommands(this.work, keys("a", "b"));
		assertThat(this.handedBack).containsExactly(0L, 1L, 3L, 4L);
		assertThat(this.work.parked.count()).isZero();
	}

	/**
	 * A head re-appended to the last stage sits behind its own follower there: a command
	 * on it hands back the follower first, then the head, as they were read, so that
	 * neither queues ahead of the other out of order; another key between them stays
	 * parked.
	 */
	@Test
	void aCommandPassHandsBackAKeysRecordsFromItsFirstParkedOne() {
		park(0, "a", NOW); // a's follower, parked when its head was
		parkBehind(1, "a", NOW + 3_600_000); // a's head, re-appended behind it
		parkBehind(2, "a", NOW);
		park(3, "b", NOW + 3_600_000);
		inTheLog(0, 1, 2, 3);
		this.rereader.passForCommands(this.work, keys("a"));
		assertThat(this.handedBack).containsExactly(0L, 1L, 2L);
		assertThat(this.work.parked.isParked(3)).isTrue();
	}

	@Test
	void aCommandOnAKeyWithNothingParkedReadsNothing() {
		park(0, "a", NOW + 3_600_000);
		inTheLog(0);
		this.rereader.passForCommands(this.work, keys("z"));
		assertThat(this.handedBack).isEmpty();
		assertThat(this.work.parked.isParked(0)).isTrue();
	}

	private static Set<Bytes> keys(String... keys) {
		return Arrays.stream(keys)
			.map((key) -> Bytes.wrap(key.getBytes(StandardCharsets.UTF_8)))
			.collect(Collectors.toSet());
	}

	/** Takes a record and parks it, to be read again 2 s before {@code dueAt}. */
	private void park(long offset, String key, long dueAt) {
		RecordTask task = task(this.work, offset, key);
		PartitionWork.Taken taken = this.work.take(task);
		this.due.put(offset, dueAt);
		this.keys.put(offset, key);
		if (taken == PartitionWork.Taken.PARKED) {
			return; // behind a parked record of its key
		}
		this.work.advance(task, RecordState.RUNNING);
		assertThat(this.work.park(task, dueAt - SETTINGS.rereadLeadMillis())).isTrue();
	}

	/** Takes a record behind a parked one of its key: it parks too. */
	private void parkBehind(long offset, String key, long dueAt) {
		this.due.put(offset, dueAt);
		this.keys.put(offset, key);
		assertThat(this.work.take(task(this.work, offset, key))).isEqualTo(PartitionWork.Taken.PARKED);
		assertThat(this.work.parked.isParked(offset)).isTrue();
	}

	/**
	 * The records the log holds, polled once the re-reader has assigned itself the
	 * partition.
	 */
	private void inTheLog(long... offsets) {
		this.consumer.schedulePollTask(() -> {
			for (long offset : offsets) {
				this.consumer.addRecord(new ConsumerRecord<>(ORDERS_0.topic(), ORDERS_0.partition(), offset,
						this.keys.get(offset).getBytes(StandardCharsets.UTF_8), new byte[0]));
			}
		});
	}

}
