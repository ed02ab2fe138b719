package io.github.kafkaresilience.internal.container;

import java.util.List;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import static io.github.kafkaresilience.internal.container.Records.work;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The partitions of a container's two consumers: each side sees the partitions of its own
 * topics as they are assigned and dropped, and a dropped partition is remembered where it
 * was.
 */
class PartitionsTests {

	private static final TopicPartition MAIN = new TopicPartition("orders", 0);

	private static final TopicPartition STAGE = new TopicPartition("g.orders.retry.1s", 0);

	@Test
	void eachSideSeesThePartitionsOfItsTopicsAsTheyComeAndGo() {
		Partitions partitions = new Partitions();
		PartitionWork main = work(MAIN, 10);
		partitions.add(main);
		Partitions.Side ofMain = partitions.side("orders"::equals);
		Partitions.Side ofStages = partitions.side((topic) -> !topic.equals("orders"));
		PartitionWork stage = work(STAGE, 10);
		partitions.add(stage);

		assertThat(ofMain.all()).containsExactly(main);
		assertThat(ofStages.all()).containsExactly(stage);
		assertThat(partitions.all()).containsExactlyInAnyOrder(main, stage);
		assertThat(ofStages.get(STAGE)).isSameAs(stage);
		assertThat(ofStages.get(MAIN)).isNull();

		partitions.drop(List.of(STAGE));
		assertThat(ofStages.all()).isEmpty();
		assertThat(stage.isRevoked()).isTrue();
		assertThat(partitions.takeDroppedAt(STAGE)).isEqualTo(-1);

		partitions.clear();
		assertThat(ofMain.all()).isEmpty();
		assertThat(main.isRevoked()).isTrue();
	}

}
