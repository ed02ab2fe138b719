package io.github.kafkaresilience.simulation;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.ladder.ReadyRun;
import io.github.kafkaresilience.ladder.RecordHandler;
import io.github.kafkaresilience.internal.ladder.RecordPublisher;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.ladder.StageRouter;
import io.github.kafkaresilience.internal.ladder.Step;
import io.github.kafkaresilience.internal.lock.CommandCodec;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockCodec;
import io.github.kafkaresilience.internal.lock.LockStore;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import io.github.kafkaresilience.internal.lock.Position;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.internal.lock.TestLockTable;
import io.github.kafkaresilience.internal.container.TestTenants;
import io.github.kafkaresilience.internal.support.MovingClock;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;

/**
 * An in-memory Kafka for the retry protocol: topics as append-only logs, the lock log,
 * the committed offsets of one consumer group, a simulated clock, and application
 * instances whose incarnations each hold a real lock table ({@link TestLockTable}) and a
 * real {@link StageRouter} over ports implemented here. Every port call goes through a
 * {@link Hook} first, where the scheduler can crash the instance, run other actions in
 * between (concurrency), or make the call fail.
 * <p>
 * The world also records the ground truth (what was produced, every handler run, every
 * DLQ record) and checks the invariants that can be checked the moment something happens.
 * <p>
 * Two more kinds of record enter the ladder's topics from outside. Records of another
 * consumer group, or without an owner, are planted in the stage logs and the lock log:
 * they must never run, be applied, moved or dead-lettered. Dead letters (and records that
 * succeeded) are replayed into stage 1: each replay is a {@link Replay}, a new life of
 * its record, which the owner of its main-topic partition admits into its key's order
 * (docs/PROTOCOL.md, rule 2.0).
 */
final class SimWorld {

	static final String MAIN = "orders";

	/** The consumer group that owns the simulated ladder. */
	static final String GROUP = "billing";

	/** Another consumer group, whose records are planted in this group's ladder. */
	static final String OTHER_GROUP = "shipping";

	/** A user header every produced record carries; it must travel unchanged. */
	static final String USER_HEADER = "trace-id";

	/**
	 * A user header naming the {@link Replay} a record descends from: a user header
	 * travels unchanged, so every copy and dead letter of a replay says which life it
	 * belongs to.
	 */
	static final String REPLAY_HEADER = "sim.replay";

	/** The {@code updated} time of every forged lock: no lock of ours is that old. */
	static final Instant FORGED = Instant.EPOCH;

	/**
	 * The ownership check of each ladder shape. The library shares one per ladder, and
	 * every seed of one shape uses the same topic names: one per shape warns once per
	 * partition about a foreign record, not once per seed.
	 */
	private static final Map<List<String>, Ownership> OWNERSHIPS = new ConcurrentHashMap<>();

	static final long START = 1_700_000_000_000L;

	/** A topic partition. */
	record TP(String topic, int partition) {

		@Override
		public String toString() {
			return this.topic + "/" + this.partition;
		}

	}

	/** A record of a simulated topic partition. */
	record Rec(String topic, int partition, long offset, long timestamp, byte[] key, byte[] value, Headers headers) {

		Delivery delivery() {
			return new Delivery(this.topic, this.partition, this.offset, this.timestamp, this.key, this.value,
					this.headers);
		}

		@Override
		public String toString() {
			return this.topic + "/" + this.partition + "/" + this.offset;
		}

	}

	/**
	 * A record of the lock log: a lock version or (lock == null) a tombstone.
	 * {@code headers} are the real ones when the world encodes locks, and on every
	 * planted record; an unencoded record of ours has none and stands for one stamped
	 * with our group, as every write of the registry is.
	 */
	record LockRec(int partition, long offset, String id, Bytes key, Lock lock, byte[] value, Headers headers,
			String writer, boolean planted) {

		/**
		 * Whether it is an operator command's record (or its tombstone), not a lock's.
		 */
		boolean isCommand() {
			return OperatorCommand.isCommandKey(this.id);
		}

	}

	/**
	 * One life of a record in the ladder, from the moment it is taken in until it
	 * succeeds or is dead-lettered: a record produced to the main topic, or a replay of
	 * one. Its order checks are about its first success or dead letter; later runs are
	 * redeliveries.
	 */
	abstract static class Life {

		long firstSuccess = -1;

		long firstDlq = -1;

		int runs;

		/**
		 * The lives of its key that must finish before this one runs, beyond what the
		 * produce order says: set when a replay is admitted (docs/PROTOCOL.md, rule 2.0).
		 */
		final List<Life> predecessors = new ArrayList<>(0);

		boolean finished() {
			return this.firstSuccess >= 0 || this.firstDlq >= 0;
		}

		long finishedAt() {
			if (this.firstSuccess < 0) {
				return this.firstDlq;
			}
			return (this.firstDlq < 0) ? this.firstSuccess : Math.min(this.firstSuccess, this.firstDlq);
		}

		abstract Bytes key();

	}

	/**
	 * A dead letter (or a record that succeeded) sent back into stage 1 as a replay
	 * entry: a new life of {@link #origin}, placed in its key's order where the owner of
	 * its main-topic partition admits its lock.
	 */
	static final class Replay extends Life {

		final int index;

		final Produced origin;

		final Rec entry;

		/**
		 * The id of its lock, from where it entered; {@code null} for a record without a
		 * key.
		 */
		final String lockId;

		/** The event of its first admission, or -1. */
		long admittedAt = -1;

		int admissions;

		/** How many live locks of its key sorted before it at its first admission. */
		int behind;

		Replay(int index, Produced origin, Rec entry, String lockId) {
			this.index = index;
			this.origin = origin;
			this.entry = entry;
			this.lockId = lockId;
		}

		@Override
		Bytes key() {
			return this.origin.key;
		}

		@Override
		public String toString() {
			return "replay#" + this.index + "(of " + this.origin + " at " + this.entry + ")";
		}

	}

	/** A record produced to the main topic, and what became of it. */
	static final class Produced extends Life {

		final int index;

		final int partition;

		final long offset;

		final String keyName;

		final Bytes key;

		final byte[] value;

		final boolean poison;

		Produced(int index, int partition, long offset, String keyName, byte[] value, boolean poison) {
			this.index = index;
			this.partition = partition;
			this.offset = offset;
			this.keyName = keyName;
			this.key = (keyName != null) ? Bytes.wrap(keyName.getBytes(StandardCharsets.UTF_8)) : null;
			this.value = value;
			this.poison = poison;
		}

		@Override
		Bytes key() {
			return this.key;
		}

		@Override
		public String toString() {
			return "#" + this.index + "(" + MAIN + "/" + this.partition + "/" + this.offset + " key=" + this.keyName
					+ ")";
		}

	}

	enum Call {

		FIND, LOCKS_OF, BY_ORIGIN, PREDECESSOR, WRITE, RELEASE, PUBLISH, HANDLE, COMMAND_FOR, END_COMMAND;

		boolean isWrite() {
			return this == WRITE || this == RELEASE || this == PUBLISH || this == END_COMMAND;
		}

	}

	/**
	 * How a write-like port call fails: not at all, before its effect, or after it (ack
	 * lost).
	 */
	enum Fail {

		NONE, CLEAN, AMBIGUOUS

	}

	/**
	 * Runs before every port call; may crash the caller, run other actions, or make the
	 * call fail.
	 */
	interface Hook {

		Fail before(Incarnation incarnation, Call call);

	}

	/** Decides what the user's handler does with one run of a record. */
	interface HandlerPolicy {

		HandlerResult decide(Produced record, Delivery delivery);

	}

	/** One route() call, or one admission of a replay, in progress. */
	static final class RouteContext {

		final Incarnation incarnation;

		/** The record routed; {@code null} for an admission. */
		final Delivery delivery;

		/**
		 * Where the record was born; {@code null} for an admission or a planted record.
		 */
		final Produced origin;

		/**
		 * Which life of it the record is; {@code null} for an admission or a planted
		 * record.
		 */
		final Life life;

		/**
		 * Whether the record routed is one of another group (or without an owner):
		 * planted.
		 */
		final boolean foreign;

		/** The pending lock admitted, or {@code null} for a route. */
		final String admission;

		HandlerResult lastResult;

		boolean failureInjected;

		RouteContext(Incarnation incarnation, Delivery delivery, Produced origin, Life life, boolean foreign,
				String admission) {
			this.incarnation = incarnation;
			this.delivery = delivery;
			this.origin = origin;
			this.life = life;
			this.foreign = foreign;
			this.admission = admission;
		}

	}

	/** An application instance: a stable name and its current incarnation (process). */
	final class SimInstance {

		final String name;

		Incarnation current;

		int incarnations;

		SimInstance(String name) {
			this.name = name;
			this.current = new Incarnation(this, ++this.incarnations);
		}

		@Override
		public String toString() {
			return this.name;
		}

	}

