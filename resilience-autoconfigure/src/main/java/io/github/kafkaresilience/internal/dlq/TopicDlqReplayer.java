package io.github.kafkaresilience.internal.dlq;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.locks.LockSupport;

import io.github.kafkaresilience.dlq.DeadLetter;
import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.dlq.ReplayReport;
import io.github.kafkaresilience.dlq.ReplayRequest;
import io.github.kafkaresilience.dlq.ScanPosition;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.internal.support.ConsumerClients;
import io.github.kafkaresilience.internal.support.ConsumerSettings;
import io.github.kafkaresilience.internal.support.KafkaFutures;
import io.github.kafkaresilience.internal.support.ProducerClients;
import io.github.kafkaresilience.internal.support.ProducerSettings;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.jspecify.annotations.Nullable;

/**
 * Sends dead letters back into their consumer group's ladder, on an operator's request
 * only: never automatically.
 * <p>
 * A replay reads the dead-letter topic from its beginning (or from {@code since}) up to
 * its end as of the start of the replay, without a consumer group and without committing,
 * and sends every dead letter of the group that matches the request to stage 1 of the
 * group's ladder on the main topic, in the dead letter's own partition, at most
 * {@code ratePerSecond} a second. It never writes to the main topic: the other groups
 * that read it never see a replay. A replayed record keeps its key, value and user
 * headers and its {@code original.*} headers; its {@code retry.count} is {@code 0}, and
 * {@code replay.from-dlq} ({@code topic/partition/offset} of the dead letter),
 * {@code replay.timestamp} and {@code owner.group} are added. The other protocol headers
 * are dropped. The group's instances take it in behind every record of its key still in
 * the ladder (docs/PROTOCOL.md, rule 2.0). Dead letters of another group are skipped and
 * counted.
 * <p>
 * Only committed dead letters are read: one written by an aborted transaction was never a
 * dead letter. Neither topic is ever created by a replay.
 * <p>
 * Replaying twice sends twice: the handler must be idempotent, or guarded.
 *
 */
public final class TopicDlqReplayer implements DlqReplayer {

	private static final Log logger = LogFactory.getLog(TopicDlqReplayer.class);

	private static final String CLIENT_ID = "kafka-resilience-replay";

	private static final Duration POLL_TIMEOUT = Duration.ofMillis(500);

	/**
	 * How long polls may return nothing while the end of the dead-letter topic is not
	 * reached.
	 */
	private static final Duration STALL_TIMEOUT = Duration.ofMinutes(1);

	/**
	 * How long to wait for a send that the producer already completed (after a flush).
	 */
	private static final Duration SEND_TIMEOUT = Duration.ofMinutes(1);

	private final ConsumerClients consumers;

	private final ProducerClients producers;

	private final Map<String, Object> consumerConfig;

	private final Map<String, Object> producerConfig;

	private final double ratePerSecond;

	private final Clock clock;

	private final Ladders ladders;

	/** Finds the ladder a replay goes back to. */
	@FunctionalInterface
	public interface Ladders {

		/**
		 * The ladder of a consumer group on a main topic.
		 * @param group the group, or {@code null} for the only one that consumes the
		 * topic
		 * @param mainTopic the main topic
		 * @throws IllegalArgumentException when there is no such ladder, or no single one
		 */
		LadderPlan ladder(@Nullable String group, String mainTopic);

	}

	/**
	 * @param consumers creates the consumer of a replay, from the application's consumer
	 * settings (bootstrap servers, security)
	 * @param producers creates the producer of a replay, from the application's producer
	 * settings
	 * @param ratePerSecond at most this many records are sent per second
	 * @param clock the clock of {@code replay.timestamp}
	 * @param ladders finds the ladder of a request's group and main topic
	 */
	public TopicDlqReplayer(ConsumerClients consumers, ProducerClients producers, double ratePerSecond, Clock clock,
			Ladders ladders) {
		this.ladders = ladders;
		if (!(ratePerSecond > 0)) {
			throw new IllegalArgumentException(
					"The replay rate must be above 0 records per second but was " + ratePerSecond);
		}
		this.consumers = consumers;
		this.producers = producers;
		this.consumerConfig = replayConsumerConfig(consumers.configuration());
		this.producerConfig = Collections
			.unmodifiableMap(ProducerSettings.forAwaitedWrites(producers.configuration(), CLIENT_ID, null));
		this.ratePerSecond = ratePerSecond;
		this.clock = clock;
	}

