package io.github.kafkaresilience.benchmarks;

import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * What a contender's handler does with one record. Every contender of a scenario runs the
 * same workload, whatever calls it.
 */
@FunctionalInterface
interface Workload {

	/**
	 * Handles one record.
	 * @param record the record
	 * @throws Exception to fail the attempt
	 */
	void handle(ConsumerRecord<byte[], byte[]> record) throws Exception;

}
