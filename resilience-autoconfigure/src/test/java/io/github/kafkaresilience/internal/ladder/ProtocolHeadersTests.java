package io.github.kafkaresilience.internal.ladder;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;

import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.ladder.DlqReason;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The protocol headers of a hop to a retry or dead-letter topic (docs/PROTOCOL.md,
 * "Headers").
 */
class ProtocolHeadersTests {

	private static final Instant WHEN = Instant.parse("2025-03-04T05:06:07.123456789Z");

	private static final Ownership OWNER = new Ownership("billing", true, List.of());

	private static final FailureInfo TRANSIENT_FAILURE = ProtocolHeaders.failure(new IllegalStateException("boom"),
			false, WHEN);

	// --- first hop from the main topic

	@Test
	void theFirstHopRecordsWhereTheRecordWasBorn() {
		Headers headers = ProtocolHeaders.forHop(new RecordHeaders(), true, "orders", 3, 42, 1, "lock-1",
				TRANSIENT_FAILURE, null, OWNER);

		assertThat(text(headers, "original.topic")).isEqualTo("orders");
		assertThat(text(headers, "original.partition")).isEqualTo("3");
		assertThat(text(headers, "original.offset")).isEqualTo("42");
		assertThat(text(headers, "previous.topic")).isEqualTo("orders");
		assertThat(text(headers, "retry.count")).isEqualTo("1");
		assertThat(text(headers, "lock.id")).isEqualTo("lock-1");
		assertThat(text(headers, "error.class")).isEqualTo("transient");
		assertThat(text(headers, "error.message")).isEqualTo("boom");
		assertThat(text(headers, "error.exception")).isEqualTo("java.lang.IllegalStateException");
		assertThat(text(headers, "error.timestamp")).isEqualTo("2025-03-04T05:06:07.123456789Z");
		assertThat(headers.lastHeader("dlq.reason")).isNull();
	}

	@Test
	void theFirstHopDropsProtocolHeadersForgedOnTheMainRecord() {
		Headers source = headers("retry.count", "7", "original.topic", "forged", "original.partition", "99",
				"original.offset", "999", "previous.topic", "forged", "lock.id", "forged-lock", "error.class",
				"permanent", "error.message", "forged", "error.exception", "Forged", "error.timestamp", "yesterday",
				"dlq.reason", "poison", "owner.group", "shipping");

		Headers headers = ProtocolHeaders.forHop(source, true, "orders", 3, 42, 0, "lock-1", null, null, OWNER);

		assertThat(names(headers)).containsExactlyInAnyOrder("original.topic", "original.partition", "original.offset",
				"retry.count", "previous.topic", "lock.id", "owner.group");
		assertThat(text(headers, "owner.group")).isEqualTo("billing");
		assertThat(headers.headers("owner.group")).hasSize(1);
		assertThat(text(headers, "original.topic")).isEqualTo("orders");
		assertThat(text(headers, "original.partition")).isEqualTo("3");
		assertThat(text(headers, "original.offset")).isEqualTo("42");
		assertThat(text(headers, "retry.count")).isEqualTo("0");
		assertThat(text(headers, "lock.id")).isEqualTo("lock-1");
		assertThat(headers.headers("retry.count")).hasSize(1);
	}

	@Test
	void theFirstHopOfAFollowerHasNoErrorHeaders() {
		Headers headers = ProtocolHeaders.forHop(headers("error.class", "transient"), true, "orders", 0, 1, 0, "lock-1",
				null, null, OWNER);

		assertThat(headers.lastHeader("error.class")).isNull();
		assertThat(headers.lastHeader("error.message")).isNull();
		assertThat(text(headers, "retry.count")).isEqualTo("0");
	}