	/**
	 * One process of an instance: dies with a crash; its table is rebuilt by its
	 * successor.
	 */
	final class Incarnation {

		final SimInstance instance;

		final int number;

		final TestLockTable table = new TestLockTable();

		final long[] tailerPos = new long[SimWorld.this.partitions];

		final StageRouter router;

		/**
		 * The lock store of its router, which admissions use too (as the container uses
		 * the registry).
		 */
		final LockStore store = new Store();

		final Map<TP, Work> works = new LinkedHashMap<>();

		/**
		 * The tenants of its listener's records (the container's {@code Tenants}), or
		 * {@code null} when they have none: gone with the process.
		 */
		TestTenants tenants;

		boolean dead;

		Incarnation(SimInstance instance, int number) {
			this.instance = instance;
			this.number = number;
			RecordHandler handler = this::handle;
			RecordPublisher publisher = new Publisher();
			this.router = StageRouter.builder(SimWorld.this.plan, this.store, publisher, handler)
				.classifier(SimWorld.this.classifier)
				.clock(SimWorld.this.clock)
				.lockIds(() -> "L" + (++SimWorld.this.lockIds))
				.ownership(SimWorld.this.ownership)
				.batchRuns(SimWorld.this.batches)
				.build();
		}

		private Fail enter(Call call) {
			if (this.dead) {
				throw new Crash(this + " is dead");
			}
			RouteContext context = SimWorld.this.contexts.peek();
			if (context != null && context.foreign) {
				throw new SimViolation("(6) routing " + context.delivery + ", a record of another group (or of none), "
						+ "made a " + call + " call: it must be skipped before anything is looked up, run or written");
			}
			Fail fail = SimWorld.this.hook.before(this, call);
			if (this.dead) {
				throw new Crash(this + " died before " + call);
			}
			return fail;
		}

		/**
		 * The handler runs from the moment its port call is entered (where other actions
		 * may go on, as other workers do while a handler runs) until it returns.
		 */
		HandlerResult handle(Delivery delivery) {
			RouteContext context = SimWorld.this.contexts.peek();
			SimWorld.this.handling.add(context);
			try {
				enter(Call.HANDLE);
				return SimWorld.this.runHandler(this, delivery);
			}
			finally {
				SimWorld.this.handling.remove(context);
			}
		}

		private long publish(String topic, int partition, byte[] key, byte[] value, Headers headers) {
			Fail fail = enter(Call.PUBLISH);
			SimWorld.this.sends.flush(this, new TP(topic, partition));
			if (fail == Fail.CLEAN) {
				trace(() -> "    " + this + " publish to " + topic + " FAILS (injected, not written)");
				throw new KafkaException("injected publish failure");
			}
			Rec rec = land(topic, partition, key, value, headers,
					(fail == Fail.AMBIGUOUS) ? " then FAILS (injected, ack lost)" : "");
			if (fail == Fail.AMBIGUOUS) {
				throw new KafkaException("injected publish failure after the write");
			}
			return rec.offset();
		}

		/** Sends a publish that lands and is acknowledged when the scheduler says so. */
		private CompletableFuture<Long> sending(String topic, int partition, byte[] key, byte[] value,
				Headers headers) {
			Fail fail = enter(Call.PUBLISH);
			return SimWorld.this.sends.send(this, new TP(topic, partition), "publish", fail,
					() -> land(topic, partition, key, value, headers, "").offset());
		}

		private Rec land(String topic, int partition, byte[] key, byte[] value, Headers headers, String then) {
			Rec rec = append(topic, partition, key, value, headers);
			trace(() -> "    " + this + " publish " + rec + describeHeaders(headers) + then);
			checkPublish(rec);
			return rec;
		}

		@Override
		public String toString() {
			return this.instance.name + "#" + this.number;
		}

		private final class Store implements LockStore {

			@Override
			public Lock find(String id) {
				enter(Call.FIND);
				return Incarnation.this.table.find(id);
			}

			@Override
			public List<Lock> locksOf(Bytes key) {
				enter(Call.LOCKS_OF);
				return Incarnation.this.table.locksOf(key);
			}

			@Override
			public Lock byOrigin(Bytes key, long originOffset) {
				enter(Call.BY_ORIGIN);
				return Incarnation.this.table.byOrigin(key, originOffset);
			}

			@Override
			public Lock predecessor(Lock lock) {
				enter(Call.PREDECESSOR);
				return Incarnation.this.table.predecessor(lock);
			}

			@Override
			public OperatorCommand commandFor(Lock lock) {
				enter(Call.COMMAND_FOR);
				return Incarnation.this.table.commandFor(lock);
			}

			/**
			 * Ends a command with its tombstone, sent without waiting when the world's
			 * writes are asynchronous; applied to the table on the acknowledgement, as
			 * {@code LockRegistry} does.
			 */
			@Override
			public CompletableFuture<Void> finishing(OperatorCommand command) {
				Fail fail = enter(Call.END_COMMAND);
				Incarnation me = Incarnation.this;
				TP tp = new TP(SimWorld.this.plan.lockTopic(), command.partition());
				if (!SimWorld.this.async) {
					if (fail == Fail.CLEAN) {
						return CompletableFuture.failedFuture(new KafkaException("injected command tombstone failure"));
					}
					LockRec rec = appendCommand(command.partition(), command, null, me.instance.name, null);
					SimWorld.this.commandsEnded++;
					trace(() -> "    " + me + " end command " + command.id() + " @locks/" + rec.partition() + "/"
							+ rec.offset());
					if (fail == Fail.AMBIGUOUS) {
						return CompletableFuture
							.failedFuture(new KafkaException("injected failure after the tombstone"));
					}
					me.table.applyCommand(rec.partition(), rec.offset(), command.id(), null);
					return CompletableFuture.completedFuture(null);
				}
				return SimWorld.this.sends.send(me, tp, "end command " + command.id(), fail, () -> {
					SimWorld.this.commandsEnded++;
					return appendCommand(command.partition(), command, null, me.instance.name, null).offset();
				}).thenAccept((offset) -> me.table.applyCommand(command.partition(), offset, command.id(), null));
			}

			@Override
			public void write(Lock lock) {
				writeLock(Call.WRITE, lock, lock);
			}

			@Override
			public void release(Lock lock) {
				writeLock(Call.RELEASE, lock, null);
			}

			@Override
			public CompletableFuture<Void> writing(Lock lock) {
				return SimWorld.this.async ? sendLock(Call.WRITE, lock, lock) : LockStore.super.writing(lock);
			}

			@Override
			public CompletableFuture<Void> releasing(Lock lock) {
				return SimWorld.this.async ? sendLock(Call.RELEASE, lock, null) : LockStore.super.releasing(lock);
			}

			private void writeLock(Call call, Lock about, Lock value) {
				Fail fail = enter(call);
				Incarnation me = Incarnation.this;
				// an awaited write comes after the writes of this process to its
				// partition still under way
				SimWorld.this.sends.flush(me, new TP(SimWorld.this.plan.lockTopic(), about.originPartition()));
				if (fail == Fail.CLEAN) {
					trace(() -> "    " + me + " " + call.name().toLowerCase() + " " + about
							+ " FAILS (injected, not written)");
					throw new KafkaException("injected lock write failure");
				}
				LockRec rec = landLock(about, value,
						(fail == Fail.AMBIGUOUS) ? " then FAILS (injected, ack lost)" : "");
				if (fail == Fail.AMBIGUOUS) {
					throw new KafkaException("injected lock write failure after the write");
				}
				me.table.apply(rec.partition(), rec.offset(), rec.id(), value);
			}

			/**
			 * Sends a lock record that lands and is acknowledged when the scheduler says
			 * so; the table applies it on the acknowledgement, before the future
			 * completes, as {@code LockRegistry.writing} does.
			 */
			private CompletableFuture<Void> sendLock(Call call, Lock about, Lock value) {
				Fail fail = enter(call);
				Incarnation me = Incarnation.this;
				String what = (value != null) ? "write " + value : "release " + about.id();
				return SimWorld.this.sends
					.send(me, new TP(SimWorld.this.plan.lockTopic(), about.originPartition()), what, fail,
							() -> landLock(about, value, "").offset())
					.thenAccept((offset) -> me.table.apply(about.originPartition(), offset, about.id(), value));
			}

			private LockRec landLock(Lock about, Lock value, String then) {
				Incarnation me = Incarnation.this;
				if (value != null) {
					checkLockWrite(value);
				}
				LockRec rec = appendLock(about.originPartition(), about.id(), about.key(), value, me.instance.name);
				if (value != null && value.entry() != null) {
					checkReplayLockWrite(rec, value);
				}
				trace(() -> "    " + me + " " + ((value != null) ? "write " + value : "release " + about.id())
						+ " @locks/" + rec.partition() + "/" + rec.offset() + then);
				return rec;
			}

		}

		/**
		 * The ladder's publisher: awaited, or sent without waiting when the world's
		 * writes are asynchronous.
		 */
		private final class Publisher implements RecordPublisher {

