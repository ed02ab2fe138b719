package io.github.kafkaresilience.internal.container;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import static io.github.kafkaresilience.internal.container.Records.task;
import static io.github.kafkaresilience.internal.container.Records.work;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The figures meters and the actuator endpoint read: records held and parked, the busiest
 * partition and key, a partition's depth, closed barriers and stopped partitions.
 */
class ContainerStatsTests {

	private static final TopicPartition P0 = new TopicPartition("orders", 0);

	private static final TopicPartition P1 = new TopicPartition("orders", 1);

	private final Partitions partitions = new Partitions();

	private final ContainerStats stats = new ContainerStats(this.partitions);

	private final PartitionWork p0 = work(P0, 100);

	private final PartitionWork p1 = work(P1, 100);

	ContainerStatsTests() {
		this.partitions.add(this.p0);
		this.partitions.add(this.p1);
	}

	@Test
	void loadCountsHeldAndParkedRecordsAndTheBusiestPartitionAndKey() {
		this.p0.take(task(this.p0, 0, "hot"));
		this.p0.take(task(this.p0, 1, "hot"));
		this.p0.take(task(this.p0, 2, "hot"));
		this.p0.take(task(this.p0, 3, "cold"));
		RecordTask parked = task(this.p1, 7, "far");
		this.p1.take(parked);
		this.p1.park(parked, Long.MAX_VALUE);
		RetryContainer.Load load = this.stats.load();
		assertThat(load.inFlight()).isEqualTo(4);
		assertThat(load.parked()).isEqualTo(1);
		assertThat(load.busiestPartitionInFlight()).isEqualTo(4);
		assertThat(load.busiestKeyDepth()).isEqualTo(3);
	}

	@Test
	void lagRunsFromTheFirstRecordNotDoneToTheEndOfThePartition() {
		assertThat(this.stats.lag(P0)).as("not fetched from yet").isEmpty();
		this.p0.endOffset = 50;
		this.p0.fetchLag = 50;
		assertThat(this.stats.lag(P0)).as("nothing read yet").hasValue(50);
		RecordTask first = task(this.p0, 20, "a");
		this.p0.take(first);
		this.p0.take(task(this.p0, 21, "b"));
		assertThat(this.stats.lag(P0)).hasValue(30);
		Records.done(this.p0, first);
		assertThat(this.stats.lag(P0)).hasValue(29);
		assertThat(this.stats.lag(new TopicPartition("orders", 9))).isEmpty();
	}

	@Test
	void closedBarriersAndStoppedPartitionsAreListed() {
		this.p0.barrierOpen = true;
		this.p0.stopped = "orders-0@5 refused by orders.billing.dlq: raise max.message.bytes";
		assertThat(this.stats.closedBarriers()).containsOnlyKeys(P1);
		assertThat(this.stats.stoppedPartitions()).containsOnlyKeys(P0);
	}

}