	@Test
	void userHeadersTravelUnchangedInOrder() {
		Headers source = new RecordHeaders();
		source.add("trace-id", "abc".getBytes(StandardCharsets.UTF_8));
		source.add("multi", new byte[] { 1 });
		source.add("multi", new byte[] { 2 });
		source.add("binary", new byte[] { 0, (byte) 0xff });
		source.add("empty", null);

		Headers fromMain = ProtocolHeaders.forHop(source, true, "orders", 0, 1, 1, "lock-1", TRANSIENT_FAILURE, null,
				OWNER);
		Headers later = ProtocolHeaders.forHop(fromMain, false, "orders.retry.30s", 0, 5, 2, "lock-1",
				TRANSIENT_FAILURE, null, OWNER);

		for (Headers headers : List.of(fromMain, later)) {
			assertThat(headers.lastHeader("trace-id").value()).isEqualTo("abc".getBytes(StandardCharsets.UTF_8));
			assertThat(headers.headers("multi")).extracting(Header::value)
				.containsExactly(new byte[] { 1 }, new byte[] { 2 });
			assertThat(headers.lastHeader("binary").value()).isEqualTo(new byte[] { 0, (byte) 0xff });
			assertThat(headers.lastHeader("empty")).isNotNull();
			assertThat(headers.lastHeader("empty").value()).isNull();
		}
	}

	@Test
	void theFirstHopKeepsReplayHeaders() {
		Headers source = headers("replay.from-dlq", "orders.dlq/2/17", "replay.timestamp",
				"2025-03-04T05:06:07.000000000Z");

		Headers headers = ProtocolHeaders.forHop(source, true, "orders", 2, 50, 1, "lock-1", TRANSIENT_FAILURE, null,
				OWNER);

		assertThat(text(headers, "replay.from-dlq")).isEqualTo("orders.dlq/2/17");
		assertThat(text(headers, "replay.timestamp")).isEqualTo("2025-03-04T05:06:07.000000000Z");
		assertThat(text(headers, "original.offset")).isEqualTo("50");
	}

	@Test
	void aReplayedDeadLetterKeepsItsBirthplaceOnItsFirstHop() {
		Headers source = headers("replay.from-dlq", "orders.dlq/2/17", "original.topic", "orders", "original.partition",
				"2", "original.offset", "7", "retry.count", "0", "lock.id", "forged-lock");

		Headers headers = ProtocolHeaders.forHop(source, true, "orders", 2, 50, 1, "lock-1", TRANSIENT_FAILURE, null,
				OWNER);

		assertThat(ProtocolHeaders.origin(headers)).isEqualTo("orders/2/7");
		assertThat(headers.headers("original.offset")).hasSize(1);
		assertThat(text(headers, "retry.count")).isEqualTo("1");
		assertThat(text(headers, "lock.id")).isEqualTo("lock-1");
		assertThat(text(headers, "previous.topic")).isEqualTo("orders");
	}

	@Test
	void aForgedBirthplaceWithoutReplayHeaderIsReplacedOnTheFirstHop() {
		Headers source = headers("original.topic", "orders", "original.partition", "2", "original.offset", "7");

		Headers headers = ProtocolHeaders.forHop(source, true, "orders", 2, 50, 1, "lock-1", TRANSIENT_FAILURE, null,
				OWNER);

		assertThat(ProtocolHeaders.origin(headers)).isEqualTo("orders/2/50");
	}

	@Test
	void aReplayHeaderNamingAnotherPartitionOrALaterRecordIsNotBelieved() {
		Headers otherPartition = headers("replay.from-dlq", "orders.dlq/1/3", "original.topic", "orders",
				"original.partition", "1", "original.offset", "7");
		Headers laterOffset = headers("replay.from-dlq", "orders.dlq/2/3", "original.topic", "orders",
				"original.partition", "2", "original.offset", "70");
		Headers otherTopic = headers("replay.from-dlq", "orders.dlq/2/3", "original.topic", "payments",
				"original.partition", "2", "original.offset", "7");

		for (Headers source : List.of(otherPartition, laterOffset, otherTopic)) {
			assertThat(ProtocolHeaders.replayedBirthplace(source, "orders", 2, 50)).isNull();
			assertThat(ProtocolHeaders.origin(
					ProtocolHeaders.forHop(source, true, "orders", 2, 50, 1, "lock-1", TRANSIENT_FAILURE, null, OWNER)))
				.isEqualTo("orders/2/50");
		}
		assertThat(ProtocolHeaders.replayedBirthplace(otherPartition, "orders", 1, 50)).isEqualTo("orders/1/7");
	}

