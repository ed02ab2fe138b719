package io.github.kafkaresilience.internal.container;

import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.kafkaresilience.internal.container.offsets.RecordingOffsets;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.internal.ladder.Step;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Committing with the consumer ({@code compensate} mode): a step runs as it is, and the
 * offsets the listener can commit are committed by the consumer and noted as committed.
 */
class OffsetCommitterTests {

	private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);

	private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>(AutoOffsetResetStrategy.EARLIEST.name());

	private final OffsetCommitter committer = new OffsetCommitter.WithConsumer();

	@Test
	void theConsumerCommitsWhatIsCommittableAndTheBookNotesIt() {
		this.consumer.assign(List.of(ORDERS_0));
		RecordingOffsets book = new RecordingOffsets(Map.of(ORDERS_0, new OffsetAndMetadata(42)));
		this.committer.commit(this.consumer, book);
		assertThat(this.consumer.committed(Set.of(ORDERS_0))).containsEntry(ORDERS_0, new OffsetAndMetadata(42));
		assertThat(book.noted).containsExactly(Map.of(ORDERS_0, new OffsetAndMetadata(42)));
	}

	@Test
	void nothingCommittableCommitsNothing() {
		this.consumer.assign(List.of(ORDERS_0));
		RecordingOffsets book = new RecordingOffsets(Map.of());
		this.committer.commit(this.consumer, book);
		assertThat(this.consumer.committed(Set.of(ORDERS_0))).isEmpty();
		assertThat(book.noted).isEmpty();
	}

	@Test
	void aStepRunsAsItIs() {
		Delivery record = new Delivery("orders", 0, 7, 0, null, null, new RecordHeaders());
		Step waiting = Step.waitUntil(1234);
		assertThat(this.committer.runStep(record, () -> waiting, new RecordingOffsets(Map.of()))).isSameAs(waiting);
	}

}