			@Override
			public long publish(String topic, int partition, byte[] key, byte[] value, Headers headers) {
				return Incarnation.this.publish(topic, partition, key, value, headers);
			}

			@Override
			public CompletableFuture<Long> sending(String topic, int partition, byte[] key, byte[] value,
					Headers headers) {
				return SimWorld.this.async ? Incarnation.this.sending(topic, partition, key, value, headers)
						: RecordPublisher.super.sending(topic, partition, key, value, headers);
			}

		}

	}

	/**
	 * The partition work of an owner (what a container holds per assigned topic
	 * partition).
	 */
	static final class Work {

		final TP tp;

		final Incarnation owner;

		final long barrierEnd;

		long fetchPos;

		boolean revoked;

		final TreeSet<Long> pending = new TreeSet<>();

		final Map<Bytes, ArrayDeque<Task>> queues = new HashMap<>();

		final List<Task> tasks = new ArrayList<>();

		/**
		 * Offsets parked (the container's {@code PartitionWork}): pending, but let go of
		 * in memory until a pass of the re-reader takes them back.
		 */
		final TreeSet<Long> parked = new TreeSet<>();

		/**
		 * Keys with parked records here, and how many: later records of such a key park
		 * too.
		 */
		final Map<Bytes, Integer> parkedKeys = new HashMap<>();

		/**
		 * The admissions of replays whose key had records parked here: each joins its
		 * key's queue once the last of them is taken back (the container's
		 * {@code queueAdmission}).
		 */
		final Map<Bytes, List<Lock>> deferredAdmissions = new HashMap<>();

		/**
		 * Keys of parked records that operators' commands name: a pass of the re-reader
		 * is asked for.
		 */
		final Set<Bytes> commandPasses = new LinkedHashSet<>();

		/**
		 * The pending locks whose admission waits in a key queue here (main-topic
		 * partitions only).
		 */
		final Set<String> admissions = new HashSet<>();

		/**
		 * Whether the owner saw the sync barrier open: from then on it admits the pending
		 * locks of its partition, those it finds at that moment and those its table
		 * learns of later.
		 */
		boolean opened;

		/**
		 * With tenants: the tenants' shares of the partition's in-flight bound (the
		 * container's {@code TenantShares}, its own), which say whether a tenant holds as
		 * many records in memory here as it may; {@code null} without tenants.
		 */
		TestTenants.Shares shares;

		/**
		 * With tenants: no pass of the re-reader for due records starts before this time,
		 * epoch millis; a pass cut short sets it a little ahead (the re-reader's idle
		 * interval), a record parked at its tenant's cap and a tenant drained to half its
		 * cap set it back to 0 (look now), as the container's
		 * {@code ParkedRecords.lookAgainBy} does.
		 */
		long lookAt;

		Work(TP tp, Incarnation owner, long fetchPos, long barrierEnd) {
			this.tp = tp;
			this.owner = owner;
			this.fetchPos = fetchPos;
			this.barrierEnd = barrierEnd;
		}

		boolean barrierOpen() {
			return this.owner.tailerPos[this.tp.partition()] >= this.barrierEnd;
		}

		/**
		 * The contiguous boundary: below the lowest offset still pending, which includes
		 * every record whose writes are under way (SETTLING), as {@code PartitionOffsets}
		 * keeps them.
		 */
		long committable() {
			return this.pending.isEmpty() ? this.fetchPos : this.pending.first();
		}

	}

	enum Wait {

		NONE, UNTIL, KEY, TAILER,

		/**
		 * Its route returned FAILED: its handler failed and the rest of its step (what
		 * the failure means, and the start of its writes) waits for a worker, as in the
		 * container, where records of other keys run first.
		 */
		FAILED,

		/**
		 * Its route returned SETTLING: it stays at the head of its key and its offset
		 * pending until the writes under way complete.
		 */
		SETTLING,

		/**
		 * Its route returned READY (a batch listener): it stays at the head of its key
		 * and its offset pending until a batch runs it and it takes the rest of its step.
		 */
		BATCH,

		/**
		 * Its route returned READY and its method returned a result that completes later
		 * (an asynchronous listener): it stays at the head of its key and its offset
		 * pending, with no worker, until the result completes and it takes the rest of
		 * its step.
		 */
		PENDING

	}

	/**
	 * A record in flight at its owner, or the admission of a replay's pending lock: both
	 * take their turn in their key's queue.
	 */
	static final class Task {

		final Work work;

		/** The record; {@code null} for an admission. */
		final Rec rec;

		final Bytes key;

		final boolean duplicate;

		/** The pending lock this task admits, or {@code null} for a record. */
		final String admission;

		/**
		 * For an admission: the last offset taken from the partition when it was queued.
		 */
		final long lastTaken;

		Wait wait = Wait.NONE;

		long dueAt;

		long tailerTarget;

		boolean tailerSynced;

		boolean woken;

		boolean running;

		/**
		 * The rest of the step of a record whose handler failed, while it waits:
		 * {@code Wait.FAILED}.
		 */
		Supplier<Step> rest;

		/**
		 * With {@link #rest}: what the handler's failed run gave (an outage hold may drop
		 * the rest for it).
		 */
		HandlerResult failed;

		/**
		 * Whether it rides in a batch right behind an earlier record of its key (the
		 * container's riders, docs/PROTOCOL.md, rule 10): queued behind its head, yet
		 * taken by the batch.
		 */
		boolean riding;

		/** With {@code Wait.BATCH}: its run, which a batch takes. */
		ReadyRun ready;

		/**
		 * Its last route failed: once its backoff is over, the tailer catches up before
		 * it is routed again.
		 */
		boolean catchUpFirst;

		int routes;

		/**
		 * With tenants: the tenant of its record, as the container's {@code Tenants}
		 * finds it; {@code null} for an admission, or without tenants.
		 */
		String tenant;

		Task(Work work, Rec rec, boolean duplicate) {
			this.work = work;
			this.rec = rec;
			this.key = (rec.key() != null) ? Bytes.wrap(rec.key()) : null;
			this.duplicate = duplicate;
			this.admission = null;
			this.lastTaken = -1;
		}

		Task(Work work, Lock pending, long lastTaken) {
			this.work = work;
			this.rec = null;
			this.key = pending.key();
			this.duplicate = false;
			this.admission = pending.id();
			this.lastTaken = lastTaken;
		}

		@Override
		public String toString() {
			if (this.admission != null) {
				return "admission of " + this.admission + " in " + this.work.tp + " after offset " + this.lastTaken;
			}
			return this.rec + (this.duplicate ? "(dup)" : "");
		}

	}

	/** A ring buffer of the last lines of the trace. */
	static final class Trace {

		private final String[] lines;

		private long count;

		Trace(int size) {
			this.lines = new String[size];
		}

		void add(String line) {
			this.lines[(int) (this.count++ % this.lines.length)] = line;
		}

		long count() {
			return this.count;
		}

		/** Every line still held that matches. */
		String grep(Pattern pattern, int max) {
			List<String> found = new ArrayList<>();
			for (long i = Math.max(0, this.count - this.lines.length); i < this.count; i++) {
				String line = this.lines[(int) (i % this.lines.length)];
				if (pattern.matcher(line).find()) {
					found.add(line);
				}
			}
			return String.join("\n", found.subList(Math.max(0, found.size() - max), found.size()));
		}

		/** The last {@code size} lines before line {@code end} (exclusive). */
		String tail(long end, int size) {
			StringBuilder out = new StringBuilder();
			long last = Math.min(end, this.count);
			long from = Math.max(Math.max(0, this.count - this.lines.length), last - size);
			for (long i = from; i < last; i++) {
				out.append(this.lines[(int) (i % this.lines.length)]).append('\n');
			}
			return out.toString();
		}

	}

	final LadderPlan plan;

	final int partitions;

	final MovingClock clock = new MovingClock(Instant.ofEpochMilli(START));

	final boolean encodeLocks;

	final FailureClassifier classifier = new FailureClassifier(List.of());

	final Map<String, List<List<Rec>>> topics = new HashMap<>();

	final List<List<LockRec>> lockLog = new ArrayList<>();

	final Map<TP, Long> committed = new HashMap<>();

	final List<SimInstance> instances = new ArrayList<>();

	final List<Produced> produced = new ArrayList<>();

	final Map<Long, Produced> producedByOrigin = new HashMap<>();

	/**
	 * The group that owns the ladder: what the routers and the tailers check records
	 * against.
	 */
	final Ownership ownership;

	final List<Replay> replays = new ArrayList<>();

	final Map<String, Replay> replaysByLock = new HashMap<>();

	/**
	 * The stage records planted by another group (or by nobody), as
	 * topic/partition/offset.
	 */
	final Set<String> planted = new HashSet<>();

	/** Lock records planted by another group (or by nobody). */
	int plantedLocks;