	@Test
	void anUnreadableBirthplaceIsNoBirthplace() {
		assertThat(ProtocolHeaders
			.origin(headers("original.topic", "orders", "original.partition", "x", "original.offset", "7"))).isNull();
		assertThat(ProtocolHeaders.origin(headers("original.topic", "orders", "original.offset", "7"))).isNull();
		assertThat(ProtocolHeaders
			.origin(headers("original.topic", "orders", "original.partition", "1", "original.offset", "7")))
			.isEqualTo("orders/1/7");
	}

	@Test
	void theSourceHeadersAreNotModified() {
		Headers source = headers("retry.count", "7", "trace-id", "abc");

		ProtocolHeaders.forHop(source, true, "orders", 0, 1, 1, "lock-1", TRANSIENT_FAILURE, null, OWNER);

		assertThat(names(source)).containsExactly("retry.count", "trace-id");
		assertThat(text(source, "retry.count")).isEqualTo("7");
	}

	@Test
	void aRecordWithoutKeyHasNoLockIdHeader() {
		Headers headers = ProtocolHeaders.forHop(headers("lock.id", "forged"), true, "orders", 0, 1, 1, null,
				TRANSIENT_FAILURE, null, OWNER);

		assertThat(headers.lastHeader("lock.id")).isNull();
	}

	// --- later hops

	@Test
	void laterHopsKeepTheOriginalHeaders() {
		Headers first = ProtocolHeaders.forHop(new RecordHeaders(), true, "orders", 3, 42, 1, "lock-1",
				TRANSIENT_FAILURE, null, OWNER);

		Headers second = ProtocolHeaders.forHop(first, false, "orders.retry.30s", 3, 7, 2, "lock-1", TRANSIENT_FAILURE,
				null, OWNER);
		Headers third = ProtocolHeaders.forHop(second, false, "orders.retry.5m", 3, 9, 3, "lock-1", TRANSIENT_FAILURE,
				null, OWNER);

		assertThat(text(third, "original.topic")).isEqualTo("orders");
		assertThat(text(third, "original.partition")).isEqualTo("3");
		assertThat(text(third, "original.offset")).isEqualTo("42");
		assertThat(third.headers("original.offset")).hasSize(1);
	}

	@Test
	void laterHopsReplaceRetryCountPreviousTopicAndLockId() {
		Headers first = ProtocolHeaders.forHop(new RecordHeaders(), true, "orders", 3, 42, 1, "lock-1",
				TRANSIENT_FAILURE, null, OWNER);

		Headers second = ProtocolHeaders.forHop(first, false, "orders.retry.30s", 3, 7, 2, "lock-2", TRANSIENT_FAILURE,
				null, OWNER);

		assertThat(text(second, "retry.count")).isEqualTo("2");
		assertThat(text(second, "previous.topic")).isEqualTo("orders.retry.30s");
		assertThat(text(second, "lock.id")).isEqualTo("lock-2");
		assertThat(second.headers("retry.count")).hasSize(1);
		assertThat(second.headers("previous.topic")).hasSize(1);
		assertThat(second.headers("lock.id")).hasSize(1);
	}

	@Test
	void aForwardKeepsTheLatestErrorHeaders() {
		Headers first = ProtocolHeaders.forHop(new RecordHeaders(), true, "orders", 3, 42, 1, "lock-1",
				TRANSIENT_FAILURE, null, OWNER);

		Headers forwarded = ProtocolHeaders.forHop(first, false, "orders.retry.30s", 3, 7, 1, "lock-1", null, null,
				OWNER);

		assertThat(text(forwarded, "error.class")).isEqualTo("transient");
		assertThat(text(forwarded, "error.message")).isEqualTo("boom");
		assertThat(text(forwarded, "error.exception")).isEqualTo("java.lang.IllegalStateException");
		assertThat(text(forwarded, "error.timestamp")).isEqualTo("2025-03-04T05:06:07.123456789Z");
		assertThat(text(forwarded, "retry.count")).isEqualTo("1");
	}

