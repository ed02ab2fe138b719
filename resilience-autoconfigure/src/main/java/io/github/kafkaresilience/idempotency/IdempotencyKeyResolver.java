package io.github.kafkaresilience.idempotency;

import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

/**
 * Gives a record's idempotency key: records with the same key run their handler once.
 * Declare a bean of this type to replace the default for every guarded listener, or set
 * {@code idempotencyKey} on one {@code @OrderedRetryListener}.
 * <p>
 * The record is the one the listener method gets: deserialized, and read from the main
 * topic or one of its retry topics.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface IdempotencyKeyResolver {

	/**
	 * The idempotency key of a record.
	 * @param record the record, deserialized
	 * @return its key, not empty
	 */
	String keyOf(ConsumerRecord<?, ?> record);

	/**
	 * The default key: where the record was born, {@code topic/partition/offset} in its
	 * main topic. A retry carries its birthplace in the {@code original.*} headers, and
	 * so does a dead letter replayed to the main topic, so every attempt and every replay
	 * of one record share a key. On a record read from the main topic, the
	 * {@code original.*} headers are only believed when the record is a replay that names
	 * an earlier record of its own partition (see
	 * {@link ProtocolHeaders#replayedBirthplace}); otherwise its own coordinates are the
	 * key.
	 * @param mainTopic the main topic of the listener
	 * @return the resolver
	 */
	static IdempotencyKeyResolver birthplace(String mainTopic) {
		return (record) -> {
			String birthplace = record.topic().equals(mainTopic) ? ProtocolHeaders.replayedBirthplace(record.headers(),
					mainTopic, record.partition(), record.offset()) : ProtocolHeaders.origin(record.headers());
			return (birthplace != null) ? birthplace
					: record.topic() + "/" + record.partition() + "/" + record.offset();
		};
	}

	/**
	 * Whether a key is usable.
	 * @param key a key a resolver gave
	 * @return whether it has text
	 */
	static boolean isUsable(@Nullable String key) {
		return key != null && !key.isBlank();
	}

}
