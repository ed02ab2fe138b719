package io.github.kafkaresilience.ladder;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;

import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.internal.lock.Ownership;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The protocol headers of a hop to a retry or dead-letter topic (docs/PROTOCOL.md,
 * "Headers").
 */
class RetryHeadersTests {

	private static final Instant WHEN = Instant.parse("2025-03-04T05:06:07.123456789Z");

	private static final Ownership OWNER = new Ownership("billing", true, List.of());

	private static final FailureInfo TRANSIENT_FAILURE = RetryHeaders.failure(new IllegalStateException("boom"), false,
			WHEN);

	// --- first hop from the main topic

	@Test
	void theFirstHopRecordsWhereTheRecordWasBorn() {
		Headers headers = RetryHeaders.forHop(new RecordHeaders(), true, "orders", 3, 42, 1, "lock-1",
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

		Headers headers = RetryHeaders.forHop(source, true, "orders", 3, 42, 0, "lock-1", null, null, OWNER);

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
		Headers headers = RetryHeaders.forHop(headers("error.class", "transient"), true, "orders", 0, 1, 0, "lock-1",
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

		Headers fromMain = RetryHeaders.forHop(source, true, "orders", 0, 1, 1, "lock-1", TRANSIENT_FAILURE, null,
				OWNER);
		Headers later = RetryHeaders.forHop(fromMain, false, "orders.retry.30s", 0, 5, 2, "lock-1", TRANSIENT_FAILURE,
				null, OWNER);

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

		Headers headers = RetryHeaders.forHop(source, true, "orders", 2, 50, 1, "lock-1", TRANSIENT_FAILURE, null,
				OWNER);

		assertThat(text(headers, "replay.from-dlq")).isEqualTo("orders.dlq/2/17");
		assertThat(text(headers, "replay.timestamp")).isEqualTo("2025-03-04T05:06:07.000000000Z");
		assertThat(text(headers, "original.offset")).isEqualTo("50");
	}

	@Test
	void aReplayedDeadLetterKeepsItsBirthplaceOnItsFirstHop() {
		Headers source = headers("replay.from-dlq", "orders.dlq/2/17", "original.topic", "orders", "original.partition",
				"2", "original.offset", "7", "retry.count", "0", "lock.id", "forged-lock");

		Headers headers = RetryHeaders.forHop(source, true, "orders", 2, 50, 1, "lock-1", TRANSIENT_FAILURE, null,
				OWNER);

		assertThat(RetryHeaders.origin(headers)).isEqualTo("orders/2/7");
		assertThat(headers.headers("original.offset")).hasSize(1);
		assertThat(text(headers, "retry.count")).isEqualTo("1");
		assertThat(text(headers, "lock.id")).isEqualTo("lock-1");
		assertThat(text(headers, "previous.topic")).isEqualTo("orders");
	}

	@Test
	void aForgedBirthplaceWithoutReplayHeaderIsReplacedOnTheFirstHop() {
		Headers source = headers("original.topic", "orders", "original.partition", "2", "original.offset", "7");

		Headers headers = RetryHeaders.forHop(source, true, "orders", 2, 50, 1, "lock-1", TRANSIENT_FAILURE, null,
				OWNER);

		assertThat(RetryHeaders.origin(headers)).isEqualTo("orders/2/50");
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
			assertThat(RetryHeaders.replayedBirthplace(source, "orders", 2, 50)).isNull();
			assertThat(RetryHeaders.origin(
					RetryHeaders.forHop(source, true, "orders", 2, 50, 1, "lock-1", TRANSIENT_FAILURE, null, OWNER)))
				.isEqualTo("orders/2/50");
		}
		assertThat(RetryHeaders.replayedBirthplace(otherPartition, "orders", 1, 50)).isEqualTo("orders/1/7");
	}

	@Test
	void anUnreadableBirthplaceIsNoBirthplace() {
		assertThat(RetryHeaders
			.origin(headers("original.topic", "orders", "original.partition", "x", "original.offset", "7"))).isNull();
		assertThat(RetryHeaders.origin(headers("original.topic", "orders", "original.offset", "7"))).isNull();
		assertThat(RetryHeaders
			.origin(headers("original.topic", "orders", "original.partition", "1", "original.offset", "7")))
			.isEqualTo("orders/1/7");
	}

	@Test
	void theSourceHeadersAreNotModified() {
		Headers source = headers("retry.count", "7", "trace-id", "abc");

		RetryHeaders.forHop(source, true, "orders", 0, 1, 1, "lock-1", TRANSIENT_FAILURE, null, OWNER);

		assertThat(names(source)).containsExactly("retry.count", "trace-id");
		assertThat(text(source, "retry.count")).isEqualTo("7");
	}

	@Test
	void aRecordWithoutKeyHasNoLockIdHeader() {
		Headers headers = RetryHeaders.forHop(headers("lock.id", "forged"), true, "orders", 0, 1, 1, null,
				TRANSIENT_FAILURE, null, OWNER);

		assertThat(headers.lastHeader("lock.id")).isNull();
	}

	// --- later hops

	@Test
	void laterHopsKeepTheOriginalHeaders() {
		Headers first = RetryHeaders.forHop(new RecordHeaders(), true, "orders", 3, 42, 1, "lock-1", TRANSIENT_FAILURE,
				null, OWNER);

		Headers second = RetryHeaders.forHop(first, false, "orders.retry.30s", 3, 7, 2, "lock-1", TRANSIENT_FAILURE,
				null, OWNER);
		Headers third = RetryHeaders.forHop(second, false, "orders.retry.5m", 3, 9, 3, "lock-1", TRANSIENT_FAILURE,
				null, OWNER);

		assertThat(text(third, "original.topic")).isEqualTo("orders");
		assertThat(text(third, "original.partition")).isEqualTo("3");
		assertThat(text(third, "original.offset")).isEqualTo("42");
		assertThat(third.headers("original.offset")).hasSize(1);
	}

	@Test
	void laterHopsReplaceRetryCountPreviousTopicAndLockId() {
		Headers first = RetryHeaders.forHop(new RecordHeaders(), true, "orders", 3, 42, 1, "lock-1", TRANSIENT_FAILURE,
				null, OWNER);

		Headers second = RetryHeaders.forHop(first, false, "orders.retry.30s", 3, 7, 2, "lock-2", TRANSIENT_FAILURE,
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
		Headers first = RetryHeaders.forHop(new RecordHeaders(), true, "orders", 3, 42, 1, "lock-1", TRANSIENT_FAILURE,
				null, OWNER);

		Headers forwarded = RetryHeaders.forHop(first, false, "orders.retry.30s", 3, 7, 1, "lock-1", null, null, OWNER);

		assertThat(text(forwarded, "error.class")).isEqualTo("transient");
		assertThat(text(forwarded, "error.message")).isEqualTo("boom");
		assertThat(text(forwarded, "error.exception")).isEqualTo("java.lang.IllegalStateException");
		assertThat(text(forwarded, "error.timestamp")).isEqualTo("2025-03-04T05:06:07.123456789Z");
		assertThat(text(forwarded, "retry.count")).isEqualTo("1");
	}

	@Test
	void aNewFailureReplacesTheErrorHeaders() {
		Headers first = RetryHeaders.forHop(new RecordHeaders(), true, "orders", 3, 42, 1, "lock-1", TRANSIENT_FAILURE,
				null, OWNER);
		FailureInfo permanent = RetryHeaders.failure(new IllegalArgumentException(), true, WHEN.plusSeconds(30));

		Headers dead = RetryHeaders.forHop(first, false, "orders.retry.30s", 3, 7, 2, "lock-1", permanent,
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
		Headers retry = RetryHeaders.forHop(new RecordHeaders(), true, "orders", 0, 1, 1, "lock-1", TRANSIENT_FAILURE,
				null, OWNER);
		Headers dead = RetryHeaders.forHop(retry, false, "orders.retry.30s", 0, 2, 2, "lock-1", TRANSIENT_FAILURE,
				DlqReason.EXHAUSTED, OWNER);

		assertThat(retry.lastHeader("dlq.reason")).isNull();
		assertThat(text(dead, "dlq.reason")).isEqualTo("exhausted");
	}

	@Test
	void aDlqReasonOnAStageRecordIsNotCarriedToTheNextStage() {
		Headers stageRecord = headers("retry.count", "1", "dlq.reason", "permanent", "original.topic", "orders");

		Headers headers = RetryHeaders.forHop(stageRecord, false, "orders.retry.30s", 0, 2, 2, "lock-1",
				TRANSIENT_FAILURE, null, OWNER);

		assertThat(headers.lastHeader("dlq.reason")).isNull();
	}

	@Test
	void dlqReasonsAreWrittenAsInTheProtocol() {
		assertThat(Arrays.stream(DlqReason.values()).map(DlqReason::value)).containsExactly("permanent", "exhausted",
				"poison", "operator");
		Headers headers = RetryHeaders.forHop(new RecordHeaders(), true, "orders", 0, 1, 0, null,
				RetryHeaders.failure(new RuntimeException("bad bytes"), true, WHEN), DlqReason.POISON, OWNER);
		assertThat(text(headers, "dlq.reason")).isEqualTo("poison");
	}

	// --- replays

	@Test
	void aReplayKeepsUserHeadersInOrderAndTheOriginalHeaders() {
		Headers dead = deadLetterHeaders();

		Headers replayed = RetryHeaders.forReplay(dead, "orders.dlq", 2, 17, WHEN, OWNER);

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
		Headers replayed = RetryHeaders.forReplay(deadLetterHeaders(), "orders.dlq", 2, 17, WHEN, OWNER);

		assertThat(text(replayed, "retry.count")).isEqualTo("0");
		assertThat(replayed.headers("retry.count")).hasSize(1);
		assertThat(RetryHeaders.retryCount(replayed)).isZero();
		for (String dropped : List.of("error.class", "error.message", "error.exception", "error.timestamp", "lock.id",
				"dlq.reason")) {
			assertThat(replayed.lastHeader(dropped)).as("header '%s'", dropped).isNull();
		}
		assertThat(RetryHeaders.failure(replayed)).isNull();
		assertThat(text(replayed, "previous.topic")).as("it comes from the dead-letter topic").isEqualTo("orders.dlq");
		assertThat(RetryHeaders.isReplayEntry(replayed)).isTrue();
	}

	@Test
	void aReplayIsOwnedByTheGroupWhoseLadderItEntersWhoeverWroteTheDeadLetter() {
		Headers dead = deadLetterHeaders();
		dead.add("owner.group", "shipping".getBytes(StandardCharsets.UTF_8));

		Headers replayed = RetryHeaders.forReplay(dead, "orders.dlq", 2, 17, WHEN, OWNER);

		assertThat(replayed.headers("owner.group")).hasSize(1);
		assertThat(text(replayed, "owner.group")).isEqualTo("billing");
	}

	@Test
	void aRecordCarryingALockIsNoReplayEntryEvenWithReplayHeaders() {
		Headers replayed = RetryHeaders.forReplay(deadLetterHeaders(), "orders.dlq", 2, 17, WHEN, OWNER);

		Headers moved = RetryHeaders.forHop(replayed, false, "billing.orders.retry.30s", 2, 5, 1, "lock-9",
				TRANSIENT_FAILURE, null, OWNER);

		assertThat(text(moved, "replay.from-dlq")).isEqualTo("orders.dlq/2/17");
		assertThat(RetryHeaders.isReplayEntry(moved)).isFalse();
		assertThat(RetryHeaders.isReplayEntry(new RecordHeaders())).isFalse();
	}

	@Test
	void aReplayNamesTheDeadLetterAndWhenItWasReplayed() {
		Headers replayed = RetryHeaders.forReplay(new RecordHeaders(), "orders.dlq", 2, 17,
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
		Headers first = RetryHeaders.forReplay(deadLetterHeaders(), "orders.dlq", 2, 17, WHEN, OWNER);
		Headers deadAgain = RetryHeaders.forHop(first, true, "orders", 2, 99, 1, "lock-2", TRANSIENT_FAILURE,
				DlqReason.EXHAUSTED, OWNER);

		Headers second = RetryHeaders.forReplay(deadAgain, "orders.dlq", 2, 30, WHEN.plusSeconds(60), OWNER);

		assertThat(second.headers("replay.from-dlq")).hasSize(1);
		assertThat(second.headers("replay.timestamp")).hasSize(1);
		assertThat(text(second, "replay.from-dlq")).isEqualTo("orders.dlq/2/30");
		assertThat(text(second, "replay.timestamp")).isEqualTo("2025-03-04T05:07:07.123456789Z");
		// the record keeps the birthplace of its first attempt through every replay
		assertThat(RetryHeaders.origin(second)).isEqualTo(RetryHeaders.origin(deadLetterHeaders()));
		assertThat(second.headers("original.offset")).hasSize(1);
		assertThat(text(second, "trace-id")).isEqualTo("abc");
	}

	@Test
	void aReplayDoesNotModifyTheDeadLettersHeaders() {
		Headers dead = deadLetterHeaders();
		List<String> before = names(dead);

		RetryHeaders.forReplay(dead, "orders.dlq", 2, 17, WHEN, OWNER);

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
		FailureInfo failure = RetryHeaders.failure(new IllegalStateException("boom"), true, WHEN);

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
		Headers headers = RetryHeaders.forHop(new RecordHeaders(), true, "orders", 0, 1, 1, "lock-1", TRANSIENT_FAILURE,
				null, OWNER);

		assertThat(RetryHeaders.failure(headers)).isEqualTo(TRANSIENT_FAILURE);
		assertThat(RetryHeaders.failure(new RecordHeaders())).isNull();
	}

	// --- reading

	@Test
	void retryCountIsReadFromTheHeaders() {
		assertThat(RetryHeaders.retryCount(headers("retry.count", "0"))).isZero();
		assertThat(RetryHeaders.retryCount(headers("retry.count", "3"))).isEqualTo(3);
		assertThat(RetryHeaders.retryCount(headers("retry.count", " 4 "))).isEqualTo(4);
		assertThat(RetryHeaders.retryCount(headers("retry.count", "1", "retry.count", "2"))).isEqualTo(2);
	}

	@Test
	void aMissingOrUnreadableRetryCountIsNull() {
		assertThat(RetryHeaders.retryCount(new RecordHeaders())).isNull();
		assertThat(RetryHeaders.retryCount(headers("retry.count", ""))).isNull();
		assertThat(RetryHeaders.retryCount(headers("retry.count", "abc"))).isNull();
		assertThat(RetryHeaders.retryCount(headers("retry.count", "-1"))).isNull();
		assertThat(RetryHeaders.retryCount(headers("retry.count", "1.5"))).isNull();
		assertThat(RetryHeaders.retryCount(headers("retry.count", "99999999999"))).isNull();
		Headers nullValue = new RecordHeaders();
		nullValue.add("retry.count", null);
		assertThat(RetryHeaders.retryCount(nullValue)).isNull();
		Headers binary = new RecordHeaders();
		binary.add("retry.count", new byte[] { 0, 0, 0, 1 });
		assertThat(RetryHeaders.retryCount(binary)).isNull();
	}

	@Test
	void textReadsTheLastHeaderAsUtf8() {
		assertThat(RetryHeaders.text(headers("x", "first", "x", "dernière"), "x")).isEqualTo("dernière");
		assertThat(RetryHeaders.text(new RecordHeaders(), "x")).isNull();
	}

	private static String timestamp(Instant when) {
		return RetryHeaders.failure(new RuntimeException(), false, when).timestamp();
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
