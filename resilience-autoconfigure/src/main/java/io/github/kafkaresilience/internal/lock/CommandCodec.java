package io.github.kafkaresilience.internal.lock;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.utils.Bytes;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Reads and writes operator command records (docs/PROTOCOL.md, rule 11): the Kafka key is
 * {@code cmd:<id>}, the headers are a lock record's (business key, writer, owning group),
 * and the value is a small versioned JSON document; a tombstone ends the command.
 *
 * @since 0.1.0
 */
public final class CommandCodec {

	/** The version of the command document this codec writes. */
	public static final int VERSION = 1;

	private static final JsonMapper MAPPER = JsonMapper.builder().build();

	private CommandCodec() {
	}

	public static byte[] encode(OperatorCommand command) {
		ObjectNode doc = MAPPER.createObjectNode();
		doc.put("v", VERSION);
		doc.put("action", command.action().value());
		doc.put("lock", command.lockId());
		doc.put("stage", command.position().stage());
		doc.put("at", command.position().offset());
		doc.put("by", command.by());
		doc.put("requested", command.requested().toString());
		return MAPPER.writeValueAsBytes(doc);
	}

	/**
	 * Decodes a command record's value.
	 * @param recordKey the record key, {@code cmd:<id>}
	 * @param partition the lock partition the record was read from
	 * @param headers the record headers (must hold the business key)
	 * @param value the record value, not a tombstone
	 * @throws IllegalArgumentException when the record is not a command this codec
	 * understands
	 */
	public static OperatorCommand decode(String recordKey, int partition, Headers headers, byte[] value) {
		if (!OperatorCommand.isCommandKey(recordKey)) {
			throw new IllegalArgumentException("Record key '" + recordKey + "' is not a command's");
		}
		String id = recordKey.substring(OperatorCommand.KEY_PREFIX.length());
		Bytes key = LockCodec.businessKey(headers);
		if (key == null) {
			throw new IllegalArgumentException(
					"Command record '" + recordKey + "' has no '" + LockCodec.BUSINESS_KEY + "' header");
		}
		JsonNode doc;
		try {
			doc = MAPPER.readTree(value);
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException("Command record '" + recordKey + "' is not JSON: " + ex.getMessage(),
					ex);
		}
		if (doc == null || !doc.isObject()) {
			throw new IllegalArgumentException("Command record '" + recordKey + "' is not a JSON object");
		}
		int version = doc.path("v").asInt(-1);
		if (version != VERSION) {
			throw new IllegalArgumentException("Command record '" + recordKey + "' has version " + doc.path("v")
					+ " but this library reads version " + VERSION + "; upgrade every instance to the same release");
		}
		try {
			OperatorCommand.Action action = OperatorCommand.Action.of(text(doc, "action", recordKey));
			String lockId = text(doc, "lock", recordKey);
			Position position = new Position((int) number(doc, "stage", recordKey), number(doc, "at", recordKey));
			Instant requested = InstantText.parse(text(doc, "requested", recordKey));
			return new OperatorCommand(id, action, lockId, key, partition, position, text(doc, "by", recordKey),
					requested);
		}
		catch (RuntimeException ex) {
			throw new IllegalArgumentException(
					"Command record '" + recordKey + "' is not a valid command: " + ex.getMessage(), ex);
		}
	}

	public static byte[] encodeKey(OperatorCommand command) {
		return command.recordKey().getBytes(StandardCharsets.UTF_8);
	}

	private static String text(JsonNode doc, String field, String recordKey) {
		JsonNode node = doc.get(field);
		if (node == null || !node.isString()) {
			throw new IllegalArgumentException("no text '" + field + "' in '" + recordKey + "'");
		}
		return node.asString();
	}

	private static long number(JsonNode doc, String field, String recordKey) {
		JsonNode node = doc.get(field);
		if (node == null || !node.isIntegralNumber() || node.asLong() < 0) {
			throw new IllegalArgumentException("no whole number '" + field + "' (0 or more) in '" + recordKey + "'");
		}
		return node.asLong();
	}

}
