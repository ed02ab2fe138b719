package io.github.kafkaresilience.internal.lock;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.github.kafkaresilience.internal.support.KafkaFutures;
import io.github.kafkaresilience.internal.support.Sends;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * The lock registry of one ladder (a consumer group on a main topic), backed by its
 * compacted lock topic: an in-memory table of the live locks kept current by a tailer
 * that reads the topic, and durable writes that are applied to the table as soon as the
 * broker acknowledges them. Other packages reach the table and the tailer only through
 * it, so both stay package-private and free to change.
 *
 * @since 0.1.0
 */
public final class LockRegistry implements LockStore {

	private final String mainTopic;

	private final String lockTopic;

	private final LockTable table;

	private final LockTailer tailer;

	private final Producer<byte[], byte[]> producer;

	private final String coordinatorId;

	private final Duration writeTimeout;

	private final Ownership ownership;

	private final Sends sends;

	LockRegistry(String mainTopic, String lockTopic, LockTable table, LockTailer tailer,
			Producer<byte[], byte[]> producer, Sends sends, String coordinatorId, Duration writeTimeout,
			Ownership ownership) {
		this.sends = sends;
		this.ownership = ownership;
		this.mainTopic = mainTopic;
		this.lockTopic = lockTopic;
		this.table = table;
		this.tailer = tailer;
		this.producer = producer;
		this.coordinatorId = coordinatorId;
		this.writeTimeout = writeTimeout;
	}

	public String mainTopic() {
		return this.mainTopic;
	}

	public String lockTopic() {
		return this.lockTopic;
	}

	/** The partitions of the main topic: its lock topic and stages have as many. */
	public int partitions() {
		return this.tailer.partitions();
	}

	/**
	 * The group that owns this lock topic, and the check of records read from its ladder.
	 */
	public Ownership ownership() {
		return this.ownership;
	}

	/** The tailer, for the coordinator that stops it. */
	LockTailer tailer() {
		return this.tailer;
	}

	/**
	 * Completes once the tailer has applied lock partition {@code partition} up to its
	 * end offset as of (at least) the moment of this call.
	 */
	public CompletableFuture<Void> catchUp(int partition) {
		return this.tailer.catchUp(partition);
	}

	/**
	 * Whether the tailer has read every lock partition up to its end offset as of its
	 * start: until then this instance's view of the locks is incomplete.
	 */
	public boolean hasCaughtUp() {
		return this.tailer.hasCaughtUp();
	}

	/**
	 * Waits until the tailer has read every lock partition up to its end offset as of its
	 * start.
	 * @return whether it has, within {@code timeout}
	 */
	public boolean awaitCaughtUp(Duration timeout) {
		return this.tailer.awaitCaughtUp(timeout);
	}

	/**
	 * The live locks that other consumer groups wrote to the lock topic, as far as the
	 * tailer has read, counted by group: none of them is applied, each means another
	 * group shares the topic (or did, and left locks behind).
	 */
	public Map<String, Integer> foreignLocks() {
		return this.tailer.foreignLocks();
	}

	/**
	 * Lock records that the tailer could not read and skipped since it started: no key,
	 * not JSON, another document version, a missing header or field. A record is counted
	 * each time it is read, so one left in the topic counts again after a restart.
	 */
	public long skippedRecords() {
		return this.tailer.skippedRecords();
	}

	/** The number of live locks. */
	public int size() {
		return this.table.size();
	}

	/** The number of keys with at least one live lock. */
	public int lockedKeys() {
		return this.table.lockedKeys();
	}

	/**
	 * All live locks, for inspection. Each becomes a {@link Lock} as it is read, so going
	 * through a million of them does not hold a million {@code Lock}s at once.
	 */
	public Collection<Lock> snapshot() {
		return this.table.snapshot();
	}

	/**
	 * The {@code n} live locks written longest ago (those whose record has sat longest at
	 * its stage), oldest first.
	 */
	public List<Lock> oldest(int n) {
		return this.table.oldest(n);
	}

	/**
	 * The pending locks of replays in lock partition {@code partition}, for admission.
	 */
	public List<Lock> pending(int partition) {
		return this.table.pending(partition);
	}

	/** Registers a listener called with the business key of every change to the locks. */
	public void addListener(Consumer<Bytes> listener) {
		this.table.addListener(listener);
	}

	/** Registers a listener called with every pending lock applied: a replay to admit. */
	public void addPendingListener(Consumer<Lock> listener) {
		this.table.addPendingListener(listener);
	}

