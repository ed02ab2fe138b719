package io.github.kafkaresilience.internal.lock;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Reads and writes lock records: the Kafka key is the lock id, the headers carry the
 * business key, the writer's coordinator id and the owning group, and the value is a
 * small versioned JSON document (a tombstone releases the lock).
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

	/** A field of the document that is an object. */
	private static final Object OBJECT = new Object();

	/** A field of the document that is null, an array, or an object below the top. */
	private static final Object OTHER = new Object();

	private LockCodec() {
	}

	public static byte[] encodeId(String id) {
		return id.getBytes(StandardCharsets.UTF_8);
	}

	public static String decodeId(byte[] key) {
		return new String(key, StandardCharsets.UTF_8);
	}

	/**
	 * The headers of a lock record or tombstone: the business key, the writer and the
	 * group that owns the lock topic.
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
	 * @throws IllegalArgumentException when the record is not a lock record this codec
	 * understands
	 */
	public static Lock decode(String id, Headers headers, byte[] value) {
		Bytes key = businessKey(headers);
		if (key == null) {
			throw new IllegalArgumentException("Lock record '" + id + "' has no '" + BUSINESS_KEY + "' header");
		}
		Map<String, Object> doc;
		try (JsonParser parser = MAPPER.createParser(value)) {
			doc = fields(parser);
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException("Lock record '" + id + "' is not JSON: " + ex.getMessage(), ex);
		}
		int version = (int) smallNumber(doc, "v", id);
		if (version != VERSION) {
			throw new IllegalArgumentException("Lock record '" + id + "' has version " + version
					+ " but this library reads version " + VERSION + "; upgrade every instance to the same release");
		}
		Long at = doc.containsKey("at") ? number(doc, "at", id) : null;
		Position fromPosition = (doc.get("from") == OBJECT)
				? new Position((int) smallNumber(doc, "from.stage", id), number(doc, "from.offset", id)) : null;
		FailureInfo failureInfo = (doc.get("failure") == OBJECT) ? new FailureInfo(text(doc, "failure.class"),
				text(doc, "failure.message"), text(doc, "failure.exception"), text(doc, "failure.timestamp")) : null;
		Instant updated;
		try {
			updated = doc.containsKey("updated") ? InstantText.parse(text(doc, "updated")) : Instant.EPOCH;
		}
		catch (RuntimeException ex) {
			throw new IllegalArgumentException("Lock record '" + id + "' has an unreadable 'updated' time", ex);
		}
		int originPartition = (int) smallNumber(doc, "origin.partition", id);
		// a replayed dead letter's lock names where it entered the ladder, and has no
		// origin
		// offset until its main-topic partition admits it
		Long entry = doc.containsKey("origin.replay") ? number(doc, "origin.replay", id) : null;
		long originOffset = (entry != null && !doc.containsKey("origin.offset")) ? Lock.PENDING
				: number(doc, "origin.offset", id);
		try {
			return new Lock(id, key, originPartition, originOffset, (int) smallNumber(doc, "stage", id), at,
					fromPosition, (int) smallNumber(doc, "retryCount", id), failureInfo, updated, entry);
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			throw new IllegalArgumentException("Lock record '" + id + "' is not a valid lock: " + ex.getMessage(), ex);
		}
	}

	/**
	 * The fields of a lock document, read as tokens (the tailer reads every lock record:
	 * a tree of nodes per record cost it a tenth of a failure storm's samples). The
	 * fields of the objects at the top are named {@code object.field}; a whole number is
	 * a {@code Long}, another scalar its text, an object at the top {@link #OBJECT},
	 * anything else {@link #OTHER}. A value that is not an object has no fields.
	 */
	private static Map<String, Object> fields(JsonParser parser) {
		Map<String, Object> fields = new HashMap<>();
		JsonToken first = parser.nextToken();
		if (first == JsonToken.START_OBJECT) {
			readObject(parser, "", fields);
		}
		else if (first != null) {
			parser.skipChildren();
		}
		if (first != null && parser.nextToken() != null) {
			throw new StreamReadException(parser, "Trailing token after the lock document: " + parser.currentToken());
		}
		return fields;
	}

	private static void readObject(JsonParser parser, String prefix, Map<String, Object> fields) {
		for (String name = parser.nextName(); name != null; name = parser.nextName()) {
			String field = prefix + name;
			JsonToken token = parser.nextToken();
			if (token == JsonToken.START_OBJECT && prefix.isEmpty()) {
				if (fields.containsKey(field)) {
					fields.keySet().removeIf((known) -> known.startsWith(field + ".")); // the
																						// last
																						// one
																						// counts
				}
				fields.put(field, OBJECT);
				readObject(parser, field + ".", fields);
			}
			else if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
				parser.skipChildren();
				fields.put(field, OTHER);
			}
			else if (token == JsonToken.VALUE_NUMBER_INT) {
				fields.put(field, (parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER)
						? parser.getBigIntegerValue().longValue() : parser.getLongValue());
			}
			else if (token == JsonToken.VALUE_NULL) {
				fields.put(field, OTHER);
			}
			else {
				fields.put(field, parser.getString());
			}
		}
	}

	/** A scalar's text; empty for a field that is absent, null or not a scalar. */
	private static String text(Map<String, Object> doc, String field) {
		Object value = doc.get(field);
		return (value instanceof String || value instanceof Long) ? value.toString() : "";
	}

	public static @Nullable Bytes businessKey(Headers headers) {
		Header header = headers.lastHeader(BUSINESS_KEY);
		return (header != null && header.value() != null) ? Bytes.wrap(header.value()) : null;
	}

	private static long smallNumber(Map<String, Object> doc, String field, String id) {
		long value = number(doc, field, id);
		if (value < 0 || value > Integer.MAX_VALUE) {
			throw new IllegalArgumentException(
					"Lock record '" + id + "' has '" + name(field) + "' out of range: " + value);
		}
		return value;
	}

	private static long number(Map<String, Object> doc, String field, String id) {
		if (!(doc.get(field) instanceof Long value)) {
			throw new IllegalArgumentException("Lock record '" + id + "' has no numeric '" + name(field) + "'");
		}
		return value;
	}

	/** A field's name within its object, as the messages name it. */
	private static String name(String field) {
		return field.substring(field.indexOf('.') + 1);
	}

}
