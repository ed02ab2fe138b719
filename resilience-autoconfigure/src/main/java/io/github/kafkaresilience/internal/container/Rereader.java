package io.github.kafkaresilience.internal.container;

import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BiPredicate;
import java.util.function.ToLongBiFunction;

import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.ladder.Delivery;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.utils.Bytes;

/**
 * Reads parked records again, with a consumer of its own (assigned, never in the group,
 * never committing), when they are nearly due and their partition has room in its
 * in-flight bound. Operators' commands on parked records (docs/PROTOCOL.md, rule 11) ask
 * for passes of their own, one per partition for the keys of all the commands that
 * arrived meanwhile, before the passes for due records. A pass reads from the partition's
 * first parked record; what it takes back is the {@link ParkedPass}'s decision; it ends
 * after the last parked record. A parked offset the log no longer holds (deleted by
 * retention) is done: there is nothing left to run, and the reaper releases its lock.
 */
final class Rereader {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(Rereader.class);

	static final long IDLE_MILLIS = 200;

	private static final int MAX_EMPTY_POLLS = 20;

	private final String id;

	private final Consumer<byte[], byte[]> consumer;

	private final Partitions partitions;

	private final ContainerSettings settings;

	private final Clock clock;

	private final ToLongBiFunction<PartitionWork, Delivery> dueTime;

	private final BiPredicate<PartitionWork, Delivery> unpark;

	private final Thread thread;

	private final Object signal = new Object();

	private volatile boolean done;

	private boolean woken;

	/** The keys of parked records operators' commands are about: read again now. */
	private final Queue<Commanded> commanded = new ConcurrentLinkedQueue<>();

	private record Commanded(PartitionWork work, Bytes key) {
	}

	/**
	 * @param id the listener id
	 * @param consumer the consumer it reads with, closed when it stops
	 * @param partitions the container's partitions
	 * @param settings the container's settings
	 * @param clock the clock due times are read against
	 * @param dueTime when a parked record of a partition may run, epoch millis
	 * @param unpark hands a parked record read again back to its partition; false when
	 * the partition has no room (the record stays parked)
	 */
	Rereader(String id, Consumer<byte[], byte[]> consumer, Partitions partitions, ContainerSettings settings,
			Clock clock, ToLongBiFunction<PartitionWork, Delivery> dueTime,
			BiPredicate<PartitionWork, Delivery> unpark) {
		this.id = id;
		this.consumer = consumer;
		this.partitions = partitions;
		this.settings = settings;
		this.clock = clock;
		this.dueTime = dueTime;
		this.unpark = unpark;
		this.thread = new Thread(this::loop, "kafka-resilience-" + id + "-rereader");
		this.thread.setDaemon(true);
	}

	void start() {
		this.thread.start();
	}

	/** Makes it look at the partitions now: a record was parked. */
	void wake() {
		synchronized (this.signal) {
			this.woken = true;
			this.signal.notifyAll();
		}
	}

	/**
	 * Reads the parked records of a key of a partition again now: an operator's command
	 * names one of them.
	 */
	void commanded(PartitionWork work, Bytes key) {
		this.commanded.add(new Commanded(work, key));
		wake();
	}

