package io.github.kafkaresilience.it;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * A consumer interceptor that holds back the records of chosen topics until the test
 * opens the gate: a lock tailer that reads such a topic cannot catch up meanwhile.
 * Installed with {@code spring.kafka.consumer.properties.interceptor.classes}.
 */
public class GatedLockReads implements ConsumerInterceptor<byte[], byte[]> {

	private static final Map<String, CountDownLatch> GATES = new ConcurrentHashMap<>();

	private static final Map<String, AtomicInteger> HELD = new ConcurrentHashMap<>();

	static void close(String topic) {
		GATES.put(topic, new CountDownLatch(1));
	}

	static void open(String topic) {
		CountDownLatch gate = GATES.remove(topic);
		if (gate != null) {
			gate.countDown();
		}
	}

	/** How many polls returning records of {@code topic} have been held back so far. */
	static int held(String topic) {
		AtomicInteger count = HELD.get(topic);
		return (count != null) ? count.get() : 0;
	}

	@Override
	public ConsumerRecords<byte[], byte[]> onConsume(ConsumerRecords<byte[], byte[]> records) {
		Set<TopicPartition> partitions = records.partitions();
		for (TopicPartition partition : partitions) {
			CountDownLatch gate = GATES.get(partition.topic());
			if (gate != null) {
				HELD.computeIfAbsent(partition.topic(), (t) -> new AtomicInteger()).incrementAndGet();
				try {
					// bounded, so that a failed test never leaves a consumer stuck
					gate.await(2, TimeUnit.MINUTES);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		}
		return records;
	}

	@Override
	public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
	}

	@Override
	public void close() {
	}

	@Override
	public void configure(Map<String, ?> configs) {
	}

}