	@Test
	void aNewFailureReplacesTheErrorHeaders() {
		Headers first = ProtocolHeaders.forHop(new RecordHeaders(), true, "orders", 3, 42, 1, "lock-1",
				TRANSIENT_FAILURE, null, OWNER);
		FailureInfo permanent = ProtocolHeaders.failure(new IllegalArgumentException(), true, WHEN.plusSeconds(30));

		Headers dead = ProtocolHeaders.forHop(first, false, "orders.retry.30s", 3, 7, 2, "lock-1", permanent,
				DlqReason.PERMANENT, OWNER);

		assertThat(text(dead, "error.class")).isEqualTo("permanent");
		assertThat(text(dead, "error.message")).isEmpty();
		assertThat(text(dead, "error.exception")).isEqualTo("java.lang.IllegalArgumentException");
		assertThat(text(dead, "error.timestamp")).isEqualTo("2025-03-04T05:06:37.123456789Z");
		assertThat(dead.headers("error.class")).hasSize(1);
		assertThat(dead.headers("error.message")).hasSize(1);
	}

	// --- dead letters

	@Test
	void onlyTheDeadLetterHopHasADlqReason() {
		Headers retry = ProtocolHeaders.forHop(new RecordHeaders(), true, "orders", 0, 1, 1, "lock-1",
				TRANSIENT_FAILURE, null, OWNER);
		Headers dead = ProtocolHeaders.forHop(retry, false, "orders.retry.30s", 0, 2, 2, "lock-1", TRANSIENT_FAILURE,
				DlqReason.EXHAUSTED, OWNER);

		assertThat(retry.lastHeader("dlq.reason")).isNull();
		assertThat(text(dead, "dlq.reason")).isEqualTo("exhausted");
	}

	@Test
	void aDlqReasonOnAStageRecordIsNotCarriedToTheNextStage() {
		Headers stageRecord = headers("retry.count", "1", "dlq.reason", "permanent", "original.topic", "orders");

		Headers headers = ProtocolHeaders.forHop(stageRecord, false, "orders.retry.30s", 0, 2, 2, "lock-1",
				TRANSIENT_FAILURE, null, OWNER);

		assertThat(headers.lastHeader("dlq.reason")).isNull();
	}

	@Test
	void dlqReasonsAreWrittenAsInTheProtocol() {
		assertThat(Arrays.stream(DlqReason.values()).map(DlqReason::value)).containsExactly("permanent", "exhausted",
				"poison", "operator");
		Headers headers = ProtocolHeaders.forHop(new RecordHeaders(), true, "orders", 0, 1, 0, null,
				ProtocolHeaders.failure(new RuntimeException("bad bytes"), true, WHEN), DlqReason.POISON, OWNER);
		assertThat(text(headers, "dlq.reason")).isEqualTo("poison");
	}

	// --- replays

	@Test
	void aReplayKeepsUserHeadersInOrderAndTheOriginalHeaders() {
		Headers dead = deadLetterHeaders();

		Headers replayed = ProtocolHeaders.forReplay(dead, "orders.dlq", 2, 17, WHEN, OWNER);

		assertThat(names(replayed)).containsExactly("trace-id", "original.topic", "original.partition",
				"original.offset", "multi", "multi", "empty", "retry.count", "previous.topic", "replay.from-dlq",
				"replay.timestamp", "owner.group");
		assertThat(text(replayed, "trace-id")).isEqualTo("abc");
		assertThat(replayed.headers("multi")).extracting(Header::value)
			.containsExactly(new byte[] { 1 }, new byte[] { 2 });
		assertThat(replayed.lastHeader("empty").value()).isNull();
		assertThat(text(replayed, "original.topic")).isEqualTo("orders");
		assertThat(text(replayed, "original.partition")).isEqualTo("2");
		assertThat(text(replayed, "original.offset")).isEqualTo("42");
	}

