package io.github.kafkaresilience.internal.lock;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;

import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The lock record format (docs/PROTOCOL.md, "Lock records"): key, headers and versioned
 * value.
 */
class LockCodecTests {

	private static final Instant NOW = Instant.parse("2025-03-04T05:06:07.123456789Z");

	private static final Bytes KEY = Bytes.wrap(new byte[] { 0, 'k', (byte) 0xff, -1 });

	private static final Ownership OWNER = new Ownership("billing", true, List.of());

	private static final Headers HEADERS = LockCodec.headers(KEY, "node-1", OWNER);

	private static final JsonMapper MAPPER = JsonMapper.builder().build();

	@Test
	void aMovingLockSurvivesARoundTrip() {
		Lock lock = Lock.moving("L", KEY, 3, 42, 1, new Position(0, 42), 1, null, NOW);

		assertThat(roundTrip(lock)).isEqualTo(lock);
	}

	@Test
	void aReplaysPendingLockHasNoOriginOffsetAndSurvivesARoundTrip() throws Exception {
		Lock pending = Lock.pendingReplay("R", KEY, 2, 17, NOW);

		JsonNode origin = MAPPER.readTree(LockCodec.encode(pending)).path("origin");

		assertThat(origin.has("offset")).isFalse();
		assertThat(origin.path("replay").asLong()).isEqualTo(17);
		Lock decoded = roundTrip(pending);
		assertThat(decoded).isEqualTo(pending);
		assertThat(decoded.isPending()).isTrue();
		assertThat(decoded.position()).isEqualTo(new Position(1, 17));
	}

	@Test
	void anAdmittedReplaysLockKeepsItsEntryThroughMoves() throws Exception {
		Lock admitted = Lock.pendingReplay("R", KEY, 2, 17, NOW).admittedAfter(40, NOW.plusSeconds(1));
		Lock moving = admitted.moveTo(2, new Position(1, 17), 1, null, NOW.plusSeconds(2));

		JsonNode origin = MAPPER.readTree(LockCodec.encode(moving)).path("origin");

		assertThat(origin.path("offset").asLong()).isEqualTo(40);
		assertThat(origin.path("replay").asLong()).isEqualTo(17);
		assertThat(roundTrip(admitted)).isEqualTo(admitted);
		assertThat(roundTrip(moving)).isEqualTo(moving);
		assertThat(roundTrip(moving).entry()).isEqualTo(17);
		assertThat(roundTrip(moving).isPending()).isFalse();
	}

	@Test
	void aMovingLockWithItsFailureSurvivesARoundTrip() {
		FailureInfo failure = new FailureInfo("transient", "Boom: \"quoted\" ünïcödé\nsecond line",
				"java.lang.IllegalStateException", "2025-03-04T05:06:07.123456789Z");
		Lock lock = Lock.moving("L", KEY, 3, 42, 2, new Position(1, 17), 2, failure, NOW);

		Lock decoded = roundTrip(lock);

		assertThat(decoded).isEqualTo(lock);
		assertThat(decoded.failure()).isEqualTo(failure);
	}

	@Test
	void aFailureWithAnEmptyMessageSurvivesARoundTrip() {
		FailureInfo failure = new FailureInfo("permanent", "", "com.example.Bad", "2025-03-04T05:06:07.000000000Z");
		Lock lock = Lock.moving("L", KEY, 0, 0, 1, new Position(0, 0), 1, failure, NOW);

		assertThat(roundTrip(lock)).isEqualTo(lock);
	}

	@Test
	void aConfirmedLockSurvivesARoundTrip() {
		Lock lock = Lock.moving("L", KEY, 3, 42, 2, new Position(1, 17), 2, null, NOW).confirmedAt(99, NOW);

		Lock decoded = roundTrip(lock);

		assertThat(decoded).isEqualTo(lock);
		assertThat(decoded.isMoving()).isFalse();
		assertThat(decoded.position()).isEqualTo(new Position(2, 99));
		assertThat(decoded.from()).isNull();
	}

	@Test
	void largeOffsetsSurviveARoundTrip() {
		Lock lock = new Lock("L", KEY, Integer.MAX_VALUE, Long.MAX_VALUE - 1, 7, Long.MAX_VALUE, null,
				Integer.MAX_VALUE, null, NOW);

		assertThat(roundTrip(lock)).isEqualTo(lock);
	}

