package io.github.kafkaresilience.simulation;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.LadderPlan;
import io.github.kafkaresilience.ladder.RecordHandler;
import io.github.kafkaresilience.ladder.RecordPublisher;
import io.github.kafkaresilience.ladder.RetryHeaders;
import io.github.kafkaresilience.ladder.StageRouter;
import io.github.kafkaresilience.ladder.Step;
import io.github.kafkaresilience.lock.Lock;
import io.github.kafkaresilience.lock.LockCodec;
import io.github.kafkaresilience.lock.LockStore;
import io.github.kafkaresilience.lock.LockTable;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;

/**
 * An in-memory Kafka for the retry protocol: topics as append-only logs, the lock log, the
 * committed offsets of one consumer group, a simulated clock, and application instances whose
 * incarnations each hold a real {@link LockTable} and a real {@link StageRouter} over ports
 * implemented here. Every port call goes through a {@link Hook} first, where the scheduler can
 * crash the instance, run other actions in between (concurrency), or make the call fail.
 * <p>
 * The world also records the ground truth (what was produced, every handler run, every DLQ
 * record) and checks the invariants that can be checked the moment something happens.
 */
final class SimWorld {

	static final String MAIN = "orders";

	/** The consumer group that owns the simulated ladder. */
	static final String GROUP = "billing";

	/** A user header every produced record carries; it must travel unchanged. */
	static final String USER_HEADER = "trace-id";

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

	/** A record of the lock log: a lock version or (lock == null) a tombstone. */
	record LockRec(int partition, long offset, String id, Bytes key, Lock lock, byte[] value, Headers headers,
			String writer) {
	}

	/** A record produced to the main topic, and what became of it. */
	static final class Produced {

		final int index;

		final int partition;

		final long offset;

		final String keyName;

		final Bytes key;

		final byte[] value;

		final boolean poison;

		long firstSuccess = -1;

		long firstDlq = -1;

		int runs;

		Produced(int index, int partition, long offset, String keyName, byte[] value, boolean poison) {
			this.index = index;
			this.partition = partition;
			this.offset = offset;
			this.keyName = keyName;
			this.key = (keyName != null) ? Bytes.wrap(keyName.getBytes(StandardCharsets.UTF_8)) : null;
			this.value = value;
			this.poison = poison;
		}

		boolean finished() {
			return this.firstSuccess >= 0 || this.firstDlq >= 0;
		}

		long finishedAt() {
			if (this.firstSuccess < 0) {
				return this.firstDlq;
			}
			return (this.firstDlq < 0) ? this.firstSuccess : Math.min(this.firstSuccess, this.firstDlq);
		}

		@Override
		public String toString() {
			return "#" + this.index + "(" + MAIN + "/" + this.partition + "/" + this.offset + " key=" + this.keyName + ")";
		}

	}

	enum Call {

		FIND, LOCKS_OF, BY_ORIGIN, PREDECESSOR, WRITE, RELEASE, PUBLISH, HANDLE;

		boolean isWrite() {
			return this == WRITE || this == RELEASE || this == PUBLISH;
		}

	}

	/** How a write-like port call fails: not at all, before its effect, or after it (ack lost). */
	enum Fail {

		NONE, CLEAN, AMBIGUOUS

	}

	/** Runs before every port call; may crash the caller, run other actions, or make the call fail. */
	interface Hook {

		Fail before(Incarnation incarnation, Call call);

	}

	/** Decides what the user's handler does with one run of a record. */
	interface HandlerPolicy {

		HandlerResult decide(Produced record, Delivery delivery);

	}

	/** One route() call in progress. */
	static final class RouteContext {

		final Incarnation incarnation;

		final Delivery delivery;

		final Produced origin;

		HandlerResult lastResult;

		boolean failureInjected;

