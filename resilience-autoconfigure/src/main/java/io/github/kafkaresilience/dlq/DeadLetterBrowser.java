package io.github.kafkaresilience.dlq;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

import io.github.kafkaresilience.lock.Ownership;
import io.github.kafkaresilience.support.ConsumerClients;
import io.github.kafkaresilience.support.ConsumerSettings;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Reads a dead-letter topic for an operator: the newest dead letters that match a filter (the
 * same filter a replay takes, so that what is listed is what a replay of the selection sends),
 * or one dead letter by its place. It reads with a consumer of its own, without a group and
 * read committed, from the filter's {@code since} (or the beginning) to the end as of the
 * start; dead letters of another group are not listed.
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
	 * The newest dead letters of {@code filter.from()} that match {@code filter}, newest first.
	 * @param owner the group that owns the topic: dead letters of any other are left out
	 * @param limit the most to return, 1 or more
	 */
	public Page browse(ReplayRequest filter, Ownership owner, int limit) {
		if (limit < 1) {
			throw new IllegalArgumentException("A page holds at least 1 dead letter, not " + limit);
		}
		Comparator<DeadLetter> oldestFirst = Comparator.comparing(DeadLetter::timestamp)
			.thenComparingInt(DeadLetter::partition)
			.thenComparingLong(DeadLetter::offset);
		PriorityQueue<DeadLetter> newest = new PriorityQueue<>(oldestFirst);
		long scanned = 0;
		long matched = 0;
		try (Consumer<byte[], byte[]> consumer = this.consumers.create(this.config)) {
			List<TopicPartition> partitions = TopicReads.partitionsOf(consumer, filter.from(), MISSING);
			consumer.assign(partitions);
			Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
			Set<TopicPartition> reading = TopicReads.seekSince(consumer, partitions, filter.since());
			long lastProgress = System.nanoTime();
			while (!reading.isEmpty()) {
				reading.removeIf((tp) -> consumer.position(tp) >= ends.get(tp));
				consumer.pause(partitions.stream().filter((tp) -> !reading.contains(tp)).toList());
				if (reading.isEmpty()) {
					break;
				}
				var records = consumer.poll(POLL_TIMEOUT);
				if (records.isEmpty()) {
					if (System.nanoTime() - lastProgress > STALL_TIMEOUT.toNanos()) {
						throw new IllegalStateException("Could not read '" + filter.from() + "' to its end: nothing arrived for "
								+ STALL_TIMEOUT.toSeconds() + " s on " + reading);
					}
					continue;
				}
				lastProgress = System.nanoTime();
				for (ConsumerRecord<byte[], byte[]> record : records) {
					if (record.offset() >= ends.get(new TopicPartition(record.topic(), record.partition()))) {
						continue; // written after the start
					}
					scanned++;
					if (!owner.owns(record.topic(), record.partition(), record.offset(), record.headers())) {
						continue;
					}
					DeadLetter letter = DeadLetter.of(record);
					if (filter.matches(letter)) {
						matched++;
						newest.add(letter);
						if (newest.size() > limit) {
							newest.poll();
						}
					}
				}
			}
		}
		List<DeadLetter> letters = new ArrayList<>(newest);
		letters.sort(oldestFirst.reversed());
		return new Page(letters, matched, scanned);
	}

	/**
	 * The dead letter at {@code offset} of {@code partition}, or {@code null} when the topic
	 * holds none there (never written, past retention, or another group's).
	 */
	public @Nullable DeadLetter read(String topic, int partition, long offset, Ownership owner) {
		try (Consumer<byte[], byte[]> consumer = this.consumers.create(this.config)) {
			TopicPartition tp = new TopicPartition(topic, partition);
			if (partition < 0 || partition >= TopicReads.partitionsOf(consumer, topic, MISSING).size()) {
				throw new IllegalArgumentException("'" + topic + "' has no partition " + partition);
			}
			consumer.assign(List.of(tp));
			long end = consumer.endOffsets(List.of(tp)).get(tp);
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

	/**
	 * A page of dead letters.
	 * @param letters the newest that matched, newest first
	 * @param matched how many matched in all
	 * @param scanned how many records were read
	 */
	public record Page(List<DeadLetter> letters, long matched, long scanned) {
	}

}