	void stop() {
		this.done = true;
		this.consumer.wakeup();
		wake();
		try {
			this.thread.join(this.settings.shutdownTimeout().toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void loop() {
		try {
			while (!this.done) {
				long next = this.clock.millis() + IDLE_MILLIS;
				Map<PartitionWork, Set<Bytes>> commands = new LinkedHashMap<>();
				for (Commanded request; (request = this.commanded.poll()) != null;) {
					commands.computeIfAbsent(request.work(), (w) -> new HashSet<>()).add(request.key());
				}
				commands.forEach((work, keys) -> {
					if (!this.done) {
						passForCommands(work, keys);
					}
				});
				for (PartitionWork work : this.partitions.all()) {
					if (!this.done) {
						next = Math.min(next, visit(work));
					}
				}
				await(next - this.clock.millis());
			}
		}
		catch (WakeupException ex) {
			// stopping
		}
		catch (RuntimeException ex) {
			logger.error("Listener '" + this.id + "' stopped reading parked records again; "
					+ "they are read again after a restart", ex);
		}
		finally {
			this.consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
		}
	}

	/**
	 * Reads a partition's parked records again if it is time; returns when to look next.
	 */
	long visit(PartitionWork work) {
		long now = this.clock.millis();
		OptionalLong from = work.parked.startPass(now);
		if (from.isEmpty()) {
			return work.parked.nextLook(now, IDLE_MILLIS);
		}
		try {
			ParkedPass rules = ParkedPass.forDueRecords(this.settings.rereadLeadMillis());
			return work.parked.lookAgainBy(pass(work, from.getAsLong(), rules));
		}
		catch (WakeupException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			logger.warn("Listener '" + this.id + "' could not read parked records of " + work.partition
					+ " again; will try again", ex);
			return work.parked.lookAgainBy(now + 1000);
		}
	}

	/**
	 * One pass for the parked records of {@code keys} in a partition, which operators'
	 * commands name. A pass cut short (no room in the partition, a failed read) asks
	 * again for its keys.
	 */
	void passForCommands(PartitionWork work, Set<Bytes> keys) {
		Set<Bytes> parked = new HashSet<>();
		for (Bytes key : keys) {
			if (work.parked.isParked(key)) {
				parked.add(key); // the others were read again already
			}
		}
		long from = work.parked.first();
		if (work.isRevoked() || parked.isEmpty() || from < 0) {
			return;
		}
		boolean complete;
		try {
			// a pass that read past the last parked record looks no more; one cut short
			// looks again soon
			complete = pass(work, from, ParkedPass.forCommands(parked)) == Long.MAX_VALUE;
		}
		catch (WakeupException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			logger.warn("Listener '" + this.id + "' could not read the parked records of " + work.partition
					+ " again for operators' commands; will try again", ex);
			complete = false;
		}
		if (!complete && !work.isRevoked()) {
			parked.forEach((key) -> this.commanded.add(new Commanded(work, key)));
		}
	}

	/** One pass over a partition's parked records; returns when the next pass is due. */
	private long pass(PartitionWork work, long from, ParkedPass rules) {
		TopicPartition tp = work.partition;
		this.consumer.assign(List.of(tp));
		this.consumer.seek(tp, from);
		long expected = from;
		int emptyPolls = 0;
		while (!this.done && !work.isRevoked()) {
			ConsumerRecords<byte[], byte[]> records = this.consumer.poll(this.settings.pollTimeout());
			if (records.isEmpty()) {
				if (++emptyPolls >= MAX_EMPTY_POLLS) {
					return this.clock.millis() + IDLE_MILLIS;
				}
				continue;
			}
			emptyPolls = 0;
			for (ConsumerRecord<byte[], byte[]> record : records) {
				for (long gone : work.parked.doneIfGone(expected, record.offset())) {
					logger.warn("Listener '" + this.id + "': parked record " + tp + "@" + gone
							+ " is no longer in the log (retention shorter than the delay?); nothing is left "
							+ "to run, and the reaper releases its lock");
				}
				expected = record.offset() + 1;
				if (work.parked.isParked(record.offset())) {
					Delivery parked = Delivery.of(record);
					ParkedPass.Verdict verdict = rules.next(parked.businessKey(),
							() -> this.dueTime.applyAsLong(work, parked), this.clock.millis());
					if (verdict == ParkedPass.Verdict.STOP) {
						return rules.resumeAt();
					}
					if (verdict == ParkedPass.Verdict.TAKE && !this.unpark.test(work, parked)) {
						return this.clock.millis() + IDLE_MILLIS; // no room
					}
				}
				if (!work.parked.parkedFrom(expected)) {
					return Long.MAX_VALUE; // nothing parked beyond: the pass is over
				}
			}
		}
		return Long.MAX_VALUE;
	}

	private void await(long millis) {
		if (millis <= 0) {
			return;
		}
		synchronized (this.signal) {
			if (!this.woken) {
				try {
					this.signal.wait(millis);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					this.done = true;
				}
			}
			this.woken = false;
		}
	}

}
