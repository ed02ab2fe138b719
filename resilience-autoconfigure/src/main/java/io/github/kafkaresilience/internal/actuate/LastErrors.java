package io.github.kafkaresilience.internal.actuate;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.support.ConsumerClients;
import io.github.kafkaresilience.internal.support.ConsumerSettings;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The last failure of the records that held keys wait for, read from the {@code error.*}
 * headers of the stage records that carry their locks: a lock holds its failure only
 * while it moves, and the records a page shows are few. A record never changes, so what
 * was read is kept (up to {@value #KEPT} places) and a page refreshed every few seconds
 * reads only its new rows. It reads with a consumer of its own, without a group, read
 * committed.
 *
 * @since 0.1.0
 */
public class LastErrors {

	static final int KEPT = 10_000;

	private static final Duration POLL_TIMEOUT = Duration.ofMillis(200);

	private static final Duration READ_TIMEOUT = Duration.ofSeconds(5);

	/** A record without error headers: a follower, which never ran. */
	private static final LastError NONE = new LastError(null, null);

	private final ConsumerClients consumers;

	private final Map<String, Object> config;

	private final Map<Place, LastError> read = new ConcurrentHashMap<>();

	public LastErrors(ConsumerClients consumers) {
		this.consumers = consumers;
		Map<String, Object> config = ConsumerSettings.groupless(consumers.configuration(),
				"kafka-resilience-last-errors");
		config.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
		config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1);
		this.config = config;
	}

	/**
	 * The last failure of the records at {@code places}; a place that cannot be read
	 * (gone, or the read timed out) is left out.
	 */
	Map<Place, LastError> of(List<Place> places) {
		Map<Place, LastError> found = new HashMap<>();
		List<Place> missing = places.stream().filter((place) -> {
			LastError known = this.read.get(place);
			if (known != null) {
				found.put(place, known);
			}
			return known == null;
		}).toList();
		if (missing.isEmpty()) {
			return found;
		}
		if (this.read.size() + missing.size() > KEPT) {
			this.read.clear();
		}
		try (Consumer<byte[], byte[]> consumer = this.consumers.create(this.config)) {
			for (Place place : missing) {
				LastError error = read(consumer, place);
				if (error != null) {
					this.read.put(place, error);
					found.put(place, error);
				}
			}
		}
		return found;
	}

	private static @Nullable LastError read(Consumer<byte[], byte[]> consumer, Place place) {
		TopicPartition partition = new TopicPartition(place.topic(), place.partition());
		consumer.assign(List.of(partition));
		consumer.seek(partition, place.offset());
		long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
		while (System.nanoTime() < deadline) {
			for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL_TIMEOUT)) {
				if (record.offset() > place.offset()) {
					return null; // not in the log any more
				}
				if (record.offset() == place.offset()) {
					String exception = ProtocolHeaders.text(record.headers(), ProtocolHeaders.ERROR_EXCEPTION);
					return (exception == null) ? NONE : new LastError(exception,
							ProtocolHeaders.text(record.headers(), ProtocolHeaders.ERROR_MESSAGE));
				}
			}
		}
		return null;
	}

	/** Where a record is: a stage topic, a partition and an offset. */
	record Place(String topic, int partition, long offset) {
	}

	/**
	 * The exception class and message of a record's last failure; both {@code null} when
	 * it never failed.
	 */
	record LastError(@Nullable String exception, @Nullable String message) {
	}

}
