package io.github.kafkaresilience.internal.lock;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.github.kafkaresilience.internal.lock.OperatorCommand.Action;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Operator command records (docs/PROTOCOL.md, rule 11) as the lock table keeps them:
 * decoded from the lock topic, applied beside the locks, versioned by offset like them,
 * and offered to the router only for the lock at the position the command names.
 */
class CommandTableTests {

	private static final Instant NOW = Instant.parse("2026-11-28T10:15:30.123456789Z");

	private static final Bytes KEY = Bytes.wrap("k".getBytes(StandardCharsets.UTF_8));

	private final LockTable table = new LockTable();

	private final Lock lock = new Lock("L1", KEY, 2, 40, 2, 17L, null, 3, null, NOW);

	@Test
	void aCommandSurvivesTheCodecWithItsPartitionFromTheRecord() {
		OperatorCommand command = OperatorCommand.on(this.lock, Action.DEAD_LETTER_NOW, "alice", "c1", NOW);
		byte[] value = CommandCodec.encode(command);
		assertThat(new String(value, StandardCharsets.UTF_8)).contains("\"action\":\"dead-letter-now\"",
				"\"lock\":\"L1\"", "\"stage\":2", "\"at\":17", "\"by\":\"alice\"");
		assertThat(CommandCodec.decode("cmd:c1", 2, headers(), value)).isEqualTo(command);
		assertThat(command.recordKey()).isEqualTo("cmd:c1");
	}

	@Test
	void aCommandRecordThatCannotBeReadSaysWhy() {
		byte[] good = CommandCodec.encode(OperatorCommand.on(this.lock, Action.RETRY_NOW, "alice", "c1", NOW));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> CommandCodec.decode("cmd:c1", 2, new RecordHeaders(), good))
			.withMessageContaining("has no 'business-key' header");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> CommandCodec.decode("cmd:c1", 2, headers(), "{\"v\":2}".getBytes(StandardCharsets.UTF_8)))
			.withMessageContaining("has version 2 but this library reads version 1");
		assertThatIllegalArgumentException()
			.isThrownBy(
					() -> CommandCodec.decode("cmd:c1", 2, headers(),
							new String(good, StandardCharsets.UTF_8).replace("retry-now", "skip")
								.getBytes(StandardCharsets.UTF_8)))
			.withMessageContaining("Unknown operator action 'skip'");
		assertThatIllegalArgumentException().isThrownBy(() -> CommandCodec.decode("L1", 2, headers(), good))
			.withMessageContaining("is not a command's");
	}

	@Test
	void aCommandAppliesOnlyToItsLockWhereItSawIt() {
		this.table.apply(2, 1, "L1", this.lock);
		OperatorCommand command = OperatorCommand.on(this.lock, Action.RETRY_NOW, "alice", "c1", NOW);
		this.table.applyCommand(2, 2, "c1", command);
		assertThat(this.table.commandFor(this.lock)).isEqualTo(command);
		Lock moved = this.lock.moveTo(3, new Position(2, 17), 4, null, NOW);
		assertThat(this.table.commandFor(moved)).as("moving: void").isNull();
		assertThat(this.table.commandFor(moved.confirmedAt(5, NOW))).as("elsewhere: void").isNull();
		assertThat(this.table.commandsOf("L1")).containsExactly(command);
	}

	@Test
	void theFirstWrittenOfTwoCommandsOnALockIsActedOn() {
		OperatorCommand deadLetter = OperatorCommand.on(this.lock, Action.DEAD_LETTER_NOW, "bob", "c2", NOW);
		OperatorCommand retry = OperatorCommand.on(this.lock, Action.RETRY_NOW, "alice", "c1", NOW);
		this.table.applyCommand(2, 9, "c2", deadLetter);
		this.table.applyCommand(2, 5, "c1", retry);
		assertThat(this.table.commandFor(this.lock)).isEqualTo(retry);
	}

	@Test
	void anOwnTombstoneIsNotUndoneByTheCommandRecordTheTailerReadsLater() {
		List<OperatorCommand> heard = new ArrayList<>();
		this.table.addCommandListener(heard::add);
		OperatorCommand command = OperatorCommand.on(this.lock, Action.RETRY_NOW, "alice", "c1", NOW);
		assertThat(this.table.applyCommand(2, 3, "c1", command)).isTrue();
		assertThat(this.table.applyCommand(2, 8, "c1", null)).isTrue();
		assertThat(this.table.applyCommand(2, 3, "c1", command)).as("older: ignored").isFalse();
		assertThat(this.table.applyCommand(2, 3, "c1", command)).as("a duplicate too").isFalse();
		assertThat(this.table.commands()).isEmpty();
		assertThat(heard).containsExactly(command);
		this.table.tailerReached(2, 9);
		assertThat(this.table.commands()).isEmpty();
	}

	@Test
	void forgettingAPartitionForgetsItsCommands() {
		this.table.applyCommand(2, 3, "c1", OperatorCommand.on(this.lock, Action.RETRY_NOW, "alice", "c1", NOW));
		this.table.clearPartition(2);
		assertThat(this.table.commands()).isEmpty();
	}

	@Test
	void aCommandNeedsALockConfirmedAtItsStage() {
		Lock moving = this.lock.moveTo(3, new Position(2, 17), 4, null, NOW);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> OperatorCommand.on(moving, Action.RETRY_NOW, "alice", "c1", NOW))
			.withMessageContaining("is moving: a command needs a lock confirmed at its stage");
		assertThatIllegalArgumentException().isThrownBy(() -> Action.of("pause"))
			.withMessage("Unknown operator action 'pause'; expected retry-now or dead-letter-now");
	}

	private static Headers headers() {
		return LockCodec.headers(KEY, "instance-a", new Ownership("billing", true, List.of()));
	}

}
