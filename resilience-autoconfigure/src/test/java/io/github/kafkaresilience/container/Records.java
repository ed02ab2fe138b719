package io.github.kafkaresilience.container;

import java.nio.charset.StandardCharsets;

import io.github.kafkaresilience.ladder.Delivery;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;

/** Records and partitions for the container's unit tests. */
final class Records {

	static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);

	private Records() {
	}

	static Delivery record(TopicPartition tp, long offset, String key) {
		return new Delivery(tp.topic(), tp.partition(), offset, 0L, key.getBytes(StandardCharsets.UTF_8),
				("v" + offset).getBytes(StandardCharsets.UTF_8), new RecordHeaders());
	}

	/** A partition whose route the test never follows. */
	static PartitionWork work(TopicPartition tp, int bound) {
		return new PartitionWork(tp, new OrderedRetryContainer.Route(null, null), bound);
	}

	static Task task(PartitionWork work, long offset, String key) {
		return new Task(work, record(work.partition, offset, key));
	}

}
