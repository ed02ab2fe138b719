package io.github.kafkaresilience.internal.ladder;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;

import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.internal.lock.Position;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.DlqReason;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hop carries what the protocol headers of a record's next topic say about it.
 */
class HopTests {

	private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

	private static final FailureInfo FAILURE = ProtocolHeaders.failure(new IllegalStateException("boom"), false, NOW);

	@Test
	void theHopOfAMovingLockTakesItsCountLockAndFailure() {
		Lock moving = Lock.moving("L1", Bytes.wrap(new byte[] { 1 }), 0, 7, 2, new Position(1, 4), 3, FAILURE, NOW);
		assertThat(Hop.of(moving, false)).isEqualTo(new Hop(false, 3, "L1", FAILURE));
	}

	@Test
	void aHopFailedWithAnotherFailureKeepsEverythingElse() {
		FailureInfo refused = new FailureInfo("permanent", "too large", "RecordTooLargeException", "now");
		assertThat(new Hop(true, 1, "L1", FAILURE).failedWith(refused)).isEqualTo(new Hop(true, 1, "L1", refused));
	}

	@Test
	void theHeadersOfAHopSayWhereTheRecordComesFromAndWhatItCarries() {
		Delivery record = new Delivery("orders", 3, 42, 0, "k".getBytes(StandardCharsets.UTF_8), new byte[0],
				new RecordHeaders().add("user", bytes("kept")).add("retry.count", bytes("9")));
		Headers headers = new Hop(true, 1, "L1", FAILURE).headers(record, DlqReason.EXHAUSTED,
				new Ownership("billing", true, List.of()));
		assertThat(ProtocolHeaders.text(headers, "user")).isEqualTo("kept");
		assertThat(ProtocolHeaders.text(headers, "retry.count")).isEqualTo("1");
		assertThat(ProtocolHeaders.text(headers, "original.partition")).isEqualTo("3");
		assertThat(ProtocolHeaders.text(headers, "original.offset")).isEqualTo("42");
		assertThat(ProtocolHeaders.text(headers, "previous.topic")).isEqualTo("orders");
		assertThat(ProtocolHeaders.text(headers, "lock.id")).isEqualTo("L1");
		assertThat(ProtocolHeaders.text(headers, "error.message")).isEqualTo("boom");
		assertThat(ProtocolHeaders.text(headers, "dlq.reason")).isEqualTo("exhausted");
		assertThat(ProtocolHeaders.text(headers, "owner.group")).isEqualTo("billing");
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