	@Test
	void theValueIsAVersionedDocumentWithOriginStageAtAndTime() {
		Lock lock = Lock.moving("L", KEY, 3, 42, 2, new Position(1, 17), 2, null, NOW).confirmedAt(99, NOW);

		JsonNode doc = MAPPER.readTree(LockCodec.encode(lock));

		assertThat(doc.path("v").intValue()).isEqualTo(LockCodec.VERSION);
		assertThat(doc.path("origin").path("partition").intValue()).isEqualTo(3);
		assertThat(doc.path("origin").path("offset").longValue()).isEqualTo(42);
		assertThat(doc.path("stage").intValue()).isEqualTo(2);
		assertThat(doc.path("at").longValue()).isEqualTo(99);
		assertThat(doc.has("from")).isFalse();
		assertThat(doc.path("updated").asString()).isEqualTo(NOW.toString());
	}

	@Test
	void aMovingLockHasFromButNoAt() {
		Lock lock = Lock.moving("L", KEY, 3, 42, 2, new Position(1, 17), 2, null, NOW);

		JsonNode doc = MAPPER.readTree(LockCodec.encode(lock));

		assertThat(doc.has("at")).isFalse();
		assertThat(doc.path("from").path("stage").intValue()).isEqualTo(1);
		assertThat(doc.path("from").path("offset").longValue()).isEqualTo(17);
	}

	@Test
	void theRecordKeyIsTheLockIdInUtf8() {
		String id = "6f1c0c1e-8d2b-4c3a-9e1f-0a1b2c3d4e5f";

		assertThat(LockCodec.encodeId(id)).isEqualTo(id.getBytes(StandardCharsets.UTF_8));
		assertThat(LockCodec.decodeId(LockCodec.encodeId(id))).isEqualTo(id);
	}

	@Test
	void theHeadersHoldTheRawBusinessKeyTheCoordinatorIdAndTheOwningGroup() {
		Headers headers = LockCodec.headers(KEY, "pod-7", OWNER);

		assertThat(headers.lastHeader("business-key").value()).isEqualTo(KEY.get());
		assertThat(new String(headers.lastHeader("x-coordinator-id").value(), StandardCharsets.UTF_8))
			.isEqualTo("pod-7");
		assertThat(new String(headers.lastHeader("owner.group").value(), StandardCharsets.UTF_8)).isEqualTo("billing");
		assertThat(headers.toArray()).hasSize(3);
		assertThat(LockCodec.businessKey(headers)).isEqualTo(KEY);
	}

	@Test
	void theBusinessKeyIsReadFromTheHeaders() {
		Lock lock = Lock.moving("L", KEY, 3, 42, 1, new Position(0, 42), 0, null, NOW);

		Lock decoded = LockCodec.decode("L", LockCodec.headers(KEY, "someone-else", OWNER), LockCodec.encode(lock));

		assertThat(decoded.key()).isEqualTo(KEY);
		assertThat(decoded.id()).isEqualTo("L");
	}

	@Test
	void aRecordWithoutAnUpdatedTimeIsReadAsOfTheEpoch() {
		Lock decoded = LockCodec.decode("L", HEADERS,
				json("{\"v\":1,\"origin\":{\"partition\":0,\"offset\":5},\"stage\":1,\"at\":3,\"retryCount\":1}"));

		assertThat(decoded.updated()).isEqualTo(Instant.EPOCH);
		assertThat(decoded.position()).isEqualTo(new Position(1, 3));
	}

	@Test
	void unknownFieldsAreIgnored() {
		Lock decoded = LockCodec.decode("L", HEADERS, json("{\"v\":1,\"origin\":{\"partition\":0,\"offset\":5},"
				+ "\"stage\":1,\"at\":3,\"retryCount\":1,\"future\":{\"x\":true}}"));

		assertThat(decoded.originOffset()).isEqualTo(5);
	}

