package io.github.kafkaresilience.internal.container;

import java.nio.charset.StandardCharsets;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.ladder.Step;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;

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
		return new PartitionWork(tp, new RetryContainer.Route(null, null), bound);
	}

	static RecordTask task(PartitionWork work, long offset, String key) {
		return new RecordTask(work, record(work.partition, offset, key));
	}

	/**
	 * Finishes a record of a partition, running it first if it is only queued, as a
	 * worker would.
	 */
	static @Nullable KeyedTask done(PartitionWork work, RecordTask task) {
		if (task.state() == RecordState.QUEUED) {
			work.advance(task, RecordState.RUNNING);
		}
		return work.done(task);
	}

	/** What a failed run left: its handler threw, and the rest of its step is done. */
	static RecordTask.PendingFailure failure() {
		return new RecordTask.PendingFailure(HandlerResult.failed(new IllegalStateException("handler failed")),
				Step::done);
	}

	/** A record whose handler failed: the rest of its step waits for a worker. */
	static RecordTask failing(PartitionWork work, long offset, String key) {
		RecordTask task = task(work, offset, key);
		work.advance(task, RecordState.RUNNING);
		work.failed(task, failure());
		return task;
	}

	/** The offset of a record task. */
	static long offset(KeyedTask task) {
		return ((RecordTask) task).delivery.offset();
	}

}