	/**
	 * Runs a replay and returns once every matching dead letter is sent and acknowledged
	 * (or, on a dry run, counted).
	 * @throws IllegalArgumentException when {@code from} or {@code to} does not exist
	 * @throws IllegalStateException when a send fails, or the replay is interrupted (its
	 * interrupt flag is then set again); the message says how many were sent
	 */
	@Override
	public ReplayReport replay(ReplayRequest request) {
		return replay(request, Long.MAX_VALUE);
	}

	/**
	 * Runs a replay that reads at most {@code maxScanned} records of the dead-letter
	 * topic: it stops there, and the report says where it stopped in each partition it
	 * did not read to its end. Meant for dry runs asked over the web, which must not read
	 * a topic of millions of records for one request.
	 * @throws IllegalArgumentException when {@code from} or {@code to} does not exist
	 * @throws IllegalStateException when a send fails, or the replay is interrupted (its
	 * interrupt flag is then set again); the message says how many were sent
	 */
	@Override
	public ReplayReport replay(ReplayRequest request, long maxScanned) {
		// the request's values came from outside: escaped by its toString
		logger.info("Replaying dead letters " + request + ", at most " + this.ratePerSecond + " a second"
				+ ((maxScanned < Long.MAX_VALUE) ? ", reading at most " + maxScanned + " records" : ""));
		Replay replay = new Replay(request, maxScanned);
		try {
			ReplayReport report = replay.run();
			logger.info(report);
			return report;
		}
		finally {
			if (replay.interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private static Map<String, Object> replayConsumerConfig(Map<String, Object> base) {
		// groupless starts at earliest: a seek below the log start (retention ran
		// meanwhile) reads
		// from the first dead letter left
		Map<String, Object> config = ConsumerSettings.groupless(base, CLIENT_ID);
		// looking a topic up must not create it: a mistyped name is an error, not a new
		// topic
		config.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
		// a dead letter of an aborted transaction was never one (its record was
		// redelivered)
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		return Collections.unmodifiableMap(config);
	}

	/** A dead letter handed to the producer and the result of its send. */
	private record Sent(DeadLetter letter, Future<RecordMetadata> future) {

		String coordinates() {
			return this.letter.topic() + "/" + this.letter.partition() + "/" + this.letter.offset();
		}

	}

	/** One run of a request: what it read, matched and sent so far. */
	private final class Replay {

		private final ReplayRequest request;

		private final LadderPlan ladder;

		/** Stage 1 of the group's ladder: where replayed dead letters enter it. */
		private final String target;

		private final Ownership ownership;

		private final long started = System.nanoTime();

		/** Sends not yet known to be acknowledged, in the order they were made. */
		private final Deque<Sent> pending = new ArrayDeque<>();

		/** The records read, and where each partition is. */
		private final ScanProgress progress;

		private int targetPartitions;

		private List<ScanPosition> stoppedAt = List.of();

		private long foreign;

		private long matched;

		private long sends;

		private long published;

		private long firstSendNanos;

		private boolean stopped;

		private boolean interrupted;

		Replay(ReplayRequest request, long maxScanned) {
			this.request = request;
			this.progress = new ScanProgress(maxScanned);
			this.ladder = TopicDlqReplayer.this.ladders.ladder(request.group(), request.to());
			if (this.ladder.stages().isEmpty()) {
				throw new IllegalArgumentException("The ladder of " + this.ladder.describe()
						+ " has no retry stage, and a "
						+ "replay sends dead letters back through stage 1 (the main topic is read by other groups too); "
						+ "give the listener a delay to replay its dead letters");
			}
			this.target = this.ladder.stage(1).topic();
			// a dead letter without an owner is another group's only on a dead-letter
			// topic named
			// after the group: an unscoped one may hold those of a release before the
			// header existed
			this.ownership = new Ownership(this.ladder.group(),
					this.ladder.scoped() && request.from().equals(this.ladder.dlqTopic()), List.of(request.from()));
		}

		ReplayReport run() {
			Consumer<byte[], byte[]> consumer = TopicDlqReplayer.this.consumers
				.create(TopicDlqReplayer.this.consumerConfig);
			try {
				List<TopicPartition> partitions = TopicReads.partitionsOf(consumer, this.request.from(),
						"Dead-letter topic '%s' does not exist; check the topic to replay from ('from')");
				this.targetPartitions = TopicReads
					.partitionsOf(consumer, this.target,
							"Retry topic '%s' of " + this.ladder.describe().replace("%", "%%")
									+ " does not exist; start the listener once to create it")
					.size();
				consumer.assign(partitions);
				Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
				Set<TopicPartition> reading = TopicReads.seekSince(consumer, partitions, this.request.since());
				Producer<byte[], byte[]> producer = this.request.dryRun() ? null
						: TopicDlqReplayer.this.producers.create(TopicDlqReplayer.this.producerConfig);
				try {
					try {
						scan(consumer, producer, reading, ends);
					}
					catch (InterruptException ex) {
						interrupted();
					}
					if (producer != null) {
						producer.flush();
						acknowledge(true);
					}
				}
				finally {
					if (producer != null) {
						// as close(): every send handed to it is sent first
						TopicDlqReplayer.this.producers.close(producer, Duration.ofMillis(Long.MAX_VALUE));
					}
				}
			}
			catch (InterruptException ex) {
				interrupted();
			}
			finally {
				// no group to leave, nothing to commit: do not wait for the fetch still
				// in flight
				consumer.close(CloseOptions.timeout(Duration.ZERO));
			}
			if (this.interrupted) {
				throw new IllegalStateException("Replay " + this.request + " was interrupted: it scanned "
						+ this.progress.scanned() + " dead letter(s), of which " + this.matched
						+ " matched, and sent and had acknowledged " + this.published
						+ "; a replay sends again whatever it already sent, so narrow the next one to resume");
			}
			return new ReplayReport(this.request, this.progress.scanned(), this.foreign, this.matched, this.target,
					this.published, Duration.ofNanos(System.nanoTime() - this.started), this.stoppedAt);
		}

		/** Reads every partition up to its end as of the start, sending what matches. */
		private void scan(Consumer<byte[], byte[]> consumer, @Nullable Producer<byte[], byte[]> producer,
				Set<TopicPartition> reading, Map<TopicPartition, Long> ends) {
			this.progress.start(consumer, reading);
			long lastProgress = System.nanoTime();
			while (!this.stopped) {
				if (this.progress.isFull()) {
					this.stoppedAt = this.progress.stoppedAt(reading, ends);
					return;
				}
				// position, not the last record seen: transaction markers and aborted
				// records
				// are skipped without being returned
				Set<TopicPartition> done = new HashSet<>();
				for (TopicPartition partition : reading) {
					if (consumer.position(partition) >= Objects.requireNonNull(ends.get(partition))) {
						done.add(partition);
					}
				}
				reading.removeAll(done);
				consumer.pause(done);
				if (reading.isEmpty()) {
					return;
				}
				ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL_TIMEOUT);
				if (records.isEmpty()) {
					if (System.nanoTime() - lastProgress > STALL_TIMEOUT.toNanos()) {
						throw new IllegalStateException("Could not read dead-letter topic '" + this.request.from()
								+ "' to its end: nothing arrived for " + STALL_TIMEOUT.toSeconds() + " s on "
								+ reading);
					}
					continue;
				}
				lastProgress = System.nanoTime();
				for (TopicPartition partition : records.partitions()) {
					long end = Objects.requireNonNull(ends.get(partition));
					for (ConsumerRecord<byte[], byte[]> record : records.records(partition)) {
						if (this.stopped || record.offset() >= end) {
							break; // written after the start: the next replay's
						}
						if (this.progress.isFull()) {
							break;
						}
						this.progress.scanned(partition, record.offset());
						read(record, producer);
					}
				}
			}
		}

		private void read(ConsumerRecord<byte[], byte[]> record, @Nullable Producer<byte[], byte[]> producer) {
			if (!this.ownership.owns(record.topic(), record.partition(), record.offset(), record.headers())) {
				this.foreign++;
				return;
			}
			DeadLetter letter = DeadLetter.of(record);
			if (!this.request.matches(letter)) {
				return;
			}
			this.matched++;
			if (producer != null) {
				send(letter, producer);
			}
		}

		private void send(DeadLetter letter, Producer<byte[], byte[]> producer) {
			if (!pace()) {
				return;
			}
			if (letter.partition() >= this.targetPartitions) {
				throw new IllegalStateException("Dead letter " + letter + " is in partition " + letter.partition()
						+ " but '" + this.target + "' has " + this.targetPartitions
						+ " partitions; a dead letter goes back to its own " + "partition, where its key lives");
			}
			ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(this.target, letter.partition(), null,
					letter.key(), letter.value(),
					ProtocolHeaders.forReplay(letter.headers(), letter.topic(), letter.partition(), letter.offset(),
							TopicDlqReplayer.this.clock.instant(), this.ownership));
			Future<RecordMetadata> future;
			try {
				future = producer.send(record);
			}
			catch (InterruptException ex) {
				interrupted();
				return;
			}
			catch (KafkaException ex) {
				// reported in send order by acknowledge, with the sends before it
				future = CompletableFuture.failedFuture(ex);
				this.stopped = true;
			}
			this.sends++;
			this.pending.add(new Sent(letter, future));
			acknowledge(false);
		}

		/**
		 * Waits until the next send is due: the i-th send is not made before i / rate
		 * seconds after the first one.
		 * @return whether to send; {@code false} when the thread was interrupted
		 */
		private boolean pace() {
			long now = System.nanoTime();
			if (this.sends == 0) {
				this.firstSendNanos = now;
			}
			// bounded so that the sum cannot overflow, however slow the rate
			long delay = (long) Math.min(this.sends * 1_000_000_000d / TopicDlqReplayer.this.ratePerSecond,
					Long.MAX_VALUE / 2);
			long due = this.firstSendNanos + delay;
			while (due - now > 0 && !Thread.currentThread().isInterrupted()) {
				LockSupport.parkNanos(due - now);
				now = System.nanoTime();
			}
			if (Thread.interrupted()) {
				interrupted();
				return false;
			}
			return true;
		}

		/**
		 * Counts the acknowledged sends at the head of the pending ones; all of them when
		 * flushed.
		 */
		private void acknowledge(boolean flushed) {
			while (!this.pending.isEmpty() && (flushed || this.pending.peek().future().isDone())) {
				Sent sent = this.pending.poll();
				try {
					KafkaFutures.await(sent.future(), SEND_TIMEOUT,
							"send dead letter " + sent.coordinates() + " to '" + this.target + "'");
				}
				catch (KafkaException ex) {
					this.stopped = true;
					throw new IllegalStateException("Could not replay dead letter " + sent.coordinates()
							+ " (written at " + sent.letter().timestamp() + ") to '" + this.target
							+ "': the replay sent and had" + " acknowledged " + this.published
							+ " dead letter(s) before it, and may have sent some after"
							+ " it; a replay sends again whatever it already sent, so narrow the next one to resume",
							(ex.getCause() != null) ? ex.getCause() : ex);
				}
				this.published++;
			}
		}

		private void interrupted() {
			Thread.interrupted(); // set again once the sends made are flushed and counted
			this.interrupted = true;
			this.stopped = true;
		}

	}

}