	/** The operator commands of our group written so far (docs/PROTOCOL.md, rule 11). */
	final List<OperatorCommand> issuedCommands = new ArrayList<>();

	/** Command tombstones written by acting instances. */
	int commandsEnded;

	/** Records run before their due time because of a retry-now. */
	int commandedRuns;

	/** Records dead-lettered by a dead-letter-now. */
	int commandedDeadLetters;

	final ArrayDeque<RouteContext> contexts = new ArrayDeque<>();

	/** The routes whose handler is running: entered its port call, not returned yet. */
	final List<RouteContext> handling = new ArrayList<>();

	Hook hook = (incarnation, call) -> Fail.NONE;

	/**
	 * Whether the async ports send without waiting ({@link SimSends}); otherwise they
	 * fall back to the awaited writes, and every move completes inside its route.
	 */
	boolean async;

	/** The writes under way, of every incarnation. */
	final SimSends sends = new SimSends(this);

	/**
	 * Decides, when an incarnation dies, whether each of its sends not landed yet lands.
	 */
	Predicate<SimSends.Send> landsAtCrash = (send) -> true;

	HandlerPolicy policy = (record, delivery) -> HandlerResult.success();

	Trace trace;

	/** Counts handler runs and DLQ writes: the global order of observable effects. */
	long events;

	/**
	 * Grows whenever anything is written (records, lock records) or run: tells a stall
	 * from progress.
	 */
	long progress;

	int lockIds;

	/** Whether the listener is a batch listener: its routers leave runs to batches. */
	boolean batches;

	SimWorld(LadderPlan plan, int partitions, boolean encodeLocks) {
		this.plan = plan;
		this.partitions = partitions;
		this.encodeLocks = encodeLocks;
		this.ownership = OWNERSHIPS.computeIfAbsent(plan.ownTopics(), (topics) -> plan.ownership());
		for (int p = 0; p < partitions; p++) {
			this.lockLog.add(new ArrayList<>());
		}
	}

	static LadderPlan plan(List<Duration> delays, int maxAttempts) {
		return LadderPlan.of(GROUP, MAIN, delays, maxAttempts, LadderPlan.DEFAULT_RETRY_TEMPLATE,
				LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE);
	}

	void trace(Supplier<String> line) {
		if (this.trace != null) {
			this.trace.add(line.get());
		}
	}

	SimInstance addInstance(String name) {
		SimInstance instance = new SimInstance(name);
		this.instances.add(instance);
		return instance;
	}

	/**
	 * Kills the current incarnation of an instance and starts a new one with an empty
	 * table.
	 */
	Incarnation restart(SimInstance instance) {
		Incarnation old = instance.current;
		old.dead = true;
		old.works.values().forEach((work) -> work.revoked = true);
		this.sends.crash(old, this.landsAtCrash);
		instance.current = new Incarnation(instance, ++instance.incarnations);
		return instance.current;
	}

	// ---- topics

	List<Rec> log(String topic, int partition) {
		List<List<Rec>> parts = this.topics.computeIfAbsent(topic, (t) -> {
			List<List<Rec>> list = new ArrayList<>();
			for (int p = 0; p < this.partitions; p++) {
				list.add(new ArrayList<>());
			}
			return list;
		});
		return parts.get(partition);
	}

	Rec append(String topic, int partition, byte[] key, byte[] value, Headers headers) {
		List<Rec> log = log(topic, partition);
		Rec rec = new Rec(topic, partition, log.size(), this.clock.millis(), key, value, headers);
		log.add(rec);
		this.progress++;
		return rec;
	}

	long committed(TP tp) {
		return this.committed.getOrDefault(tp, 0L);
	}

	/** Produces a record to the main topic. */
	Rec produce(String keyName, int partition, boolean poison, boolean junkProtocolHeaders) {
		int index = this.produced.size();
		byte[] value = ("v" + index).getBytes(StandardCharsets.UTF_8);
		RecordHeaders headers = new RecordHeaders();
		headers.add(USER_HEADER, value);
		if (junkProtocolHeaders) {
			// anyone may write to T: protocol headers on a main record must be ignored
			headers.add(ProtocolHeaders.RETRY_COUNT, "7".getBytes(StandardCharsets.UTF_8));
			headers.add(ProtocolHeaders.LOCK_ID, "bogus-lock".getBytes(StandardCharsets.UTF_8));
			headers.add(ProtocolHeaders.ORIGINAL_OFFSET, "424242".getBytes(StandardCharsets.UTF_8));
			headers.add(ProtocolHeaders.ORIGINAL_TOPIC, "elsewhere".getBytes(StandardCharsets.UTF_8));
			headers.add(ProtocolHeaders.DLQ_REASON, "bogus".getBytes(StandardCharsets.UTF_8));
		}
		byte[] key = (keyName != null) ? keyName.getBytes(StandardCharsets.UTF_8) : null;
		Rec rec = append(MAIN, partition, key, value, headers);
		Produced p = new Produced(index, partition, rec.offset(), keyName, value, poison);
		this.produced.add(p);
		this.producedByOrigin.put(originKey(partition, rec.offset()), p);
		if (p.key != null) {
			// it comes after every replay of its key admitted so far: each was admitted
			// behind the
			// last record its owner had taken, and whoever takes this one takes it later
			// (docs/PROTOCOL.md, rule 2.0)
			for (Replay replay : this.replays) {
				if (replay.admittedAt >= 0 && !replay.finished() && p.key.equals(replay.key())) {
					p.predecessors.add(replay);
				}
			}
		}
		return rec;
	}

	/**
	 * Replays {@code letter}, a dead letter of this group or a record standing in for
	 * one, into stage 1 of its partition, with the headers the replayer writes.
	 * @param letter the dead letter, or a record of the main topic that succeeded
	 * @return the new life
	 */
	Replay replay(Rec letter) {
		Headers source;
		Produced origin;
		if (MAIN.equals(letter.topic())) {
			// a record that succeeded, with the headers its dead letter would have: its
			// own
			// (minus junk protocol headers anyone may write to the main topic) and its
			// birthplace
			origin = this.producedByOrigin.get(originKey(letter.partition(), letter.offset()));
			RecordHeaders headers = new RecordHeaders();
			headers.add(USER_HEADER, origin.value);
			headers.add(ProtocolHeaders.ORIGINAL_TOPIC, MAIN.getBytes(StandardCharsets.UTF_8));
			headers.add(ProtocolHeaders.ORIGINAL_PARTITION,
					Integer.toString(origin.partition).getBytes(StandardCharsets.UTF_8));
			headers.add(ProtocolHeaders.ORIGINAL_OFFSET, Long.toString(origin.offset).getBytes(StandardCharsets.UTF_8));
			source = headers;
		}
		else {
			origin = originOf(letter.delivery());
			source = letter.headers();
		}
		Headers headers = ProtocolHeaders.forReplay(source, this.plan.dlqTopic(), letter.partition(), letter.offset(),
				this.clock.instant(), this.ownership);
		int index = this.replays.size();
		headers.remove(REPLAY_HEADER);
		headers.add(REPLAY_HEADER, Integer.toString(index).getBytes(StandardCharsets.UTF_8));
		Rec entry = append(this.plan.stage(1).topic(), letter.partition(), letter.key(), letter.value(), headers);
		Replay replay = new Replay(index, origin, entry, (letter.key() != null) ? replayLockId(entry) : null);
		this.replays.add(replay);
		if (replay.lockId != null) {
			this.replaysByLock.put(replay.lockId, replay);
		}
		return replay;
	}

	/**
	 * The lock id the router gives a replay entry: the same derivation as
	 * {@code StageRouter.replayLockId}, so that the world knows which replay a lock
	 * belongs to.
	 */
	static String replayLockId(Rec entry) {
		return UUID
			.nameUUIDFromBytes(
					(entry.topic() + "/" + entry.partition() + "/" + entry.offset()).getBytes(StandardCharsets.UTF_8))
			.toString();
	}

	/** Appends a record of another group (or of none) to a stage topic. */
	Rec plantStage(String topic, int partition, byte[] key, byte[] value, Headers headers) {
		Rec rec = append(topic, partition, key, value, headers);
		this.planted.add(rec.toString());
		return rec;
	}

	/**
	 * Appends a lock record of another group, or of none when {@code group} is
	 * {@code null}, with the headers the library writes.
	 */
	LockRec plantLock(int partition, String id, Bytes key, Lock lock, String group) {
		List<LockRec> log = this.lockLog.get(partition);
		Headers headers = LockCodec.headers(key, "intruder",
				(group != null) ? new Ownership(group, true, List.of()) : this.ownership);
		if (group == null) {
			headers.remove(Ownership.HEADER);
		}
		byte[] value = (lock != null) ? LockCodec.encode(lock) : null;
		LockRec rec = new LockRec(partition, log.size(), id, key, lock, value, headers, "intruder", true);
		log.add(rec);
		this.plantedLocks++;
		this.progress++;
		return rec;
	}

