package io.github.kafkaresilience.internal.lock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.support.Backoff;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;

/**
 * Reads a lock topic from the beginning, without a consumer group, and applies every
 * record in log order to a {@link LockTable}. Callers can wait, without blocking a
 * thread, until the tailer has read a lock partition up to its end offset as of the
 * moment they ask.
 * <p>
 * That end offset is the partition's high watermark, not its last stable offset: the
 * tailer reads committed records only, and in {@code transaction} mode the transactions
 * of several instances interleave in a lock partition. A lock committed behind another
 * instance's open transaction lies past the last stable offset, while its record in a
 * retry topic (or the offset committed with it) can already be read. A catch-up therefore
 * lasts until every transaction open at the moment of asking has ended, so that every
 * lock committed before that moment is in the table.
 *
 * @since 0.1.0
 */
final class LockTailer {

	private static final Log logger = LogFactory.getLog(LockTailer.class);

	/** The first pause after a failed poll. */
	private static final Duration FIRST_BACKOFF = Duration.ofMillis(100);

	/** The longest pause after polls that failed in a row. */
	private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

	private record CatchUp(int partition, CompletableFuture<Void> done) {
	}

	private record Waiter(long endOffset, CompletableFuture<Void> done) {
	}

	private final String topic;

	private final int partitions;

	private final LockTable table;

	private final Supplier<Consumer<byte[], byte[]>> consumerFactory;

	private final Supplier<Consumer<byte[], byte[]>> endOffsetsFactory;

	private final Duration pollTimeout;

	private final Queue<CatchUp> requests = new ConcurrentLinkedQueue<>();

	private final Map<Integer, List<Waiter>> waiters = new HashMap<>();

	private final AtomicLong skippedRecords = new AtomicLong();

	private final Ownership ownership;

	/** The live locks other groups wrote to this topic, by lock id: their group. */
	private final Map<String, String> foreignLocks = new ConcurrentHashMap<>();

	private volatile boolean running;

	/** Notified on stop: ends a pause after a failed poll at once. */
	private final Object pause = new Object();

	private volatile @Nullable Consumer<byte[], byte[]> consumer;

	/**
	 * Reads every partition's high watermark: assigned nothing, it never fetches a
	 * record.
	 */
	private volatile @Nullable Consumer<byte[], byte[]> endOffsets;

	private @Nullable Thread thread;

	private volatile CompletableFuture<Void> started = new CompletableFuture<>();

	/**
	 * @param consumerFactory creates the consumer that reads the topic, reading committed
	 * records only
	 * @param endOffsetsFactory creates a consumer that reads uncommitted records, whose
	 * end offsets are the partitions' high watermarks
	 */
	LockTailer(String topic, int partitions, LockTable table, Supplier<Consumer<byte[], byte[]>> consumerFactory,
			Supplier<Consumer<byte[], byte[]>> endOffsetsFactory, Duration pollTimeout, Ownership ownership) {
		this.ownership = ownership;
		this.topic = topic;
		this.partitions = partitions;
		this.table = table;
		this.consumerFactory = consumerFactory;
		this.endOffsetsFactory = endOffsetsFactory;
		this.pollTimeout = pollTimeout;
	}

	/** The partitions of the lock topic, as many as the main topic has. */
	int partitions() {
		return this.partitions;
	}

