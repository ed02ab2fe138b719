package io.github.kafkaresilience.lock;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Reads and writes lock records: the Kafka key is the lock id, the headers carry the business
 * key, the writer's coordinator id and the owning group, and the value is a small versioned JSON document (a
 * tombstone releases the lock).
 *
 * @since 0.1.0
 */
public final class LockCodec {

	/** Header holding the raw business key of the locked record. */
	public static final String BUSINESS_KEY = "business-key";

	/** Header holding the stable id of the instance that wrote the lock record. */
	public static final String COORDINATOR_ID = "x-coordinator-id";

	/** The version of the lock document this codec writes. */
	public static final int VERSION = 1;

	private static final JsonMapper MAPPER = JsonMapper.builder().build();

	private LockCodec() {
	}

	public static byte[] encodeId(String id) {
		return id.getBytes(StandardCharsets.UTF_8);
	}

	public static String decodeId(byte[] key) {
		return new String(key, StandardCharsets.UTF_8);
	}

	/**
	 * The headers of a lock record or tombstone: the business key, the writer and the group
	 * that owns the lock topic.
	 */
	public static Headers headers(Bytes businessKey, String coordinatorId, Ownership owner) {
		RecordHeaders headers = new RecordHeaders();
		headers.add(BUSINESS_KEY, businessKey.get());
		headers.add(COORDINATOR_ID, coordinatorId.getBytes(StandardCharsets.UTF_8));
		return owner.stamp(headers);
	}

	public static byte[] encode(Lock lock) {
		ObjectNode doc = MAPPER.createObjectNode();
		doc.put("v", VERSION);
		ObjectNode origin = doc.putObject("origin");
		origin.put("partition", lock.originPartition());
		if (!lock.isPending()) {
			origin.put("offset", lock.originOffset());
		}
		if (lock.entry() != null) {
			origin.put("replay", lock.entry());
		}
		doc.put("stage", lock.stage());
		if (lock.at() != null) {
			doc.put("at", lock.at());
		}
		if (lock.from() != null) {
			ObjectNode from = doc.putObject("from");
			from.put("stage", lock.from().stage());
			from.put("offset", lock.from().offset());
		}
		doc.put("retryCount", lock.retryCount());
		FailureInfo failure = lock.failure();
		if (failure != null) {
			ObjectNode node = doc.putObject("failure");
			node.put("class", failure.errorClass());
			node.put("message", failure.message());
			node.put("exception", failure.exception());
			node.put("timestamp", failure.timestamp());
		}
		doc.put("updated", lock.updated().toString());
		return MAPPER.writeValueAsBytes(doc);
	}

	/**
	 * Decodes a lock record's value.
	 * @param id the lock id (the record key)
	 * @param headers the record headers (must hold the business key)
	 * @param value the record value, not a tombstone
	 * @return the lock
	 * @throws IllegalArgumentException when the record is not a lock record this codec understands
	 */
	public static Lock decode(String id, Headers headers, byte[] value) {
		Bytes key = businessKey(headers);
		if (key == null) {
			throw new IllegalArgumentException("Lock record '" + id + "' has no '" + BUSINESS_KEY + "' header");
		}
		JsonNode doc;
		try {
			doc = MAPPER.readTree(value);
		}
		catch (RuntimeException ex) {
			throw new IllegalArgumentException("Lock record '" + id + "' is not JSON: " + ex.getMessage(), ex);
		}
		int version = (int) smallNumber(doc, "v", id);
		if (version != VERSION) {
			throw new IllegalArgumentException("Lock record '" + id + "' has version " + version
					+ " but this library reads version " + VERSION + "; upgrade every instance to the same release");
		}
		JsonNode origin = doc.path("origin");
		JsonNode from = doc.path("from");
		JsonNode failure = doc.path("failure");
		Long at = doc.has("at") ? number(doc, "at", id) : null;
		Position fromPosition = from.isObject()
				? new Position((int) smallNumber(from, "stage", id), number(from, "offset", id)) : null;
		FailureInfo failureInfo = failure.isObject() ? new FailureInfo(failure.path("class").asString(""),
				failure.path("message").asString(""), failure.path("exception").asString(""),
				failure.path("timestamp").asString("")) : null;
		Instant updated;
		try {
			updated = doc.has("updated") ? InstantText.parse(doc.path("updated").asString()) : Instant.EPOCH;
		}
		catch (RuntimeException ex) {
			throw new IllegalArgumentException("Lock record '" + id + "' has an unreadable 'updated' time", ex);
		}
		int originPartition = (int) smallNumber(origin, "partition", id);
		// a replayed dead letter's lock names where it entered the ladder, and has no origin
		// offset until its main-topic partition admits it
		Long entry = origin.has("replay") ? number(origin, "replay", id) : null;
		long originOffset = (entry != null && !origin.has("offset")) ? Lock.PENDING : number(origin, "offset", id);
		try {
			return new Lock(id, key, originPartition, originOffset,
					(int) smallNumber(doc, "stage", id), at, fromPosition, (int) smallNumber(doc, "retryCount", id),
					failureInfo, updated, entry);
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			throw new IllegalArgumentException("Lock record '" + id + "' is not a valid lock: " + ex.getMessage(), ex);
		}
	}

	public static @Nullable Bytes businessKey(Headers headers) {
		Header header = headers.lastHeader(BUSINESS_KEY);
		return (header != null && header.value() != null) ? Bytes.wrap(header.value()) : null;
	}

	private static long smallNumber(JsonNode node, String field, String id) {
		long value = number(node, field, id);
		if (value < 0 || value > Integer.MAX_VALUE) {
			throw new IllegalArgumentException("Lock record '" + id + "' has '" + field + "' out of range: " + value);
		}
		return value;
	}

	private static long number(JsonNode node, String field, String id) {
		JsonNode value = node.path(field);
		if (!value.isIntegralNumber()) {
			throw new IllegalArgumentException("Lock record '" + id + "' has no numeric '" + field + "'");
		}
		return value.longValue();
	}

}