	private static long originKey(int partition, long offset) {
		return ((long) partition << 40) | offset;
	}

	// ---- the lock log

	LockRec appendLock(int partition, String id, Bytes key, Lock lock, String writer) {
		List<LockRec> log = this.lockLog.get(partition);
		byte[] value = null;
		Headers headers = null;
		if (this.encodeLocks) {
			headers = LockCodec.headers(key, writer, this.ownership);
			value = (lock != null) ? LockCodec.encode(lock) : null;
		}
		LockRec rec = new LockRec(partition, log.size(), id, key, lock, value, headers, writer, false);
		log.add(rec);
		this.progress++;
		return rec;
	}

	/**
	 * Appends an operator command's record, or its tombstone when {@code value} is
	 * {@code null}, with the headers the registry writes; of another group when
	 * {@code group} is set.
	 */
	LockRec appendCommand(int partition, OperatorCommand command, OperatorCommand value, String writer, String group) {
		List<LockRec> log = this.lockLog.get(partition);
		Headers headers = LockCodec.headers(command.key(), writer,
				(group != null) ? new Ownership(group, true, List.of()) : this.ownership);
		LockRec rec = new LockRec(partition, log.size(), command.recordKey(), command.key(), null,
				(value != null) ? CommandCodec.encode(value) : null, headers, writer, group != null);
		log.add(rec);
		if (value != null && group == null) {
			this.issuedCommands.add(value);
		}
		this.progress++;
		return rec;
	}

	/**
	 * Whether a command of ours asked for {@code action} on {@code lockId} at
	 * {@code position}.
	 */
	boolean commandIssued(OperatorCommand.Action action, String lockId, Position position) {
		for (OperatorCommand command : this.issuedCommands) {
			if (command.action() == action && command.lockId().equals(lockId) && command.position().equals(position)) {
				return true;
			}
		}
		return false;
	}

	long lockEnd(int partition) {
		return this.lockLog.get(partition).size();
	}

	/** The lock a lock record holds, read the way the tailer reads it. */
	Lock read(LockRec rec) {
		if (!this.encodeLocks || rec.value() == null) {
			return rec.lock();
		}
		Lock decoded = LockCodec.decode(LockCodec.decodeId(LockCodec.encodeId(rec.id())), rec.headers(), rec.value());
		if (!decoded.equals(rec.lock())) {
			throw new SimViolation("LockCodec round trip changed " + rec.lock() + " into " + decoded);
		}
		return decoded;
	}

	/**
	 * Whether the tailer applies a lock record: the check of {@code LockTailer}, on the
	 * record's real headers.
	 */
	boolean owns(LockRec rec) {
		return rec.headers() == null
				|| this.ownership.owns(this.plan.lockTopic(), rec.partition(), rec.offset(), rec.headers());
	}

	/**
	 * Lets the incarnation's tailer read up to {@code max} unread lock records of a
	 * partition, applying those of this group as {@code LockTailer} does.
	 */
	int tailerStep(Incarnation incarnation, int partition, int max) {
		List<LockRec> log = this.lockLog.get(partition);
		int read = 0;
		while (read < max && incarnation.tailerPos[partition] < log.size()) {
			LockRec rec = log.get((int) incarnation.tailerPos[partition]++);
			if (rec.isCommand()) {
				if (owns(rec)) {
					if (rec.planted()) {
						throw new SimViolation("(6) the tailer of " + incarnation + " took command record " + partition
								+ "/" + rec.offset() + " of group " + Ownership.ownerOf(rec.headers()));
					}
					incarnation.table.applyCommand(partition, rec.offset(), commandId(rec), readCommand(rec));
				}
				read++;
				continue;
			}
			if (owns(rec)) {
				if (rec.planted()) {
					throw new SimViolation("(6) the tailer of " + incarnation + " took lock record " + partition + "/"
							+ rec.offset() + " of group " + Ownership.ownerOf(rec.headers()) + " for one of " + GROUP);
				}
				incarnation.table.apply(partition, rec.offset(), rec.id(), read(rec));
			}
			else if (!rec.planted()) {
				throw new SimViolation("(6) the tailer of " + incarnation + " skipped our own lock record " + partition
						+ "/" + rec.offset() + " as another group's");
			}
			else {
				checkForeignSkipped(incarnation, rec);
			}
			read++;
		}
		incarnation.table.tailerReached(partition, incarnation.tailerPos[partition]);
		return read;
	}

	/**
	 * A foreign lock record changes nothing: right after the tailer passed it, the table
	 * holds for its lock id what our own records say, when the tailer has read all of
	 * them (a forged tombstone does not release our lock, a forged version does not move
	 * or create one).
	 */
	private void checkForeignSkipped(Incarnation incarnation, LockRec foreign) {
		Lock held = incarnation.table.find(foreign.id());
		if (held != null && FORGED.equals(held.updated())) {
			throw new SimViolation("(6) the table of " + incarnation + " holds " + held + ", forged by another group");
		}
		LockRec own = null;
		List<LockRec> log = this.lockLog.get(foreign.partition());
		for (int i = log.size() - 1; i >= 0 && own == null; i--) {
			LockRec rec = log.get(i);
			if (!rec.planted() && rec.id().equals(foreign.id())) {
				own = rec;
			}
		}
		if (own != null && own.offset() > foreign.offset()) {
			return; // the table may know a later version of ours already, or not yet
		}
		Lock expected = (own != null && own.lock() != null) ? read(own) : null;
		if (!Objects.equals(held, expected)) {
			throw new SimViolation("(6) after passing " + ((foreign.lock() == null) ? "a tombstone" : "a lock record")
					+ " of group " + Ownership.ownerOf(foreign.headers()) + " for lock " + foreign.id() + " at locks/"
					+ foreign.partition() + "/" + foreign.offset() + ", the table of " + incarnation + " holds " + held
					+ " but our lock records say " + expected);
		}
	}

	private static String commandId(LockRec rec) {
		return rec.id().substring(OperatorCommand.KEY_PREFIX.length());
	}

	/**
	 * The command a command record holds, decoded as the tailer decodes it; {@code null}
	 * for its tombstone.
	 */
	private static OperatorCommand readCommand(LockRec rec) {
		return (rec.value() != null) ? CommandCodec.decode(rec.id(), rec.partition(), rec.headers(), rec.value())
				: null;
	}

	void catchUp(Incarnation incarnation) {
		for (int p = 0; p < this.partitions; p++) {
			tailerStep(incarnation, p, Integer.MAX_VALUE);
		}
	}

	/**
	 * A fresh table with the whole lock log replayed, as a brand-new instance would build
	 * it.
	 */
	TestLockTable replayLockLog() {
		TestLockTable table = new TestLockTable();
		for (int p = 0; p < this.partitions; p++) {
			for (LockRec rec : this.lockLog.get(p)) {
				if (owns(rec) && rec.isCommand()) {
					table.applyCommand(p, rec.offset(), commandId(rec), readCommand(rec));
				}
				else if (owns(rec)) {
					table.apply(p, rec.offset(), rec.id(), read(rec));
				}
			}
			table.tailerReached(p, lockEnd(p));
		}
		return table;
	}

	// ---- routing

	Step route(Incarnation incarnation, Delivery delivery, boolean tailerSynced) {
		return route(incarnation, delivery, tailerSynced, false);
	}

	/**
	 * One route() call; with {@code deferFailures} a failed run of the handler returns
	 * FAILED, whose rest runs later in the same route context (the handler's result is
	 * what the hooks check a dead letter against).
	 */
	Step route(Incarnation incarnation, Delivery delivery, boolean tailerSynced, boolean deferFailures) {
		boolean foreign = this.planted.contains(delivery.toString());
		Produced origin = foreign ? null : originOf(delivery);
		RouteContext context = new RouteContext(incarnation, delivery, origin,
				foreign ? null : lifeOf(delivery, origin), foreign, null);
		this.contexts.push(context);
		Step step;
		try {
			step = incarnation.router.route(delivery, tailerSynced, deferFailures);
		}
		finally {
			this.contexts.pop();
		}
		if (step.kind() == Step.Kind.FAILED) {
			return restInContext(step, context);
		}
		if (foreign && step.kind() != Step.Kind.DONE) {
			throw new SimViolation(
					"(6) " + delivery + ", a record of another group (or of none), was not skipped: " + step.kind());
		}
		return step;
	}

	/**
	 * Runs the handler on one record of a batch, as the batch listener's method runs on
	 * it: a port call like any run of the handler, in the record's route context, so that
	 * every check of a run applies (its due time, no earlier record of its key in the
	 * ladder).
	 */
	HandlerResult runInBatch(Incarnation incarnation, Delivery delivery) {
		this.contexts.push(routeContext(incarnation, delivery));
		try {
			return incarnation.handle(delivery);
		}
		finally {
			this.contexts.pop();
		}
	}