		RouteContext(Incarnation incarnation, Delivery delivery, Produced origin) {
			this.incarnation = incarnation;
			this.delivery = delivery;
			this.origin = origin;
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

	/** One process of an instance: dies with a crash; its table is rebuilt by its successor. */
	final class Incarnation {

		final SimInstance instance;

		final int number;

		final LockTable table = new LockTable();

		final long[] tailerPos = new long[SimWorld.this.partitions];

		final StageRouter router;

		final Map<TP, Work> works = new LinkedHashMap<>();

		boolean dead;

		Incarnation(SimInstance instance, int number) {
			this.instance = instance;
			this.number = number;
			RecordHandler handler = this::handle;
			RecordPublisher publisher = this::publish;
			this.router = new StageRouter(SimWorld.this.plan, new Store(), publisher, handler,
					SimWorld.this.classifier, SimWorld.this.clock, () -> "L" + (++SimWorld.this.lockIds));
		}

		private Fail enter(Call call) {
			if (this.dead) {
				throw new Crash(this + " is dead");
			}
			Fail fail = SimWorld.this.hook.before(this, call);
			if (this.dead) {
				throw new Crash(this + " died before " + call);
			}
			return fail;
		}

		private HandlerResult handle(Delivery delivery) {
			enter(Call.HANDLE);
			return SimWorld.this.runHandler(this, delivery);
		}

		private long publish(String topic, int partition, byte[] key, byte[] value, Headers headers) {
			Fail fail = enter(Call.PUBLISH);
			if (fail == Fail.CLEAN) {
				trace(() -> "    " + this + " publish to " + topic + " FAILS (injected, not written)");
				throw new KafkaException("injected publish failure");
			}
			Rec rec = append(topic, partition, key, value, headers);
			trace(() -> "    " + this + " publish " + rec + describeHeaders(headers)
					+ ((fail == Fail.AMBIGUOUS) ? " then FAILS (injected, ack lost)" : ""));
			checkPublish(rec);
			if (fail == Fail.AMBIGUOUS) {
				throw new KafkaException("injected publish failure after the write");
			}
			return rec.offset();
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
			public void write(Lock lock) {
				writeLock(Call.WRITE, lock, lock);
			}

			@Override
			public void release(Lock lock) {
				writeLock(Call.RELEASE, lock, null);
			}

			private void writeLock(Call call, Lock about, Lock value) {
				Fail fail = enter(call);
				Incarnation me = Incarnation.this;
				if (fail == Fail.CLEAN) {
					trace(() -> "    " + me + " " + call.name().toLowerCase() + " " + about + " FAILS (injected, not written)");
					throw new KafkaException("injected lock write failure");
				}
				if (value != null) {
					checkLockWrite(value);
				}
				LockRec rec = appendLock(about.originPartition(), about.id(), about.key(), value, me.instance.name);
				trace(() -> "    " + me + " " + ((value != null) ? "write " + value : "release " + about.id()) + " @locks/"
						+ rec.partition() + "/" + rec.offset()
						+ ((fail == Fail.AMBIGUOUS) ? " then FAILS (injected, ack lost)" : ""));
				if (fail == Fail.AMBIGUOUS) {
					throw new KafkaException("injected lock write failure after the write");
				}
				me.table.apply(rec.partition(), rec.offset(), rec.id(), value);
			}

		}

	}

	/** The partition work of an owner (what a container holds per assigned topic partition). */
	static final class Work {

		final TP tp;

		final Incarnation owner;

		final long barrierEnd;

		long fetchPos;

		boolean revoked;

		final TreeSet<Long> pending = new TreeSet<>();

		final Map<Bytes, ArrayDeque<Task>> queues = new HashMap<>();

		final List<Task> tasks = new ArrayList<>();

		Work(TP tp, Incarnation owner, long fetchPos, long barrierEnd) {
			this.tp = tp;
			this.owner = owner;
			this.fetchPos = fetchPos;
			this.barrierEnd = barrierEnd;
		}

		boolean barrierOpen() {
			return this.owner.tailerPos[this.tp.partition()] >= this.barrierEnd;
		}

		long committable() {
			return this.pending.isEmpty() ? this.fetchPos : this.pending.first();
		}

	}

	enum Wait {

		NONE, UNTIL, KEY, TAILER

	}

	/** A record in flight at its owner. */
	static final class Task {

		final Work work;

		final Rec rec;

		final Bytes key;

		final boolean duplicate;

		Wait wait = Wait.NONE;

		long dueAt;

		long tailerTarget;

		boolean tailerSynced;

		boolean woken;

		boolean running;

		int routes;

		Task(Work work, Rec rec, boolean duplicate) {
			this.work = work;
			this.rec = rec;
			this.key = (rec.key() != null) ? Bytes.wrap(rec.key()) : null;
			this.duplicate = duplicate;
		}

		@Override
		public String toString() {
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
		String grep(java.util.regex.Pattern pattern, int max) {
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

	final SimClock clock = new SimClock(START);

	final boolean encodeLocks;

	final FailureClassifier classifier = new FailureClassifier(List.of());

	final Map<String, List<List<Rec>>> topics = new HashMap<>();

	final List<List<LockRec>> lockLog = new ArrayList<>();

	final Map<TP, Long> committed = new HashMap<>();

	final List<SimInstance> instances = new ArrayList<>();

	final List<Produced> produced = new ArrayList<>();

	final Map<Long, Produced> producedByOrigin = new HashMap<>();

	final ArrayDeque<RouteContext> contexts = new ArrayDeque<>();

	Hook hook = (incarnation, call) -> Fail.NONE;

	HandlerPolicy policy = (record, delivery) -> HandlerResult.success();

	Trace trace;

	/** Counts handler runs and DLQ writes: the global order of observable effects. */
	long events;

	/** Grows whenever anything is written (records, lock records) or run: tells a stall from progress. */
	long progress;

	int lockIds;

	SimWorld(LadderPlan plan, int partitions, boolean encodeLocks) {
		this.plan = plan;
		this.partitions = partitions;
		this.encodeLocks = encodeLocks;
		for (int p = 0; p < partitions; p++) {
			this.lockLog.add(new ArrayList<>());
		}
	}

	static LadderPlan plan(List<java.time.Duration> delays, int maxAttempts) {
		return LadderPlan.of(GROUP, MAIN, delays, maxAttempts, LadderPlan.DEFAULT_RETRY_TEMPLATE,
				LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE);
	}

	void trace(java.util.function.Supplier<String> line) {
		if (this.trace != null) {
			this.trace.add(line.get());
		}
	}

	SimInstance addInstance(String name) {
		SimInstance instance = new SimInstance(name);
		this.instances.add(instance);
		return instance;
	}

	/** Kills the current incarnation of an instance and starts a new one with an empty table. */
	Incarnation restart(SimInstance instance) {
		Incarnation old = instance.current;
		old.dead = true;
		old.works.values().forEach((work) -> work.revoked = true);
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
			headers.add(RetryHeaders.RETRY_COUNT, "7".getBytes(StandardCharsets.UTF_8));
			headers.add(RetryHeaders.LOCK_ID, "bogus-lock".getBytes(StandardCharsets.UTF_8));
			headers.add(RetryHeaders.ORIGINAL_OFFSET, "424242".getBytes(StandardCharsets.UTF_8));
			headers.add(RetryHeaders.ORIGINAL_TOPIC, "elsewhere".getBytes(StandardCharsets.UTF_8));
			headers.add(RetryHeaders.DLQ_REASON, "bogus".getBytes(StandardCharsets.UTF_8));
		}
		byte[] key = (keyName != null) ? keyName.getBytes(StandardCharsets.UTF_8) : null;
		Rec rec = append(MAIN, partition, key, value, headers);
		Produced p = new Produced(index, partition, rec.offset(), keyName, value, poison);
		this.produced.add(p);
		this.producedByOrigin.put(originKey(partition, rec.offset()), p);
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
			headers = LockCodec.headers(key, writer, this.plan.ownership());
			value = (lock != null) ? LockCodec.encode(lock) : null;
		}
		LockRec rec = new LockRec(partition, log.size(), id, key, lock, value, headers, writer);
		log.add(rec);
		this.progress++;
		return rec;
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

	/** Lets the incarnation's tailer apply up to {@code max} unread lock records of a partition. */
	int tailerStep(Incarnation incarnation, int partition, int max) {
		List<LockRec> log = this.lockLog.get(partition);
		int applied = 0;
		while (applied < max && incarnation.tailerPos[partition] < log.size()) {
			LockRec rec = log.get((int) incarnation.tailerPos[partition]++);
			incarnation.table.apply(partition, rec.offset(), rec.id(), read(rec));
			applied++;
		}
		incarnation.table.tailerReached(partition, incarnation.tailerPos[partition]);
		return applied;
	}

	void catchUp(Incarnation incarnation) {
		for (int p = 0; p < this.partitions; p++) {
			tailerStep(incarnation, p, Integer.MAX_VALUE);
		}
	}

	/** A fresh table with the whole lock log replayed, as a brand-new instance would build it. */
	LockTable replayLockLog() {
		LockTable table = new LockTable();
		for (int p = 0; p < this.partitions; p++) {
			for (LockRec rec : this.lockLog.get(p)) {
				table.apply(p, rec.offset(), rec.id(), read(rec));
			}
			table.tailerReached(p, lockEnd(p));
		}
		return table;
	}

	// ---- routing

	Step route(Incarnation incarnation, Delivery delivery, boolean tailerSynced) {
		RouteContext context = new RouteContext(incarnation, delivery, originOf(delivery));
		this.contexts.push(context);
		try {
			return incarnation.router.route(delivery, tailerSynced);
		}
		finally {
			this.contexts.pop();
		}
	}

	Produced originOf(Delivery delivery) {
		if (MAIN.equals(delivery.topic())) {
			return this.producedByOrigin.get(originKey(delivery.partition(), delivery.offset()));
		}
		String partition = RetryHeaders.text(delivery.headers(), RetryHeaders.ORIGINAL_PARTITION);
		String offset = RetryHeaders.text(delivery.headers(), RetryHeaders.ORIGINAL_OFFSET);
		if (partition == null || offset == null) {
			throw new SimViolation(delivery + " has no original.partition/original.offset");
		}
		Produced origin = this.producedByOrigin.get(originKey(Integer.parseInt(partition), Long.parseLong(offset)));
		if (origin == null) {
			throw new SimViolation(delivery + " names an origin " + partition + "/" + offset + " that was never produced");
		}
		return origin;
	}

	private HandlerResult runHandler(Incarnation incarnation, Delivery delivery) {
		RouteContext context = this.contexts.peek();
		if (context == null || context.delivery != delivery) {
			throw new SimViolation("handler called outside of the route of " + delivery);
		}
		Produced origin = context.origin;
		if (!Arrays.equals(origin.value, delivery.value())) {
			throw new SimViolation("handler got " + delivery + " whose value is not the value of its origin " + origin);
		}
		int stage = this.plan.stageOf(delivery.topic());
		Integer retryCount = (stage == 0) ? Integer.valueOf(0) : RetryHeaders.retryCount(delivery.headers());
		if (stage > 0 && retryCount != null && retryCount > 0) {
			long due = delivery.timestamp() + this.plan.stage(stage).delay().toMillis();
			if (this.clock.millis() < due) {
				throw new SimViolation("(5) " + delivery + " with retry.count=" + retryCount + " ran at " + rel(this.clock.millis())
						+ " before its due time " + rel(due));
			}
		}
		if (origin.key != null) {
			// (2c) a record's handler never runs while an earlier record of its key is still in the ladder
			for (int i = origin.index - 1; i >= 0; i--) {
				Produced earlier = this.produced.get(i);
				if (origin.key.equals(earlier.key) && !earlier.finished()) {
					throw new SimViolation("(2c) handler ran " + origin + " from " + delivery + " at " + incarnation
							+ " while the earlier record " + earlier + " of the same key had neither succeeded nor been dead-lettered");
				}
			}
		}
		HandlerResult result = this.policy.decide(origin, delivery);
		long event = ++this.events;
		this.progress++;
		origin.runs++;
		if (result.outcome() == HandlerResult.Outcome.SUCCESS && origin.firstSuccess < 0) {
			origin.firstSuccess = event;
		}
		context.lastResult = result;
		trace(() -> "    " + incarnation + " handler " + delivery + " " + origin + " retry.count=" + retryCount + " -> "
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
		return " [retry.count=" + RetryHeaders.text(headers, RetryHeaders.RETRY_COUNT) + " lock.id="
				+ RetryHeaders.text(headers, RetryHeaders.LOCK_ID) + " prev="
				+ RetryHeaders.text(headers, RetryHeaders.PREVIOUS_TOPIC) + " orig="
				+ RetryHeaders.text(headers, RetryHeaders.ORIGINAL_OFFSET)
				+ ((RetryHeaders.text(headers, RetryHeaders.DLQ_REASON) != null)
						? " dlq.reason=" + RetryHeaders.text(headers, RetryHeaders.DLQ_REASON) : "")
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
			throw new SimViolation("lock " + lock + " confirmed at " + topic + "/" + lock.at() + " which does not exist");
		}
		Rec rec = log.get(lock.at().intValue());
		String carried = RetryHeaders.text(rec.headers(), RetryHeaders.LOCK_ID);
		String origin = RetryHeaders.text(rec.headers(), RetryHeaders.ORIGINAL_OFFSET);
		Integer count = RetryHeaders.retryCount(rec.headers());
		if (!lock.id().equals(carried) || !Long.toString(lock.originOffset()).equals(origin)
				|| !Objects.equals(count, lock.retryCount())) {
			throw new SimViolation("lock " + lock + " confirmed at " + rec + " which carries lock.id=" + carried
					+ " original.offset=" + origin + " retry.count=" + count);
		}
	}

	/** Checks the §3 headers of a record just written to a stage topic or the DLQ. */
	private void checkPublish(Rec rec) {
		RouteContext context = this.contexts.peek();
		if (context == null) {
			throw new SimViolation("publish to " + rec + " outside of any route");
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
		expect(wrong, h, RetryHeaders.PREVIOUS_TOPIC, source.topic());
		expect(wrong, h, RetryHeaders.ORIGINAL_TOPIC, MAIN);
		expect(wrong, h, RetryHeaders.ORIGINAL_PARTITION, Integer.toString(origin.partition));
		expect(wrong, h, RetryHeaders.ORIGINAL_OFFSET, Long.toString(origin.offset));
		expect(wrong, h, USER_HEADER, new String(origin.value, StandardCharsets.UTF_8));
		if (!Arrays.equals(rec.value(), origin.value) || !Arrays.equals(rec.key(), source.key())) {
			wrong.add("key/value changed");
		}
		if (rec.partition() != source.partition()) {
			wrong.add("partition " + rec.partition() + " is not the source's " + source.partition());
		}
		Integer count = RetryHeaders.retryCount(h);
		if (count == null) {
			wrong.add("retry.count missing");
		}
		boolean fromMain = MAIN.equals(source.topic());
		String sourceLock = fromMain ? null : RetryHeaders.text(source.headers(), RetryHeaders.LOCK_ID);
		String lockId = RetryHeaders.text(h, RetryHeaders.LOCK_ID);
		if (dlq) {
			checkDlq(context, rec, wrong, count, fromMain, sourceLock, lockId);
		}
		else {
			if (h.lastHeader(RetryHeaders.DLQ_REASON) != null) {
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

	private void checkDlq(RouteContext context, Rec rec, List<String> wrong, Integer count, boolean fromMain,
			String sourceLock, String lockId) {
		Headers h = rec.headers();
		Produced origin = context.origin;
		HandlerResult last = context.lastResult;
		if (last == null || last.outcome() == HandlerResult.Outcome.SUCCESS) {
			throw new SimViolation("(4) " + rec + " dead-lettered while routing " + context.delivery
					+ " although the handler " + ((last == null) ? "did not run" : "succeeded") + " in this route");
		}
		int incoming = fromMain ? 0 : RetryHeaders.retryCount(context.delivery.headers());
		String reason;
		String errorClass;
		int expectedCount;
		if (last.outcome() == HandlerResult.Outcome.POISON) {
			reason = "poison";
			errorClass = RetryHeaders.PERMANENT;
			expectedCount = incoming;
		}
		else if (this.classifier.isPermanent(last.failure())) {
			reason = "permanent";
			errorClass = RetryHeaders.PERMANENT;
			expectedCount = incoming + 1;
		}
		else {
			reason = "exhausted";
			errorClass = RetryHeaders.TRANSIENT;
			expectedCount = incoming + 1;
			if (expectedCount != this.plan.maxAttempts()) {
				wrong.add("exhausted after " + expectedCount + " attempts but max-attempts is " + this.plan.maxAttempts());
			}
		}
		expect(wrong, h, RetryHeaders.DLQ_REASON, reason);
		expect(wrong, h, RetryHeaders.ERROR_CLASS, errorClass);
		expect(wrong, h, RetryHeaders.ERROR_EXCEPTION, last.failure().getClass().getName());
		if (h.lastHeader(RetryHeaders.ERROR_MESSAGE) == null || h.lastHeader(RetryHeaders.ERROR_TIMESTAMP) == null) {
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
		if (origin.firstDlq < 0) {
			origin.firstDlq = ++this.events;
		}
	}

	private static void expect(List<String> wrong, Headers headers, String name, String expected) {
		String actual = RetryHeaders.text(headers, name);
		if (!expected.equals(actual)) {
			wrong.add(name + "=" + actual + " (expected " + expected + ")");
		}
	}

	// ---- checks made at the end

	/** Checks (1), (2), (2b), (3) and the DLQ's content; returns what is broken. */
	List<String> finalViolations() {
		List<String> violations = new ArrayList<>();
		for (Produced p : this.produced) {
			if (!p.finished()) {
				violations.add("(1) lost: " + p + " neither succeeded nor reached the DLQ (runs=" + p.runs + ")");
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
					violations.add("(2) inversion for key " + key + ": " + p + " first succeeded (event " + p.firstSuccess
							+ ") before " + previous + " (event " + previous.firstSuccess + ")");
				}
				previous = p;
			}
			previous = null;
			for (Produced p : records) {
				if (!p.finished()) {
					continue;
				}
				if (previous != null && p.finishedAt() < previous.finishedAt()) {
					violations.add("(2b) key " + key + ": " + p + " left the ladder (event " + p.finishedAt() + ") before "
							+ previous + " (event " + previous.finishedAt() + ")");
				}
				previous = p;
			}
		});
		LockTable replayed = replayLockLog();
		if (replayed.size() != 0) {
			violations.add("(3) live locks left in the lock log: " + replayed.snapshot());
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
				String offset = RetryHeaders.text(rec.headers(), RetryHeaders.ORIGINAL_OFFSET);
				Produced origin = (offset != null) ? this.producedByOrigin.get(originKey(p, Long.parseLong(offset))) : null;
				if (origin == null || !Arrays.equals(origin.value, rec.value())) {
					violations.add("(4) DLQ record " + rec + " does not match a produced record");
				}
				else if (origin.poison != "poison".equals(RetryHeaders.text(rec.headers(), RetryHeaders.DLQ_REASON))) {
					violations.add("(4) DLQ record " + rec + " of " + origin + " has dlq.reason="
							+ RetryHeaders.text(rec.headers(), RetryHeaders.DLQ_REASON));
				}
			}
		}
		return violations;
	}

}
