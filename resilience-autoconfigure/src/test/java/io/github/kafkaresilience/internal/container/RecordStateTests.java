package io.github.kafkaresilience.internal.container;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static io.github.kafkaresilience.internal.container.Records.ORDERS_0;
import static io.github.kafkaresilience.internal.container.Records.task;
import static io.github.kafkaresilience.internal.container.Records.work;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A record's life: the states docs/ARCHITECTURE.md lists are the enum's, with the same
 * transitions; only a record's partition changes its state, and only along them.
 */
class RecordStateTests {

	private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

	/** A row of the table: {@code | `STATE` | what it means | `NEXT`, `NEXT` |}. */
	private static final Pattern ROW = Pattern.compile("^\\| `([A-Z_]+)` \\| [^|]+ \\| ([^|]+) \\|$");

	private static final Pattern STATE = Pattern.compile("`([A-Z_]+)`");

	/** The calls that change a record's state. */
	private static final Pattern CHANGE = Pattern.compile("\\.(become|failWith|startRun)\\(");

	@Test
	void theArchitecturesTableListsEveryStateWithItsTransitions() throws IOException {
		Map<RecordState, Set<RecordState>> documented = new EnumMap<>(RecordState.class);
		for (String line : Files.readAllLines(ROOT.resolve("docs/ARCHITECTURE.md"))) {
			Matcher row = ROW.matcher(line);
			if (!row.matches()) {
				continue;
			}
			RecordState state = RecordState.valueOf(row.group(1));
			String next = row.group(2).trim();
			if (next.startsWith("as `")) {
				Matcher same = STATE.matcher(next);
				assertThat(same.find()).isTrue();
				next = documented.get(RecordState.valueOf(same.group(1)))
					.stream()
					.map((s) -> "`" + s + "`")
					.reduce((a, b) -> a + ", " + b)
					.orElse("none");
			}
			Set<RecordState> targets = EnumSet.noneOf(RecordState.class);
			Matcher target = STATE.matcher(next);
			while (target.find()) {
				targets.add(RecordState.valueOf(target.group(1)));
			}
			documented.put(state, targets);
		}
		assertThat(documented.keySet()).containsExactlyInAnyOrder(RecordState.values());
		Arrays.stream(RecordState.values())
			.forEach((state) -> assertThat(documented.get(state)).as("from %s", state).isEqualTo(state.next()));
	}

	@Test
	void onlyARecordsPartitionChangesItsState() {
		assertThat(ContainerSources.filesMatching(CHANGE)).containsExactly("PartitionWork.java");
	}

	@Test
	void aRecordGoesThroughItsPartitionAlongTheTableOnly() {
		PartitionWork work = work(ORDERS_0, 4);
		RecordTask record = task(work, 0, "a");
		assertThat(work.take(record)).isEqualTo(PartitionWork.Taken.RUN);
		assertThat(record.state()).isEqualTo(RecordState.QUEUED);
		assertThatExceptionOfType(AssertionError.class).as("not run yet")
			.isThrownBy(() -> work.done(record))
			.withMessageContaining("may not go from QUEUED to DONE");
		assertThat(work.start(record)).as("routed afresh").isNull();
		assertThat(record.state()).isEqualTo(RecordState.RUNNING);
		assertThat(work.failed(record, Records.failure())).as("first of its key").isFalse();
		assertThat(record.state()).isEqualTo(RecordState.FAILURE_PENDING);
		assertThat(work.start(record)).as("the rest of its step").isNotNull();
		work.advance(record, RecordState.SETTLING);
		assertThat(work.done(record)).isNull();
		assertThat(record.state()).isEqualTo(RecordState.DONE);
		assertThat(work.firstPending()).isEqualTo(1);
	}

	@Test
	void aRecordThatWaitsIsQueuedWhenHandedBackAndARecordWhoseRunFailedKeepsItsFailure() {
		PartitionWork work = work(ORDERS_0, 4);
		RecordTask waiting = task(work, 0, "a");
		work.take(waiting);
		work.start(waiting);
		work.advance(waiting, RecordState.WAITING);
		work.handBack(waiting);
		assertThat(waiting.state()).isEqualTo(RecordState.QUEUED);
		RecordTask failing = Records.failing(work, 1, "b");
		work.handBack(failing);
		assertThat(failing.state()).isEqualTo(RecordState.FAILURE_PENDING);
	}

}