	/**
	 * Whether a record queued behind a ready head of its key may ride in the head's
	 * batch: the router's reads of the lock view are port calls, in the record's route
	 * context.
	 */
	ReadyRun readyBehind(Incarnation incarnation, ReadyRun head, Delivery delivery) {
		this.contexts.push(routeContext(incarnation, delivery));
		try {
			return incarnation.router.readyBehind(head, delivery);
		}
		finally {
			this.contexts.pop();
		}
	}

	/**
	 * Takes the rest of a record's step after its batch ran it, in the record's route
	 * context.
	 */
	Step afterBatch(Incarnation incarnation, Delivery delivery, HandlerResult result, Supplier<Step> rest) {
		RouteContext context = routeContext(incarnation, delivery);
		context.lastResult = result; // what its last run gave, which its step goes on
										// with
		this.contexts.push(context);
		Step step;
		try {
			step = rest.get();
		}
		finally {
			this.contexts.pop();
		}
		return (step.kind() == Step.Kind.FAILED) ? restInContext(step, context) : step;
	}

	/** A failed run's step whose rest runs later in the same route context. */
	private Step restInContext(Step step, RouteContext context) {
		Supplier<Step> rest = step.rest();
		return Step.failed(step.failure(), () -> {
			this.contexts.push(context);
			try {
				return rest.get();
			}
			finally {
				this.contexts.pop();
			}
		});
	}

	private RouteContext routeContext(Incarnation incarnation, Delivery delivery) {
		Produced origin = originOf(delivery);
		return new RouteContext(incarnation, delivery, origin, lifeOf(delivery, origin), false, null);
	}

	/**
	 * Admits a replay's pending lock as the owner of its main-topic partition does, in
	 * its key's turn: with the real {@link StageRouter#admitReplay} on the incarnation's
	 * lock store, every call of which goes through the hook.
	 * @return whether the lock was admitted now
	 */
	boolean admit(Incarnation incarnation, String lockId, long lastTaken) {
		this.contexts.push(new RouteContext(incarnation, null, null, null, false, lockId));
		try {
			return StageRouter.admitReplay(incarnation.store, lockId, lastTaken, this.clock.instant());
		}
		finally {
			this.contexts.pop();
		}
	}

	/** The life a record of a stage or the main topic belongs to. */
	Life lifeOf(Delivery delivery, Produced origin) {
		String replay = ProtocolHeaders.text(delivery.headers(), REPLAY_HEADER);
		if (replay == null) {
			return origin;
		}
		if (MAIN.equals(delivery.topic())) {
			throw new SimViolation(delivery + " of the main topic names a replay; replays never go there");
		}
		return this.replays.get(Integer.parseInt(replay));
	}

	Produced originOf(Delivery delivery) {
		if (MAIN.equals(delivery.topic())) {
			return this.producedByOrigin.get(originKey(delivery.partition(), delivery.offset()));
		}
		String partition = ProtocolHeaders.text(delivery.headers(), ProtocolHeaders.ORIGINAL_PARTITION);
		String offset = ProtocolHeaders.text(delivery.headers(), ProtocolHeaders.ORIGINAL_OFFSET);
		if (partition == null || offset == null) {
			throw new SimViolation(delivery + " has no original.partition/original.offset");
		}
		Produced origin = this.producedByOrigin.get(originKey(Integer.parseInt(partition), Long.parseLong(offset)));
		if (origin == null) {
			throw new SimViolation(
					delivery + " names an origin " + partition + "/" + offset + " that was never produced");
		}
		return origin;
	}

	private HandlerResult runHandler(Incarnation incarnation, Delivery delivery) {
		RouteContext context = this.contexts.peek();
		if (context == null || context.delivery != delivery) {
			throw new SimViolation("handler called outside of the route of " + delivery);
		}
		if (context.foreign) {
			throw new SimViolation("(6) handler ran " + delivery + ", a record of another group (or of none)");
		}
		Produced origin = context.origin;
		Life life = context.life;
		if (!Arrays.equals(origin.value, delivery.value())) {
			throw new SimViolation("handler got " + delivery + " whose value is not the value of its origin " + origin);
		}
		int stage = this.plan.stageOf(delivery.topic());
		Integer retryCount = (stage == 0) ? Integer.valueOf(0) : ProtocolHeaders.retryCount(delivery.headers());
		if (stage > 0 && retryCount != null && retryCount > 0) {
			long due = delivery.timestamp() + this.plan.stage(stage).delay().toMillis();
			String lockId = ProtocolHeaders.text(delivery.headers(), ProtocolHeaders.LOCK_ID);
			// (12) only an operator's retry-now on the lock at this very record runs it
			// early
			boolean commanded = lockId != null
					&& commandIssued(OperatorCommand.Action.RETRY_NOW, lockId, new Position(stage, delivery.offset()));
			if (this.clock.millis() < due && commanded) {
				this.commandedRuns++;
			}
			else if (this.clock.millis() < due) {
				throw new SimViolation("(5) " + delivery + " with retry.count=" + retryCount + " ran at "
						+ rel(this.clock.millis()) + " before its due time " + rel(due));
			}
		}
		if (origin.key != null && life == origin) {
			// (2c) a record's handler never runs while an earlier record of its key is
			// still in the ladder
			for (int i = origin.index - 1; i >= 0; i--) {
				Produced earlier = this.produced.get(i);
				if (origin.key.equals(earlier.key) && !earlier.finished()) {
					throw new SimViolation("(2c) handler ran " + origin + " from " + delivery + " at " + incarnation
							+ " while the earlier record " + earlier
							+ " of the same key had neither succeeded nor been dead-lettered");
				}
			}
		}
		if (life instanceof Replay replay && replay.lockId != null && replay.admittedAt < 0) {
			throw new SimViolation("(7) handler ran " + replay + " from " + delivery + " at " + incarnation
					+ " before its lock was ever admitted");
		}
		for (Life earlier : life.predecessors) {
			// (7) nor while a record placed before it by a replay's admission is
			if (!earlier.finished()) {
				throw new SimViolation(
						"(7) handler ran " + life + " from " + delivery + " at " + incarnation + " while " + earlier
								+ ", which a replay's admission placed before it in the key's order, had neither "
								+ "succeeded nor been dead-lettered");
			}
		}
		for (RouteContext other : this.handling) {
			// (2d) two records of one key never run at once (a redelivery of a finished
			// one may);
			// a handler whose process died before it ran never runs
			if (other != context && !other.incarnation.dead && origin.key != null && origin.key.equals(other.life.key())
					&& !other.life.finished() && !life.finished()) {
				throw new SimViolation("(2d) handler ran " + life + " from " + delivery + " at " + incarnation
						+ " while the handler of " + other.life + " of the same key was running (from " + other.delivery
						+ " at " + other.incarnation + ")");
			}
		}
		HandlerResult result = this.policy.decide(origin, delivery);
		long event = ++this.events;
		this.progress++;
		life.runs++;
		if (result.outcome() == HandlerResult.Outcome.SUCCESS && life.firstSuccess < 0) {
			life.firstSuccess = event;
		}
		context.lastResult = result;
		trace(() -> "    " + incarnation + " handler " + delivery + " " + life + " retry.count=" + retryCount + " -> "
				+ describe(result));
		return result;
	}

	static String describe(HandlerResult result) {
		if (result.outcome() == HandlerResult.Outcome.FAILURE) {
			return "FAILURE(" + result.failure().getClass().getSimpleName() + ")";
		}
		return result.outcome().name();
	}

	static String rel(long millis) {
		return "+" + (millis - START) + "ms";
	}

	static String describeHeaders(Headers headers) {
		return " [retry.count=" + ProtocolHeaders.text(headers, ProtocolHeaders.RETRY_COUNT) + " lock.id="
				+ ProtocolHeaders.text(headers, ProtocolHeaders.LOCK_ID) + " prev="
				+ ProtocolHeaders.text(headers, ProtocolHeaders.PREVIOUS_TOPIC) + " orig="
				+ ProtocolHeaders.text(headers, ProtocolHeaders.ORIGINAL_OFFSET)
				+ ((ProtocolHeaders.text(headers, ProtocolHeaders.DLQ_REASON) != null)
						? " dlq.reason=" + ProtocolHeaders.text(headers, ProtocolHeaders.DLQ_REASON) : "")
				+ "]";
	}

	// ---- checks made when something happens