	@Test
	void aReplayStartsAgainAtRetryCountZeroWithoutTheOtherProtocolHeaders() {
		Headers replayed = ProtocolHeaders.forReplay(deadLetterHeaders(), "orders.dlq", 2, 17, WHEN, OWNER);

		assertThat(text(replayed, "retry.count")).isEqualTo("0");
		assertThat(replayed.headers("retry.count")).hasSize(1);
		assertThat(ProtocolHeaders.retryCount(replayed)).isZero();
		for (String dropped : List.of("error.class", "error.message", "error.exception", "error.timestamp", "lock.id",
				"dlq.reason")) {
			assertThat(replayed.lastHeader(dropped)).as("header '%s'", dropped).isNull();
		}
		assertThat(ProtocolHeaders.failure(replayed)).isNull();
		assertThat(text(replayed, "previous.topic")).as("it comes from the dead-letter topic").isEqualTo("orders.dlq");
		assertThat(ProtocolHeaders.isReplayEntry(replayed)).isTrue();
	}

	@Test
	void aReplayIsOwnedByTheGroupWhoseLadderItEntersWhoeverWroteTheDeadLetter() {
		Headers dead = deadLetterHeaders();
		dead.add("owner.group", "shipping".getBytes(StandardCharsets.UTF_8));

		Headers replayed = ProtocolHeaders.forReplay(dead, "orders.dlq", 2, 17, WHEN, OWNER);

		assertThat(replayed.headers("owner.group")).hasSize(1);
		assertThat(text(replayed, "owner.group")).isEqualTo("billing");
	}

	@Test
	void aRecordCarryingALockIsNoReplayEntryEvenWithReplayHeaders() {
		Headers replayed = ProtocolHeaders.forReplay(deadLetterHeaders(), "orders.dlq", 2, 17, WHEN, OWNER);

		Headers moved = ProtocolHeaders.forHop(replayed, false, "billing.orders.retry.30s", 2, 5, 1, "lock-9",
				TRANSIENT_FAILURE, null, OWNER);

		assertThat(text(moved, "replay.from-dlq")).isEqualTo("orders.dlq/2/17");
		assertThat(ProtocolHeaders.isReplayEntry(moved)).isFalse();
		assertThat(ProtocolHeaders.isReplayEntry(new RecordHeaders())).isFalse();
	}

	@Test
	void aReplayNamesTheDeadLetterAndWhenItWasReplayed() {
		Headers replayed = ProtocolHeaders.forReplay(new RecordHeaders(), "orders.dlq", 2, 17,
				Instant.parse("2025-03-04T05:06:07Z"), OWNER);

		assertThat(names(replayed)).containsExactly("retry.count", "previous.topic", "replay.from-dlq",
				"replay.timestamp", "owner.group");
		assertThat(text(replayed, "replay.from-dlq")).isEqualTo("orders.dlq/2/17");
		assertThat(text(replayed, "replay.timestamp")).isEqualTo("2025-03-04T05:06:07.000000000Z");
		assertThat(replayed.lastHeader("replay.timestamp").value())
			.isEqualTo("2025-03-04T05:06:07.000000000Z".getBytes(StandardCharsets.UTF_8));
	}