	@Test
	void aValueThatIsNotJsonIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> LockCodec.decode("L", HEADERS, json("{not json")))
			.withMessageContaining("'L'")
			.withMessageContaining("not JSON");
	}

	@Test
	void anEmptyValueIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> LockCodec.decode("L", HEADERS, new byte[0]))
			.withMessageContaining("'L'");
	}

	@Test
	void aJsonValueThatIsNotAnObjectIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> LockCodec.decode("L", HEADERS, json("[1,2,3]")))
			.withMessageContaining("'L'")
			.withMessageContaining("'v'");
	}

	@Test
	void anUnknownVersionIsRejectedWithTheFix() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockCodec.decode("L", HEADERS,
					json("{\"v\":2,\"origin\":{\"partition\":0,\"offset\":5},\"stage\":1,\"at\":3,\"retryCount\":1}")))
			.withMessageContaining("'L'")
			.withMessageContaining("version 2")
			.withMessageContaining("upgrade");
	}

	@Test
	void aMissingVersionIsRejected() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockCodec.decode("L", HEADERS,
					json("{\"origin\":{\"partition\":0,\"offset\":5},\"stage\":1,\"at\":3,\"retryCount\":1}")))
			.withMessageContaining("'v'");
	}

	@Test
	void aRecordWithoutTheBusinessKeyHeaderIsRejected() {
		Headers headers = new RecordHeaders();
		headers.add("x-coordinator-id", "node-1".getBytes(StandardCharsets.UTF_8));
		byte[] value = LockCodec.encode(Lock.moving("L", KEY, 0, 5, 1, new Position(0, 5), 1, null, NOW));

		assertThatIllegalArgumentException().isThrownBy(() -> LockCodec.decode("L", headers, value))
			.withMessageContaining("'L'")
			.withMessageContaining("'business-key'");
	}

	@Test
	void aBusinessKeyHeaderWithoutValueIsRejected() {
		Headers headers = new RecordHeaders();
		headers.add("business-key", null);
		byte[] value = LockCodec.encode(Lock.moving("L", KEY, 0, 5, 1, new Position(0, 5), 1, null, NOW));

		assertThatIllegalArgumentException().isThrownBy(() -> LockCodec.decode("L", headers, value))
			.withMessageContaining("'business-key'");
	}

	@Test
	void aMissingStageIsRejected() {
		assertMissing("{\"v\":1,\"origin\":{\"partition\":0,\"offset\":5},\"at\":3,\"retryCount\":1}", "stage");
	}

	@Test
	void aMissingOriginIsRejected() {
		assertMissing("{\"v\":1,\"stage\":1,\"at\":3,\"retryCount\":1}", "partition");
	}

	@Test
	void aMissingOriginOffsetIsRejected() {
		assertMissing("{\"v\":1,\"origin\":{\"partition\":0},\"stage\":1,\"at\":3,\"retryCount\":1}", "offset");
	}

	@Test
	void aMissingRetryCountIsRejected() {
		assertMissing("{\"v\":1,\"origin\":{\"partition\":0,\"offset\":5},\"stage\":1,\"at\":3}", "retryCount");
	}

	@Test
	void aNonNumericAtIsRejected() {
		assertMissing("{\"v\":1,\"origin\":{\"partition\":0,\"offset\":5},\"stage\":1,\"at\":\"3\",\"retryCount\":1}",
				"at");
	}

	@Test
	void anIncompleteFromIsRejected() {
		assertMissing("{\"v\":1,\"origin\":{\"partition\":0,\"offset\":5},\"stage\":1,\"from\":{\"stage\":0},"
				+ "\"retryCount\":1}", "offset");
	}

	@Test
	void aValueWithSomethingAfterTheDocumentIsRejected() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockCodec.decode("L", HEADERS, json(
					"{\"v\":1,\"origin\":{\"partition\":0,\"offset\":5},\"stage\":1,\"at\":3,\"retryCount\":1} {}")))
			.withMessageContaining("'L'")
			.withMessageContaining("not JSON");
	}

	@Test
	void aNullOrFractionalNumberIsRejected() {
		assertMissing("{\"v\":1,\"origin\":{\"partition\":0,\"offset\":5},\"stage\":1,\"at\":null,\"retryCount\":1}",
				"at");
		assertMissing("{\"v\":1,\"origin\":{\"partition\":0,\"offset\":5.0},\"stage\":1,\"at\":3,\"retryCount\":1}",
				"offset");
	}

	@Test
	void ofAFieldGivenTwiceTheLastCounts() {
		Lock decoded = LockCodec.decode("L", HEADERS, json("{\"v\":1,\"origin\":{\"partition\":0,\"offset\":5,"
				+ "\"replay\":2},\"stage\":1,\"at\":3,\"retryCount\":1,\"origin\":{\"partition\":1,\"offset\":7}}"));

		assertThat(decoded.originPartition()).isEqualTo(1);
		assertThat(decoded.originOffset()).isEqualTo(7);
		assertThat(decoded.entry()).isNull();
	}

	@Test
	void aLockWithNeitherAtNorFromIsRejected() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockCodec.decode("L", HEADERS,
					json("{\"v\":1,\"origin\":{\"partition\":0,\"offset\":5},\"stage\":1,\"retryCount\":1}")))
			.withMessageContaining("'at' or 'from'");
	}

	private static void assertMissing(String value, String field) {
		assertThatIllegalArgumentException().isThrownBy(() -> LockCodec.decode("L", HEADERS, json(value)))
			.withMessageContaining("'L'")
			.withMessageContaining("'" + field + "'");
	}

	private static Lock roundTrip(Lock lock) {
		return LockCodec.decode(lock.id(), LockCodec.headers(lock.key(), "node-1", OWNER), LockCodec.encode(lock));
	}

	private static byte[] json(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
