package io.github.kafkaresilience.internal.dlq;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.function.Function;

import io.github.kafkaresilience.dlq.DeadLetter;
import io.github.kafkaresilience.dlq.ReplayRequest;
import io.github.kafkaresilience.dlq.ScanPosition;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.internal.support.ConsumerClients;
import io.github.kafkaresilience.internal.support.ConsumerSettings;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Reads a dead-letter topic for an operator: the newest dead letters that match a filter
 * (the same filter a replay takes, so that what is listed is what a replay of the
 * selection sends), or one dead letter by its place. It reads with a consumer of its own,
 * without a group and read committed, from the filter's {@code since} (or the beginning)
 * to the end as of the start, or until it read as many records as a request allows; dead
 * letters of another group are not listed. A page keeps only the rows it returns, never
 * the values and headers of the records it read.
 *
 * @since 0.1.0
 */
public final class DeadLetterBrowser {

	private static final String CLIENT_ID = "kafka-resilience-dlq-browser";

	private static final Duration POLL_TIMEOUT = Duration.ofMillis(200);

	private static final Duration STALL_TIMEOUT = Duration.ofSeconds(30);

	private static final String MISSING = "Dead-letter topic '%s' does not exist";

	private final ConsumerClients consumers;

	private final Map<String, Object> config;

	public DeadLetterBrowser(ConsumerClients consumers) {
		this.consumers = consumers;
		Map<String, Object> config = ConsumerSettings.groupless(consumers.configuration(), CLIENT_ID);
		config.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
		this.config = config;
	}

	/**
	 * The newest dead letters of {@code filter.from()} that match {@code filter}, newest
	 * first, each kept only as the row {@code row} makes of it (the records read are not
	 * kept).
	 * @param owner the group that owns the topic: dead letters of any other are left out
	 * @param limit the most to return, 1 or more
	 * @param maxScanned the most records to read; the page says where the read stopped
	 * when it stopped there before the end
	 * @param row what to keep of a dead letter that matches
	 */
	public <T> Page<T> browse(ReplayRequest filter, Ownership owner, int limit, long maxScanned,
			Function<DeadLetter, T> row) {
		if (limit < 1) {
			throw new IllegalArgumentException("A page holds at least 1 dead letter, not " + limit);
		}
		PriorityQueue<Kept<T>> newest = new PriorityQueue<>(Kept.OLDEST_FIRST);
		ScanProgress progress = new ScanProgress(maxScanned);
		long matched = 0;
		List<ScanPosition> stoppedAt;
		try (Consumer<byte[], byte[]> consumer = this.consumers.create(this.config)) {
			List<TopicPartition> partitions = TopicReads.partitionsOf(consumer, filter.from(), MISSING);
			consumer.assign(partitions);
			Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
			Set<TopicPartition> reading = TopicReads.seekSince(consumer, partitions, filter.since());
			progress.start(consumer, reading);
			long lastProgress = System.nanoTime();
			while (!reading.isEmpty() && !progress.isFull()) {
				reading.removeIf((tp) -> consumer.position(tp) >= Objects.requireNonNull(ends.get(tp)));
				consumer.pause(partitions.stream().filter((tp) -> !reading.contains(tp)).toList());
				if (reading.isEmpty()) {
					break;
				}
				var records = consumer.poll(POLL_TIMEOUT);
				if (records.isEmpty()) {
					if (System.nanoTime() - lastProgress > STALL_TIMEOUT.toNanos()) {
						throw new IllegalStateException(
								"Could not read '" + filter.from() + "' to its end: nothing arrived for "
										+ STALL_TIMEOUT.toSeconds() + " s on " + reading);
					}
					continue;
				}
				lastProgress = System.nanoTime();
				for (ConsumerRecord<byte[], byte[]> record : records) {
					TopicPartition partition = new TopicPartition(record.topic(), record.partition());
					if (record.offset() >= Objects.requireNonNull(ends.get(partition))) {
						continue; // written after the start
					}
					if (progress.isFull()) {
						break;
					}
					progress.scanned(partition, record.offset());
					if (!owner.owns(record.topic(), record.partition(), record.offset(), record.headers())) {
						continue;
					}
					DeadLetter letter = DeadLetter.of(record);
					if (filter.matches(letter)) {
						matched++;
						newest.add(
								new Kept<>(letter.timestamp(), letter.partition(), letter.offset(), row.apply(letter)));
						if (newest.size() > limit) {
							newest.poll();
						}
					}
				}
			}
			stoppedAt = progress.isFull() ? progress.stoppedAt(reading, ends) : List.of();
		}
		List<Kept<T>> kept = new ArrayList<>(newest);
		kept.sort(Kept.OLDEST_FIRST.reversed());
		return new Page<>(kept.stream().map(Kept::row).toList(), matched, progress.scanned(), stoppedAt);
	}

	/**
	 * The dead letter at {@code offset} of {@code partition}, or {@code null} when the
	 * topic holds none there (never written, past retention, or another group's).
	 */
	public @Nullable DeadLetter read(String topic, int partition, long offset, Ownership owner) {
		try (Consumer<byte[], byte[]> consumer = this.consumers.create(this.config)) {
			TopicPartition tp = new TopicPartition(topic, partition);
			if (partition < 0 || partition >= TopicReads.partitionsOf(consumer, topic, MISSING).size()) {
				throw new IllegalArgumentException("'" + topic + "' has no partition " + partition);
			}
			consumer.assign(List.of(tp));
			long end = Objects.requireNonNull(consumer.endOffsets(List.of(tp)).get(tp));
			if (offset < 0 || offset >= end) {
				return null;
			}
			consumer.seek(tp, offset);
			long deadline = System.nanoTime() + STALL_TIMEOUT.toNanos();
			while (consumer.position(tp) <= offset && System.nanoTime() < deadline) {
				for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL_TIMEOUT)) {
					if (record.offset() == offset) {
						return owner.owns(topic, partition, offset, record.headers()) ? DeadLetter.of(record) : null;
					}
					if (record.offset() > offset) {
						return null; // compacted, an aborted transaction's, or a marker
					}
				}
			}
			return null;
		}
	}

	/** A row kept for a page, with what orders it. */
	private record Kept<T>(Instant timestamp, int partition, long offset, T row) {

		static final Comparator<Kept<?>> OLDEST_FIRST = Comparator.<Kept<?>, Instant>comparing(Kept::timestamp)
			.thenComparingInt(Kept::partition)
			.thenComparingLong(Kept::offset);

	}

	/**
	 * A page of dead letters.
	 *
	 * @param letters the rows of the newest that matched, newest first
	 * @param matched how many matched among the records read
	 * @param scanned how many records were read
	 * @param stoppedAt where the read stopped in each partition it did not read to its
	 * end, when it reached its limit first; empty when it read everything
	 */
	public record Page<T>(List<T> letters, long matched, long scanned, List<ScanPosition> stoppedAt) {

		/** Whether every record up to the end (as of the start) was read. */
		public boolean complete() {
			return this.stoppedAt.isEmpty();
		}

	}

}