	@Test
	void aReplayOfAReplayedRecordReplacesTheEarlierReplayHeaders() {
		Headers first = ProtocolHeaders.forReplay(deadLetterHeaders(), "orders.dlq", 2, 17, WHEN, OWNER);
		Headers deadAgain = ProtocolHeaders.forHop(first, true, "orders", 2, 99, 1, "lock-2", TRANSIENT_FAILURE,
				DlqReason.EXHAUSTED, OWNER);

		Headers second = ProtocolHeaders.forReplay(deadAgain, "orders.dlq", 2, 30, WHEN.plusSeconds(60), OWNER);

		assertThat(second.headers("replay.from-dlq")).hasSize(1);
		assertThat(second.headers("replay.timestamp")).hasSize(1);
		assertThat(text(second, "replay.from-dlq")).isEqualTo("orders.dlq/2/30");
		assertThat(text(second, "replay.timestamp")).isEqualTo("2025-03-04T05:07:07.123456789Z");
		// the record keeps the birthplace of its first attempt through every replay
		assertThat(ProtocolHeaders.origin(second)).isEqualTo(ProtocolHeaders.origin(deadLetterHeaders()));
		assertThat(second.headers("original.offset")).hasSize(1);
		assertThat(text(second, "trace-id")).isEqualTo("abc");
	}

	@Test
	void aReplayDoesNotModifyTheDeadLettersHeaders() {
		Headers dead = deadLetterHeaders();
		List<String> before = names(dead);

		ProtocolHeaders.forReplay(dead, "orders.dlq", 2, 17, WHEN, OWNER);

		assertThat(names(dead)).isEqualTo(before);
		assertThat(text(dead, "retry.count")).isEqualTo("3");
	}

	/**
	 * The headers of a dead letter as the ladder writes them, with the user's headers
	 * among them.
	 */
	private static Headers deadLetterHeaders() {
		Headers headers = new RecordHeaders();
		headers.add("trace-id", "abc".getBytes(StandardCharsets.UTF_8));
		headers.add("original.topic", "orders".getBytes(StandardCharsets.UTF_8));
		headers.add("original.partition", "2".getBytes(StandardCharsets.UTF_8));
		headers.add("original.offset", "42".getBytes(StandardCharsets.UTF_8));
		headers.add("multi", new byte[] { 1 });
		headers.add("retry.count", "3".getBytes(StandardCharsets.UTF_8));
		headers.add("previous.topic", "orders.retry.5m".getBytes(StandardCharsets.UTF_8));
		headers.add("lock.id", "lock-1".getBytes(StandardCharsets.UTF_8));
		headers.add("multi", new byte[] { 2 });
		headers.add("error.class", "transient".getBytes(StandardCharsets.UTF_8));
		headers.add("error.message", "boom".getBytes(StandardCharsets.UTF_8));
		headers.add("error.exception", "java.lang.IllegalStateException".getBytes(StandardCharsets.UTF_8));
		headers.add("error.timestamp", "2025-03-04T05:06:07.123456789Z".getBytes(StandardCharsets.UTF_8));
		headers.add("dlq.reason", "exhausted".getBytes(StandardCharsets.UTF_8));
		headers.add("replay.from-dlq", "orders.dlq/0/1".getBytes(StandardCharsets.UTF_8));
		headers.add("replay.timestamp", "2020-01-01T00:00:00.000000000Z".getBytes(StandardCharsets.UTF_8));
		headers.add("empty", null);
		return headers;
	}

	// --- failures and timestamps

	@Test
	void aFailureIsDescribedByItsClassMessageAndTime() {
		FailureInfo failure = ProtocolHeaders.failure(new IllegalStateException("boom"), true, WHEN);

		assertThat(failure.errorClass()).isEqualTo("permanent");
		assertThat(failure.message()).isEqualTo("boom");
		assertThat(failure.exception()).isEqualTo("java.lang.IllegalStateException");
		assertThat(failure.timestamp()).isEqualTo("2025-03-04T05:06:07.123456789Z");
	}

	@Test
	void timestampsAreRfc3339UtcWithNineFractionDigits() {
		assertThat(timestamp(Instant.parse("2025-03-04T05:06:07Z"))).isEqualTo("2025-03-04T05:06:07.000000000Z");
		assertThat(timestamp(Instant.parse("2025-03-04T05:06:07.5Z"))).isEqualTo("2025-03-04T05:06:07.500000000Z");
		assertThat(timestamp(Instant.parse("2025-03-04T05:06:07.000000001Z")))
			.isEqualTo("2025-03-04T05:06:07.000000001Z");
		Instant inAnotherZone = OffsetDateTime.of(2025, 3, 4, 23, 30, 0, 0, ZoneOffset.ofHours(-5)).toInstant();
		assertThat(timestamp(inAnotherZone)).isEqualTo("2025-03-05T04:30:00.000000000Z");
		assertThat(timestamp(Instant.EPOCH)).isEqualTo("1970-01-01T00:00:00.000000000Z");
	}

