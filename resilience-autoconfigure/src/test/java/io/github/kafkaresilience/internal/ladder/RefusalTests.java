package io.github.kafkaresilience.internal.ladder;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.ladder.Delivery;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a refusal as too large is told as: found among a failure's causes, the setting to
 * raise for each way a record is refused, and the messages of a record dead-lettered
 * instead of retried and of one that can go nowhere.
 */
class RefusalTests {

	private static final String STAGE_1 = "billing.orders.retry.30s";

	private static final String DLQ = "billing.orders.dlq";

	private static final RecordTooLargeException BY_THE_BROKER = new RecordTooLargeException(
			"The request included a message larger than the max message size the server will accept.");

	/** 3 bytes of key, 5 of value, and a header of 4 + 2 bytes: 14 bytes. */
	private final Delivery record = new Delivery("orders", 2, 7, 0, bytes("key"), bytes("value"),
			new RecordHeaders().add("user", bytes("me")));

	@Test
	void aRefusalIsFoundAmongTheCausesOfAFailure() {
		KafkaException wrapped = new KafkaException("send failed", new IllegalStateException("outer", BY_THE_BROKER));
		assertThat(Refusal.tooLarge(wrapped)).isSameAs(BY_THE_BROKER);
		RecordBatchTooLargeException batch = new RecordBatchTooLargeException("batch");
		assertThat(Refusal.tooLarge(batch)).isSameAs(batch);
		assertThat(Refusal.tooLarge(new KafkaException("timeout"))).isNull();
	}

	@Test
	void aCycleOfCausesWithoutARefusalEndsTheSearch() {
		IllegalStateException first = new IllegalStateException("first");
		IllegalStateException second = new IllegalStateException("second", first);
		first.initCause(second);
		assertThat(Refusal.tooLarge(first)).isNull();
	}

	@Test
	void aRefusalDeepDownAChainOfCausesIsNotLookedFor() {
		Throwable failure = BY_THE_BROKER;
		for (int i = 0; i < 20; i++) {
			failure = new KafkaException("wrapper " + i, failure);
		}
		assertThat(Refusal.tooLarge(failure)).isNull();
		assertThat(Refusal.tooLarge(failure.getCause())).isSameAs(BY_THE_BROKER);
	}

	@Test
	void aRecordIsAboutItsKeyValueAndHeadersLong() {
		assertThat(Refusal.size(this.record)).isEqualTo(14);
		Delivery empty = new Delivery("orders", 0, 0, 0, null, null, new RecordHeaders().add("tombstone", null));
		assertThat(Refusal.size(empty)).isEqualTo("tombstone".length());
	}

	@Test
	void aTopicThatRefusesIsToldWithTheCommandThatRaisesItsLimit() {
		assertThat(Refusal.fix(BY_THE_BROKER, STAGE_1, 1000)).isEqualTo("max.message.bytes of '" + STAGE_1
				+ "' (kafka-configs --bootstrap-server <broker> --alter " + "--entity-type topics --entity-name "
				+ STAGE_1 + " --add-config max.message.bytes=" + (1000 + ProtocolHeaders.HEADER_ALLOWANCE) + ")");
	}

	@Test
	void aProducerThatRefusesIsToldWithTheSettingToRaise() {
		RecordTooLargeException request = new RecordTooLargeException("The message is 2000000 bytes when serialized "
				+ "which is larger than 1048576, which is the value of the max.request.size configuration.");
		assertThat(Refusal.fix(request, STAGE_1, 1000)).isEqualTo(
				"spring.kafka.producer.properties.max.request.size to " + (1000 + ProtocolHeaders.HEADER_ALLOWANCE)
						+ " or more (the library's producers start from the application's producer settings)");
		RecordTooLargeException memory = new RecordTooLargeException("The message is 2000000 bytes when serialized "
				+ "which is larger than the total memory buffer you have configured with the buffer.memory configuration.");
		assertThat(Refusal.fix(memory, STAGE_1, 1000)).isEqualTo("spring.kafka.producer.buffer-memory above 1000");
	}

	@Test
	void aRecordARetryTopicRefusedIsToldAsDeadLetteredWithTheFixAndItsLastFailure() {
		FailureInfo last = new FailureInfo("transient", "boom", "java.lang.IllegalStateException", "then");
		Refusal refusal = new Refusal(STAGE_1, BY_THE_BROKER, new Hop(true, 1, "L1", last));
		assertThat(refusal.deadLettered(this.record, DLQ)).isEqualTo("Record orders/2/7 (about 14 bytes of key, value "
				+ "and headers) could not be published to '" + STAGE_1 + "': " + BY_THE_BROKER.getMessage()
				+ " It cannot be retried and was dead-lettered instead. Raise "
				+ Refusal.fix(BY_THE_BROKER, STAGE_1, 14) + ", then replay it from '" + DLQ
				+ "'. Its last failure: java.lang.IllegalStateException: boom");
		Refusal follower = new Refusal(STAGE_1, BY_THE_BROKER, new Hop(true, 0, "L1", null));
		assertThat(follower.deadLettered(this.record, DLQ)).endsWith("then replay it from '" + DLQ + "'");
	}

	@Test
	void aRefusedRecordIsDeadLetteredWithThePermanentFailureOfTheRefusal() {
		Refusal refusal = new Refusal(STAGE_1, BY_THE_BROKER, new Hop(true, 1, "L1", null));
		Instant now = Instant.parse("2026-01-01T00:00:00Z");
		assertThat(refusal.failure("told", now)).isEqualTo(new FailureInfo(ProtocolHeaders.PERMANENT, "told",
				RecordTooLargeException.class.getName(), "2026-01-01T00:00:00.000000000Z"));
	}

	@Test
	void aRecordTheDeadLetterTopicRefusesCanGoNowhereAndStopsItsPartition() {
		KafkaException failure = new KafkaException("send failed", BY_THE_BROKER);
		Refusal refusal = new Refusal(DLQ, BY_THE_BROKER, new Hop(true, 1, null, null));
		UnpublishableRecordException ex = refusal.unpublishable(this.record, failure);
		assertThat(ex.refusingTopic()).isEqualTo(DLQ);
		assertThat(ex).hasCause(failure)
			.hasMessage("Record orders/2/7 (about 14 bytes of key, value and headers) can be neither retried nor "
					+ "dead-lettered: '" + DLQ + "' refused it as too large (" + BY_THE_BROKER.getMessage()
					+ "). Nothing from it on in orders-2 is committed until it is published. Raise "
					+ Refusal.fix(BY_THE_BROKER, DLQ, 14) + ", then restart the instance to deliver it again");
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
