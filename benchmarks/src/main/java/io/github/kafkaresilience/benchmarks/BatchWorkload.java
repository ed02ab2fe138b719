package io.github.kafkaresilience.benchmarks;

import java.util.List;

import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * What a batch listener's method does with one call's records. Every contender of a
 * scenario runs the same batch workload, whatever calls it; it names a failed record the
 * way a {@code @KafkaListener(batch = "true")} method does, with spring-kafka's
 * {@code BatchListenerFailedException} and the record's index.
 */
@FunctionalInterface
interface BatchWorkload {

	/**
	 * Handles the records of one call.
	 * @param records the records, in the order the method got them
	 * @throws Exception to fail the call, or a record of it
	 */
	void handle(List<ConsumerRecord<byte[], byte[]>> records) throws Exception;

}
