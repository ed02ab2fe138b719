package io.github.kafkaresilience.ladder;

import org.apache.kafka.common.header.Headers;

/**
 * Sends a record to a retry or dead-letter topic, to an explicit partition, and returns once
 * the broker has it.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface RecordPublisher {

	/**
	 * @return the offset the broker gave the record
	 */
	long publish(String topic, int partition, byte[] key, byte[] value, Headers headers);

}