	/** A lock confirmed at (stage, at) must name a record that exists and carries it. */
	private void checkLockWrite(Lock lock) {
		if (lock.at() == null) {
			return;
		}
		String topic = this.plan.stage(lock.stage()).topic();
		List<Rec> log = log(topic, lock.originPartition());
		if (lock.at() >= log.size()) {
			throw new SimViolation(
					"lock " + lock + " confirmed at " + topic + "/" + lock.at() + " which does not exist");
		}
		Rec rec = log.get(lock.at().intValue());
		String carried = ProtocolHeaders.text(rec.headers(), ProtocolHeaders.LOCK_ID);
		String origin = ProtocolHeaders.text(rec.headers(), ProtocolHeaders.ORIGINAL_OFFSET);
		Integer count = ProtocolHeaders.retryCount(rec.headers());
		long born = lock.originOffset();
		if (lock.entry() != null) {
			// a replay's lock: its origin is its place in the key's order, not where it
			// was born;
			// at its entry it is carried by the replay entry, which has no lock.id yet
			Replay replay = this.replaysByLock.get(lock.id());
			if (replay == null || replay.entry.partition() != lock.originPartition()
					|| replay.entry.offset() != lock.entry()) {
				throw new SimViolation("(7) replay lock " + lock + " names no replay entry of ours (" + replay + ")");
			}
			born = replay.origin.offset;
			if (lock.stage() == 1 && lock.at().equals(lock.entry()) && ProtocolHeaders.isReplayEntry(rec.headers())) {
				carried = replayLockId(rec);
			}
		}
		if (!lock.id().equals(carried) || !Long.toString(born).equals(origin)
				|| !Objects.equals(count, lock.retryCount())) {
			throw new SimViolation("lock " + lock + " confirmed at " + rec + " which carries lock.id=" + carried
					+ " original.offset=" + origin + " retry.count=" + count);
		}
	}

	/**
	 * A replay's lock is written pending by the route of its entry, admitted once by the
	 * owner of its main-topic partition (and only while it is pending), and then only
	 * moved on. The first admission places the replay in its key's order: behind every
	 * record of its key with a live lock sorting before it, before those sorting after it
	 * (replays of the same origin and a later entry), before every record of its key not
	 * in the ladder yet.
	 */
	private void checkReplayLockWrite(LockRec rec, Lock lock) {
		RouteContext context = this.contexts.peek();
		Replay replay = this.replaysByLock.get(lock.id());
		Lock previous = null;
		List<LockRec> log = this.lockLog.get(rec.partition());
		for (int i = (int) rec.offset() - 1; i >= 0; i--) {
			LockRec earlier = log.get(i);
			if (!earlier.planted() && earlier.id().equals(lock.id())) {
				previous = earlier.lock();
				break;
			}
		}
		boolean admission = context != null && lock.id().equals(context.admission);
		if (lock.isPending()) {
			if (context == null || context.delivery == null
					|| !ProtocolHeaders.isReplayEntry(context.delivery.headers())
					|| !lock.id().equals(replayLockId(recordOf(context.delivery)))) {
				throw new SimViolation("(7) pending lock " + lock + " written while routing " + context.delivery
						+ ", which is not its replay entry");
			}
			if (previous != null && !previous.isPending()) {
				throw new SimViolation("(7) " + context.incarnation + " wrote " + lock + " pending again over "
						+ previous + ", which is still live");
			}
			return;
		}
		if (!admission) {
			if (previous == null || previous.isPending()) {
				throw new SimViolation("(7) " + lock + " written while " + ((previous == null) ? "released" : "pending")
						+ ", not by its admission" + ((context != null && context.delivery != null)
								? " but by the route of " + context.delivery : ""));
			}
			return;
		}
		if (previous == null || !previous.isPending()) {
			throw new SimViolation("(7) the admission at " + context.incarnation + " wrote " + lock + " over "
					+ ((previous == null) ? "a released lock: it is live again" : previous + ", admitted already"));
		}
		replay.admissions++;
		long event = ++this.events;
		trace(() -> "    admitted " + replay + " as " + lock + " (event " + event + ")");
		if (replay.admittedAt >= 0) {
			return; // a redelivered entry entered again: a redelivery, as the first
					// life's order stands
		}
		replay.admittedAt = event;
		// the key's order at this moment: every live lock of ours (what a caught-up table
		// holds)
		for (Lock other : liveLocks(rec.partition(), rec.offset())) {
			if (!other.key().equals(lock.key()) || other.id().equals(lock.id()) || other.isPending()) {
				continue;
			}
			if (other.originOffset() > lock.originOffset()) {
				throw new SimViolation("(7) " + lock + " admitted before " + other + ", a live lock of its key with a "
						+ "later origin");
			}
			Life owner = (other.entry() != null) ? this.replaysByLock.get(other.id())
					: this.producedByOrigin.get(originKey(other.originPartition(), other.originOffset()));
			if (owner == null) {
				throw new SimViolation("(7) live lock " + other + " belongs to no record");
			}
			if (Lock.BY_ORIGIN.compare(other, lock) < 0) {
				replay.predecessors.add(owner);
				replay.behind++;
			}
			else {
				owner.predecessors.add(replay);
			}
		}
		// the records of its key not in the ladder: those taken so far are behind it
		// (they went
		// into the ladder before the admission's turn, or will be taken again after it),
		// the others come after
		for (Produced p : this.produced) {
			if (lock.key().equals(p.key) && !p.finished() && p.partition == lock.originPartition()) {
				if (p.offset <= lock.originOffset()) {
					replay.predecessors.add(p);
				}
				else {
					p.predecessors.add(replay);
				}
			}
		}
	}

	/**
	 * The live locks of ours that lock partition {@code partition} holds below
	 * {@code end}, in the order they were first written: the ground truth, read without
	 * decoding.
	 */
	List<Lock> liveLocks(int partition, long end) {
		Map<String, Lock> live = new LinkedHashMap<>();
		List<LockRec> log = this.lockLog.get(partition);
		for (int i = 0; i < end; i++) {
			LockRec rec = log.get(i);
			if (!rec.planted()) {
				if (rec.lock() != null) {
					live.put(rec.id(), rec.lock());
				}
				else {
					live.remove(rec.id());
				}
			}
		}
		return new ArrayList<>(live.values());
	}

	private Rec recordOf(Delivery delivery) {
		return log(delivery.topic(), delivery.partition()).get((int) delivery.offset());
	}

	/**
	 * Checks the headers (docs/PROTOCOL.md, "Headers") of a record just written to a
	 * stage topic or the DLQ.
	 */
	private void checkPublish(Rec rec) {
		RouteContext context = this.contexts.peek();
		if (context == null || context.delivery == null) {
			throw new SimViolation("publish to " + rec + " outside of any route");
		}
		if (context.foreign) {
			throw new SimViolation("(6) " + context.delivery + ", a record of another group (or of none), was "
					+ "published as " + rec);
		}
		Delivery source = context.delivery;
		Produced origin = context.origin;
		boolean dlq = this.plan.dlqTopic().equals(rec.topic());
		int targetStage = this.plan.stageOf(rec.topic());
		if (!dlq && targetStage <= 0) {
			throw new SimViolation("publish to " + rec + " which is neither a stage topic nor the DLQ");
		}
		Headers h = rec.headers();
		List<String> wrong = new ArrayList<>();
		expect(wrong, h, ProtocolHeaders.PREVIOUS_TOPIC, source.topic());
		expect(wrong, h, ProtocolHeaders.ORIGINAL_TOPIC, MAIN);
		expect(wrong, h, ProtocolHeaders.ORIGINAL_PARTITION, Integer.toString(origin.partition));
		expect(wrong, h, ProtocolHeaders.ORIGINAL_OFFSET, Long.toString(origin.offset));
		expect(wrong, h, USER_HEADER, new String(origin.value, StandardCharsets.UTF_8));
		expect(wrong, h, Ownership.HEADER, GROUP);
		for (String travels : List.of(REPLAY_HEADER, ProtocolHeaders.REPLAY_FROM_DLQ)) {
			if (!Objects.equals(ProtocolHeaders.text(source.headers(), travels), ProtocolHeaders.text(h, travels))) {
				wrong.add(travels + " changed from " + ProtocolHeaders.text(source.headers(), travels));
			}
		}
		if (!Arrays.equals(rec.value(), origin.value) || !Arrays.equals(rec.key(), source.key())) {
			wrong.add("key/value changed");
		}
		if (rec.partition() != source.partition()) {
			wrong.add("partition " + rec.partition() + " is not the source's " + source.partition());
		}
		Integer count = ProtocolHeaders.retryCount(h);
		if (count == null) {
			wrong.add("retry.count missing");
		}
		boolean fromMain = MAIN.equals(source.topic());
		String sourceLock = fromMain ? null : ProtocolHeaders.text(source.headers(), ProtocolHeaders.LOCK_ID);
		if (sourceLock == null && source.key() != null && this.plan.stageOf(source.topic()) == 1
				&& ProtocolHeaders.isReplayEntry(source.headers())) {
			sourceLock = replayLockId(recordOf(source)); // a replay entry carries the
															// lock named after it
		}
		String lockId = ProtocolHeaders.text(h, ProtocolHeaders.LOCK_ID);
		if (dlq) {
			checkDlq(context, rec, wrong, count, fromMain, sourceLock, lockId);
		}
		else {
			if (h.lastHeader(ProtocolHeaders.DLQ_REASON) != null) {
				wrong.add("dlq.reason on a stage record");
			}
			if ((origin.key != null) != (lockId != null)) {
				wrong.add("lock.id " + lockId + " on a record with key " + origin.keyName);
			}
			if (!fromMain && sourceLock != null && !sourceLock.equals(lockId)) {
				wrong.add("lock.id changed from " + sourceLock + " to " + lockId);
			}
			if (count != null && count >= this.plan.maxAttempts()) {
				wrong.add("retry.count " + count + " in a stage with max-attempts " + this.plan.maxAttempts());
			}
		}
		if (!wrong.isEmpty()) {
			throw new SimViolation("(4) " + rec + " published while routing " + source + " has wrong headers: " + wrong
					+ describeHeaders(h));
		}
	}