	synchronized void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		this.consumer = this.consumerFactory.get();
		this.endOffsets = this.endOffsetsFactory.get();
		this.thread = new Thread(this::run, "kafka-resilience-tailer-" + this.topic);
		this.thread.setDaemon(true);
		this.thread.start();
		this.started = catchUpAll();
	}

	/**
	 * Whether this tailer has read every lock partition up to its end offset as of its
	 * start: until then this instance's view of the locks is incomplete.
	 */
	boolean hasCaughtUp() {
		CompletableFuture<Void> started = this.started;
		return started.isDone() && !started.isCompletedExceptionally();
	}

	/**
	 * Completes once this tailer has applied lock partition {@code partition} up to its
	 * end offset as of (at least) the moment of this call.
	 */
	CompletableFuture<Void> catchUp(int partition) {
		CompletableFuture<Void> done = new CompletableFuture<>();
		this.requests.add(new CatchUp(partition, done));
		Consumer<byte[], byte[]> current = this.consumer;
		if (current != null) {
			current.wakeup();
		}
		return done;
	}

	/**
	 * Completes once every lock partition is read up to its end offset as of this call.
	 */
	CompletableFuture<Void> catchUpAll() {
		List<CompletableFuture<Void>> all = new ArrayList<>();
		for (int p = 0; p < this.partitions; p++) {
			all.add(catchUp(p));
		}
		return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
	}

	/**
	 * Lock records that could not be read and were skipped since this tailer started: no
	 * key, not JSON, another document version, a missing header or field. A record is
	 * counted each time it is read, so one left in the topic counts again after a
	 * restart.
	 */
	long skippedRecords() {
		return this.skippedRecords.get();
	}

	/**
	 * The live locks that other consumer groups wrote to this lock topic, as far as this
	 * tailer has read, counted by group: none of them is applied, each means another
	 * group shares the topic (or did, and left locks behind).
	 */
	Map<String, Integer> foreignLocks() {
		Map<String, Integer> byGroup = new TreeMap<>();
		this.foreignLocks.values().forEach((group) -> byGroup.merge(group, 1, Integer::sum));
		return byGroup;
	}

	/**
	 * Waits until this tailer has read every lock partition up to its end offset as of
	 * its start.
	 * @return whether it has, within {@code timeout}
	 */
	boolean awaitCaughtUp(Duration timeout) {
		try {
			this.started.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
		catch (ExecutionException | TimeoutException | CancellationException ex) {
			return false;
		}
	}

	void stop() {
		Thread running;
		synchronized (this) {
			if (!this.running) {
				return;
			}
			this.running = false;
			running = Objects.requireNonNull(this.thread, "a running tailer has its thread");
		}
		synchronized (this.pause) {
			this.pause.notifyAll();
		}
		Consumer<byte[], byte[]> consumer = this.consumer;
		if (consumer != null) {
			consumer.wakeup();
		}
		Consumer<byte[], byte[]> endOffsets = this.endOffsets;
		if (endOffsets != null) {
			endOffsets.wakeup();
		}
		try {
			running.join(Duration.ofSeconds(10).toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void run() {
		Consumer<byte[], byte[]> consumer = Objects.requireNonNull(this.consumer);
		Consumer<byte[], byte[]> endOffsets = Objects.requireNonNull(this.endOffsets);
		try {
			List<TopicPartition> assignment = new ArrayList<>();
			for (int p = 0; p < this.partitions; p++) {
				assignment.add(new TopicPartition(this.topic, p));
			}
			consumer.assign(assignment);
			consumer.seekToBeginning(assignment);
			int failures = 0;
			while (this.running) {
				try {
					registerRequests(endOffsets);
					ConsumerRecords<byte[], byte[]> records = consumer.poll(this.pollTimeout);
					for (ConsumerRecord<byte[], byte[]> record : records) {
						applySafely(record);
					}
					for (TopicPartition partition : assignment) {
						long position = consumer.position(partition);
						this.table.tailerReached(partition.partition(), position);
						completeWaiters(partition.partition(), position);
					}
					failures = 0;
				}
				catch (WakeupException ex) {
					// a catch-up request or stop: loop again
				}
				catch (RuntimeException ex) {
					if (this.running) {
						// a lasting failure (a missing ACL, rejected credentials) fails
						// every poll at
						// once: pause, or the loop would spin and flood the log
						long pause = Backoff.after(++failures, FIRST_BACKOFF, MAX_BACKOFF).toMillis();
						logger.warn("Lock tailer for '" + this.topic + "' failed to poll; retrying in " + pause + " ms",
								ex);
						pauseAfterFailure(pause);
					}
				}
			}
		}
		finally {
			this.requests.forEach((request) -> request.done().cancel(false));
			this.waiters.values().forEach((list) -> list.forEach((waiter) -> waiter.done().cancel(false)));
			consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
			endOffsets.close(CloseOptions.timeout(Duration.ofSeconds(5)));
		}
	}

	private void pauseAfterFailure(long millis) {
		synchronized (this.pause) {
			if (this.running) {
				try {
					this.pause.wait(millis);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		}
	}

	/**
	 * Gives each new catch-up request its target: the partition's high watermark now.
	 * @param endOffsets a consumer reading uncommitted records
	 */
	private void registerRequests(Consumer<byte[], byte[]> endOffsets) {
		if (this.requests.isEmpty()) {
			return;
		}
		List<CatchUp> batch = new ArrayList<>();
		for (CatchUp request; (request = this.requests.poll()) != null;) {
			batch.add(request);
		}
		List<TopicPartition> partitions = batch.stream()
			.map((r) -> new TopicPartition(this.topic, r.partition()))
			.distinct()
			.toList();
		Map<TopicPartition, Long> ends;
		try {
			if (!endOffsets.assignment().containsAll(partitions)) {
				// assigned, never polled: it fetches nothing, and a partition it looks up
				// is its
				// own (the client warns of every look-up of a partition it was not
				// assigned)
				Set<TopicPartition> assigned = new HashSet<>(endOffsets.assignment());
				assigned.addAll(partitions);
				endOffsets.assign(assigned);
			}
			ends = endOffsets.endOffsets(partitions);
		}
		catch (RuntimeException ex) {
			// a wakeup on stop, or a failed look-up: ask again on the next loop
			this.requests.addAll(batch);
			throw ex;
		}
		for (CatchUp request : batch) {
			Long end = ends.get(new TopicPartition(this.topic, request.partition()));
			this.waiters.computeIfAbsent(request.partition(), (p) -> new ArrayList<>())
				.add(new Waiter((end != null) ? end : 0L, request.done()));
		}
	}

	private void completeWaiters(int partition, long position) {
		List<Waiter> list = this.waiters.get(partition);
		if (list == null) {
			return;
		}
		Iterator<Waiter> iterator = list.iterator();
		while (iterator.hasNext()) {
			Waiter waiter = iterator.next();
			if (position >= waiter.endOffset()) {
				iterator.remove();
				waiter.done().complete(null);
			}
		}
	}

	/**
	 * Applies one lock record. Anyone with write access can put anything on the lock
	 * topic, so a record that cannot be applied is skipped rather than allowed to throw:
	 * the position has already moved past the whole batch, and an exception here would
	 * lose every later record of it.
	 */
	private void applySafely(ConsumerRecord<byte[], byte[]> record) {
		try {
			apply(record);
		}
		catch (RuntimeException ex) {
			skip(record, (ex.getMessage() != null) ? ex.getMessage() : ex.getClass().getName());
		}
	}

	private void apply(ConsumerRecord<byte[], byte[]> record) {
		if (!this.ownership.owns(record.topic(), record.partition(), record.offset(), record.headers())) {
			noteForeign(record);
			return;
		}
		if (record.key() == null || record.key().length == 0) {
			// the library never writes one, and a compacted topic keeps an empty key as a
			// real key
			skip(record, "it has no key (the lock id)");
			return;
		}
		String id = LockCodec.decodeId(record.key());
		if (OperatorCommand.isCommandKey(id)) {
			String commandId = id.substring(OperatorCommand.KEY_PREFIX.length());
			this.table.applyCommand(record.partition(), record.offset(), commandId, (record.value() != null)
					? CommandCodec.decode(id, record.partition(), record.headers(), record.value()) : null);
			return;
		}
		if (record.value() == null) {
			// also a release whose earlier versions were compacted away: not an error
			this.table.apply(record.partition(), record.offset(), id, null);
			return;
		}
		this.table.apply(record.partition(), record.offset(), id,
				LockCodec.decode(id, record.headers(), record.value()));
	}

	/**
	 * Keeps count of the live locks of another group, for the startup check; never
	 * applied.
	 */
	private void noteForeign(ConsumerRecord<byte[], byte[]> record) {
		String owner = Ownership.ownerOf(record.headers());
		if (owner == null || record.key() == null) {
			return;
		}
		String id = LockCodec.decodeId(record.key());
		if (OperatorCommand.isCommandKey(id)) {
			return; // another group's command: not a lock, and never applied
		}
		if (record.value() != null) {
			this.foreignLocks.put(id, owner);
		}
		else {
			this.foreignLocks.remove(id);
		}
	}

	private void skip(ConsumerRecord<byte[], byte[]> record, String why) {
		this.skippedRecords.incrementAndGet();
		logger.warn("Skipping lock record " + record.topic() + "/" + record.partition() + "/" + record.offset() + ": "
				+ why + ". The lock it describes, if any, is unknown to this instance");
	}

}