	@Test
	void aTimestampParsesBackToTheSameInstant() {
		Instant when = Instant.parse("2025-12-31T23:59:59.987654321Z");

		assertThat(Instant.parse(timestamp(when))).isEqualTo(when);
		assertThat(OffsetDateTime.parse(timestamp(when)).getOffset()).isEqualTo(ZoneOffset.UTC);
	}

	@Test
	void failureIsReadBackFromTheErrorHeaders() {
		Headers headers = ProtocolHeaders.forHop(new RecordHeaders(), true, "orders", 0, 1, 1, "lock-1",
				TRANSIENT_FAILURE, null, OWNER);

		assertThat(ProtocolHeaders.failure(headers)).isEqualTo(TRANSIENT_FAILURE);
		assertThat(ProtocolHeaders.failure(new RecordHeaders())).isNull();
	}

	// --- reading

	@Test
	void retryCountIsReadFromTheHeaders() {
		assertThat(ProtocolHeaders.retryCount(headers("retry.count", "0"))).isZero();
		assertThat(ProtocolHeaders.retryCount(headers("retry.count", "3"))).isEqualTo(3);
		assertThat(ProtocolHeaders.retryCount(headers("retry.count", " 4 "))).isEqualTo(4);
		assertThat(ProtocolHeaders.retryCount(headers("retry.count", "1", "retry.count", "2"))).isEqualTo(2);
	}

	@Test
	void aMissingOrUnreadableRetryCountIsNull() {
		assertThat(ProtocolHeaders.retryCount(new RecordHeaders())).isNull();
		assertThat(ProtocolHeaders.retryCount(headers("retry.count", ""))).isNull();
		assertThat(ProtocolHeaders.retryCount(headers("retry.count", "abc"))).isNull();
		assertThat(ProtocolHeaders.retryCount(headers("retry.count", "-1"))).isNull();
		assertThat(ProtocolHeaders.retryCount(headers("retry.count", "1.5"))).isNull();
		assertThat(ProtocolHeaders.retryCount(headers("retry.count", "99999999999"))).isNull();
		Headers nullValue = new RecordHeaders();
		nullValue.add("retry.count", null);
		assertThat(ProtocolHeaders.retryCount(nullValue)).isNull();
		Headers binary = new RecordHeaders();
		binary.add("retry.count", new byte[] { 0, 0, 0, 1 });
		assertThat(ProtocolHeaders.retryCount(binary)).isNull();
	}

	@Test
	void textReadsTheLastHeaderAsUtf8() {
		assertThat(ProtocolHeaders.text(headers("x", "first", "x", "dernière"), "x")).isEqualTo("dernière");
		assertThat(ProtocolHeaders.text(new RecordHeaders(), "x")).isNull();
	}

	private static String timestamp(Instant when) {
		return ProtocolHeaders.failure(new RuntimeException(), false, when).timestamp();
	}

	private static Headers headers(String... namesAndValues) {
		Headers headers = new RecordHeaders();
		for (int i = 0; i < namesAndValues.length; i += 2) {
			headers.add(namesAndValues[i], namesAndValues[i + 1].getBytes(StandardCharsets.UTF_8));
		}
		return headers;
	}

	private static List<String> names(Headers headers) {
		return Arrays.stream(headers.toArray()).map(Header::key).toList();
	}

	private static String text(Headers headers, String name) {
		Header header = headers.lastHeader(name);
		assertThat(header).as("header '%s'", name).isNotNull();
		return new String(header.value(), StandardCharsets.UTF_8);
	}

}