	/**
	 * (12) A dead letter with {@code dlq.reason=operator}: a dead-letter-now of ours
	 * named the lock the record carried, at the record's position; the handler did not
	 * run in this route, and no attempt was counted.
	 */
	private void checkOperatorDlq(RouteContext context, Rec rec, List<String> wrong, Integer count, boolean fromMain,
			String sourceLock, String lockId) {
		int stage = this.plan.stageOf(context.delivery.topic());
		if (fromMain || lockId == null || !commandIssued(OperatorCommand.Action.DEAD_LETTER_NOW, lockId,
				new Position(stage, context.delivery.offset()))) {
			throw new SimViolation("(12) " + rec + " dead-lettered as operator while routing " + context.delivery
					+ " with lock " + lockId + ", which no dead-letter-now of ours named at that record");
		}
		if (context.lastResult != null) {
			wrong.add("the handler ran before an operator's dead letter");
		}
		Integer incoming = ProtocolHeaders.retryCount(context.delivery.headers());
		if (count == null || !count.equals(incoming)) {
			wrong.add("retry.count " + count + " but the record had " + incoming
					+ " (an operator's dead letter is no attempt)");
		}
		if (!Objects.equals(lockId, sourceLock)) {
			wrong.add("lock.id " + lockId + " but the record carried " + sourceLock);
		}
		this.commandedDeadLetters++;
		if (context.life.firstDlq < 0) {
			context.life.firstDlq = ++this.events;
		}
	}

	private void checkDlq(RouteContext context, Rec rec, List<String> wrong, Integer count, boolean fromMain,
			String sourceLock, String lockId) {
		Headers h = rec.headers();
		Produced origin = context.origin;
		HandlerResult last = context.lastResult;
		if ("operator".equals(ProtocolHeaders.text(h, ProtocolHeaders.DLQ_REASON))) {
			checkOperatorDlq(context, rec, wrong, count, fromMain, sourceLock, lockId);
			return;
		}
		if (last == null || last.outcome() == HandlerResult.Outcome.SUCCESS) {
			throw new SimViolation("(4) " + rec + " dead-lettered while routing " + context.delivery
					+ " although the handler " + ((last == null) ? "did not run" : "succeeded") + " in this route");
		}
		int incoming = fromMain ? 0 : ProtocolHeaders.retryCount(context.delivery.headers());
		String reason;
		String errorClass;
		int expectedCount;
		if (last.outcome() == HandlerResult.Outcome.POISON) {
			reason = "poison";
			errorClass = ProtocolHeaders.PERMANENT;
			expectedCount = incoming;
		}
		else if (this.classifier.isPermanent(last.failure())) {
			reason = "permanent";
			errorClass = ProtocolHeaders.PERMANENT;
			expectedCount = incoming + 1;
		}
		else {
			reason = "exhausted";
			errorClass = ProtocolHeaders.TRANSIENT;
			expectedCount = incoming + 1;
			if (expectedCount != this.plan.maxAttempts()) {
				wrong.add("exhausted after " + expectedCount + " attempts but max-attempts is "
						+ this.plan.maxAttempts());
			}
		}
		expect(wrong, h, ProtocolHeaders.DLQ_REASON, reason);
		expect(wrong, h, ProtocolHeaders.ERROR_CLASS, errorClass);
		expect(wrong, h, ProtocolHeaders.ERROR_EXCEPTION, last.failure().getClass().getName());
		if (h.lastHeader(ProtocolHeaders.ERROR_MESSAGE) == null
				|| h.lastHeader(ProtocolHeaders.ERROR_TIMESTAMP) == null) {
			wrong.add("error.message or error.timestamp missing");
		}
		if (count != null && count != expectedCount) {
			wrong.add("retry.count " + count + " but expected " + expectedCount);
		}
		if (origin.key != null && !fromMain) {
			if (lockId == null || !lockId.equals(sourceLock)) {
				wrong.add("lock.id " + lockId + " but the record carried " + sourceLock);
			}
		}
		else if (lockId != null) {
			wrong.add("lock.id " + lockId + " on a record that never carried a lock");
		}
		if (context.life.firstDlq < 0) {
			context.life.firstDlq = ++this.events;
		}
	}

	private static void expect(List<String> wrong, Headers headers, String name, String expected) {
		String actual = ProtocolHeaders.text(headers, name);
		if (!expected.equals(actual)) {
			wrong.add(name + "=" + actual + " (expected " + expected + ")");
		}
	}

	// ---- checks made at the end

	/** Checks (1), (2), (2b), (3), (7) and the DLQ's content; returns what is broken. */
	List<String> finalViolations() {
		List<String> violations = new ArrayList<>();
		for (Produced p : this.produced) {
			if (!p.finished()) {
				violations.add("(1) lost: " + p + " neither succeeded nor reached the DLQ (runs=" + p.runs + ")");
			}
		}
		for (Replay replay : this.replays) {
			if (!replay.finished()) {
				violations.add("(1) lost: " + replay + " neither succeeded nor reached the DLQ (runs=" + replay.runs
						+ ", admissions=" + replay.admissions + ")");
			}
		}
		List<Life> lives = new ArrayList<>(this.produced);
		lives.addAll(this.replays);
		for (Life life : lives) {
			for (Life earlier : life.predecessors) {
				// (7) a replay's admission placed them in this order: they leave the
				// ladder in it
				if (life.finished() && earlier.finished() && life.finishedAt() < earlier.finishedAt()) {
					violations
						.add("(7) " + life + " left the ladder (event " + life.finishedAt() + ") before " + earlier
								+ " (event " + earlier.finishedAt() + "), which a replay's admission placed before it");
				}
			}
		}
		Map<String, List<Produced>> byKey = new LinkedHashMap<>();
		for (Produced p : this.produced) {
			if (p.keyName != null) {
				byKey.computeIfAbsent(p.keyName, (k) -> new ArrayList<>()).add(p);
			}
		}
		byKey.forEach((key, records) -> {
			Produced previous = null;
			for (Produced p : records) {
				if (p.firstDlq >= 0 || p.firstSuccess < 0) {
					continue;
				}
				if (previous != null && p.firstSuccess < previous.firstSuccess) {
					violations.add("(2) inversion for key " + key + ": " + p + " first succeeded (event "
							+ p.firstSuccess + ") before " + previous + " (event " + previous.firstSuccess + ")");
				}
				previous = p;
			}
			previous = null;
			for (Produced p : records) {
				if (!p.finished()) {
					continue;
				}
				if (previous != null && p.finishedAt() < previous.finishedAt()) {
					violations.add("(2b) key " + key + ": " + p + " left the ladder (event " + p.finishedAt()
							+ ") before " + previous + " (event " + previous.finishedAt() + ")");
				}
				previous = p;
			}
		});
		TestLockTable replayed = replayLockLog();
		if (replayed.size() != 0) {
			boolean pending = replayed.snapshot().stream().anyMatch(Lock::isPending);
			violations.add("(3) live locks left in the lock log" + (pending ? " (pending admission among them)" : "")
					+ ": " + replayed.snapshot());
		}
		for (SimInstance instance : this.instances) {
			catchUp(instance.current);
			if (instance.current.table.size() != 0) {
				violations.add("(3) live locks left in the table of " + instance.current + ": "
						+ instance.current.table.snapshot());
			}
		}
		for (int p = 0; p < this.partitions; p++) {
			for (Rec rec : log(this.plan.dlqTopic(), p)) {
				String offset = ProtocolHeaders.text(rec.headers(), ProtocolHeaders.ORIGINAL_OFFSET);
				Produced origin = (offset != null) ? this.producedByOrigin.get(originKey(p, Long.parseLong(offset)))
						: null;
				if (origin == null || !Arrays.equals(origin.value, rec.value())) {
					violations.add("(4) DLQ record " + rec + " does not match a produced record");
				}
				else if (!"operator".equals(ProtocolHeaders.text(rec.headers(), ProtocolHeaders.DLQ_REASON))
						&& origin.poison != "poison"
							.equals(ProtocolHeaders.text(rec.headers(), ProtocolHeaders.DLQ_REASON))) {
					violations.add("(4) DLQ record " + rec + " of " + origin + " has dlq.reason="
							+ ProtocolHeaders.text(rec.headers(), ProtocolHeaders.DLQ_REASON));
				}
			}
		}
		return violations;
	}

}
