package io.github.kafkaresilience.container;

import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.function.ToLongBiFunction;

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
 * never committing), when they are nearly due and their partition has room in its in-flight
 * bound. It reads a partition's parked records in offset order and stops at the first one not
 * nearly due (a later retry of the same stage is due later still), unless an earlier record of
 * its key was read again in the same pass. A parked offset the log no longer holds (deleted by
 * retention) is done: there is nothing left to run, and the reaper releases its lock.
 * <p>
 * An operator's command on a parked record (docs/PROTOCOL.md, rule 11) asks for one pass of
 * its own: it reads the partition from that record on and takes back that record and the
 * parked records of its key behind it, whatever their due time, so that the record can be
 * acted on now and the key's next record can follow it.
 */
final class Rereader {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(OrderedRetryContainer.class);

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

	/** Parked records an operator's command is about: read again now, with their key's records behind them. */
	private final java.util.Queue<Commanded> commanded = new java.util.concurrent.ConcurrentLinkedQueue<>();

	private record Commanded(PartitionWork work, long offset) {
	}

	/**
	 * @param id the listener id
	 * @param consumer the consumer it reads with, closed when it stops
	 * @param partitions the container's partitions
	 * @param settings the container's settings
	 * @param clock the clock due times are read against
	 * @param dueTime when a parked record of a partition may run, epoch millis
	 * @param unpark hands a parked record read again back to its partition; false when the
	 * partition has no room (the record stays parked)
	 */
	Rereader(String id, Consumer<byte[], byte[]> consumer, Partitions partitions, ContainerSettings settings,
			Clock clock, ToLongBiFunction<PartitionWork, Delivery> dueTime, BiPredicate<PartitionWork, Delivery> unpark) {
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

	/** Reads the parked record at {@code offset} of a partition again now, for an operator's command on it. */
	void commanded(PartitionWork work, long offset) {
		this.commanded.add(new Commanded(work, offset));
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
				for (Commanded request; !this.done && (request = this.commanded.poll()) != null;) {
					passForCommand(request.work(), request.offset());
				}
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

	/** Reads a partition's parked records again if it is time; returns when to look next. */
	long visit(PartitionWork work) {
		long now = this.clock.millis();
		OptionalLong from = work.startPass(now);
		if (from.isEmpty()) {
			return work.nextLook(now, IDLE_MILLIS);
		}
		try {
			return work.lookAgainBy(pass(work, from.getAsLong()));
		}
		catch (WakeupException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			logger.warn("Listener '" + this.id + "' could not read parked records of " + work.partition
					+ " again; will try again", ex);
			return work.lookAgainBy(now + 1000);
		}
	}

	private void passForCommand(PartitionWork work, long offset) {
		if (work.isRevoked() || !work.isParked(offset)) {
			return; // read again already, or no longer this instance's
		}
		try {
			pass(work, offset, offset);
		}
		catch (WakeupException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			logger.warn("Listener '" + this.id + "' could not read parked record " + work.partition + "@" + offset
					+ " again for an operator's command; it is read again when due", ex);
		}
	}

	/** One pass over a partition's parked records; returns when the next pass is due. */
	private long pass(PartitionWork work, long from) {
		return pass(work, from, -1);
	}

	/**
	 * One pass over a partition's parked records; returns when the next pass is due.
	 * @param commanded the offset of a record an operator's command is about, taken back with the
	 * records of its key behind it whatever their due time, and the pass goes on to the last
	 * parked record; -1 for a pass that stops at the first record not nearly due
	 */
	private long pass(PartitionWork work, long from, long commanded) {
		TopicPartition tp = work.partition;
		long lead = this.settings.rereadLeadMillis();
		this.consumer.assign(List.of(tp));
		this.consumer.seek(tp, from);
		Set<Bytes> sentOn = new HashSet<>();
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
				for (long gone : work.doneIfGone(expected, record.offset())) {
					logger.warn("Listener '" + this.id + "': parked record " + tp + "@" + gone
							+ " is no longer in the log (retention shorter than the delay?); nothing is left "
							+ "to run, and the reaper releases its lock");
				}
				expected = record.offset() + 1;
				if (!work.isParked(record.offset())) {
					if (!work.parkedFrom(record.offset())) {
						return Long.MAX_VALUE; // nothing parked beyond: the pass is over
					}
					continue;
				}
				Delivery parked = OrderedRetryContainer.delivery(record);
				Bytes key = parked.businessKey();
				long due = (record.offset() == commanded) ? 0 : this.dueTime.applyAsLong(work, parked);
				boolean behindSentOn = key != null && sentOn.contains(key);
				if (due - lead > this.clock.millis() && !behindSentOn) {
					if (commanded < 0) {
						return due - lead;
					}
					continue; // not the commanded key's: stays parked
				}
				if (!this.unpark.test(work, parked)) {
					return this.clock.millis() + IDLE_MILLIS; // no room
				}
				if (key != null) {
					sentOn.add(key);
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