	/**
	 * Writes an operator command (docs/PROTOCOL.md, rule 11) to the lock topic, in its
	 * lock's partition. The future completes once the command is durable and this
	 * instance's table holds it; from then on whichever instance holds the record acts on
	 * it.
	 */
	public CompletableFuture<Void> submit(OperatorCommand command) {
		return sendCommand(command, CommandCodec.encode(command));
	}

	@Override
	public @Nullable OperatorCommand commandFor(Lock lock) {
		return this.table.commandFor(lock);
	}

	@Override
	public CompletableFuture<Void> finishing(OperatorCommand command) {
		return sendCommand(command, null);
	}

	/** The pending commands on a lock, whether or not they still apply to it. */
	public List<OperatorCommand> commandsOf(String lockId) {
		return this.table.commandsOf(lockId);
	}

	/** Every pending operator command. */
	public List<OperatorCommand> commands() {
		return this.table.commands();
	}

	/** Registers a listener called with every new pending command: a record to wake. */
	public void addCommandListener(Consumer<OperatorCommand> listener) {
		this.table.addCommandListener(listener);
	}

	@Override
	public @Nullable Lock find(String id) {
		return this.table.find(id);
	}

	@Override
	public List<Lock> locksOf(Bytes key) {
		return this.table.locksOf(key);
	}

	@Override
	public @Nullable Lock byOrigin(Bytes key, long originOffset) {
		return this.table.byOrigin(key, originOffset);
	}

	@Override
	public @Nullable Lock predecessor(Lock lock) {
		return this.table.predecessor(lock);
	}

	@Override
	public void write(Lock lock) {
		long offset = send(lock, LockCodec.encode(lock));
		this.table.apply(lock.originPartition(), offset, lock.id(), lock);
	}

	@Override
	public void release(Lock lock) {
		long offset = send(lock, null);
		this.table.apply(lock.originPartition(), offset, lock.id(), null);
	}

	@Override
	public CompletableFuture<Void> writing(Lock lock) {
		return sending(lock, LockCodec.encode(lock))
			.thenAccept((offset) -> this.table.apply(lock.originPartition(), offset, lock.id(), lock));
	}

	@Override
	public CompletableFuture<Void> releasing(Lock lock) {
		return sending(lock, null)
			.thenAccept((offset) -> this.table.apply(lock.originPartition(), offset, lock.id(), null));
	}

	/**
	 * The lock record that writes {@code lock}, or releases it, for a caller that sends
	 * it itself (in a transaction); it then reports the write with {@link #written}.
	 * @param lock the lock
	 * @param release whether the record is the lock's tombstone
	 * @return the record to send
	 */
	public ProducerRecord<byte[], byte[]> recordOf(Lock lock, boolean release) {
		return record(lock, release ? null : LockCodec.encode(lock));
	}

	/**
	 * Applies a lock record sent with {@link #recordOf} once it is committed, so that
	 * this instance sees its own write before the tailer reads it.
	 * @param lock the lock
	 * @param release whether the record was the lock's tombstone
	 * @param offset the offset of the record in the lock topic
	 */
	public void written(Lock lock, boolean release, long offset) {
		this.table.apply(lock.originPartition(), offset, lock.id(), release ? null : lock);
	}

	private long send(Lock lock, byte @Nullable [] value) {
		return KafkaFutures.await(this.producer.send(record(lock, value)), this.writeTimeout, what(lock)).offset();
	}

	private CompletableFuture<Long> sending(Lock lock, byte @Nullable [] value) {
		return this.sends.send(this.producer, record(lock, value), this.writeTimeout, what(lock))
			.thenApply(RecordMetadata::offset);
	}

	private ProducerRecord<byte[], byte[]> record(Lock lock, byte @Nullable [] value) {
		return new ProducerRecord<>(this.lockTopic, lock.originPartition(), null, LockCodec.encodeId(lock.id()), value,
				LockCodec.headers(lock.key(), this.coordinatorId, this.ownership));
	}

	private CompletableFuture<Void> sendCommand(OperatorCommand command, byte @Nullable [] value) {
		ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(this.lockTopic, command.partition(), null,
				CommandCodec.encodeKey(command), value,
				LockCodec.headers(command.key(), this.coordinatorId, this.ownership));
		String what = ((value != null) ? "write" : "end") + " operator command " + command.id() + " to '"
				+ this.lockTopic + "'";
		return this.sends.send(this.producer, record, this.writeTimeout, what)
			.thenAccept((metadata) -> this.table.applyCommand(command.partition(), metadata.offset(), command.id(),
					(value != null) ? command : null));
	}

	private String what(Lock lock) {
		return "write lock " + lock.id() + " to '" + this.lockTopic + "'";
	}

}
