package io.github.kafkaresilience.dlq;

import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import tools.jackson.databind.json.JsonMapper;

/**
 * The default {@link DlqHandler}: one line of JSON per dead letter, at WARN, on the
 * logger {@value #LOGGER}. The line says where the dead letter is, where it was born,
 * where it failed last and why; it never holds the payload, only its size. For example:
 * <pre>
 * {"event":"dead-letter","dlq.topic":"orders.dlq","dlq.partition":2,"dlq.offset":41,
 *  "dlq.timestamp":"2026-11-21T10:15:30.120Z","key":"customer-7","original.topic":"orders",
 *  "original.partition":2,"original.offset":1093,"previous.topic":"orders.retry.1h",
 *  "retry.count":4,"error.class":"transient","error.exception":"java.net.SocketTimeoutException",
 *  "error.message":"Read timed out","error.timestamp":"2026-11-21T10:15:30.101000000Z",
 *  "dlq.reason":"exhausted","payload.size":312}
 * </pre>
 *
 * @since 0.1.0
 */
public class IncidentLogDlqHandler implements DlqHandler {

	/** The name of the logger the incident lines go to. */
	public static final String LOGGER = "kafka.resilience.dlq.incidents";

	private static final Log logger = LogFactory.getLog(LOGGER);

	private static final JsonMapper MAPPER = JsonMapper.builder().build();

	@Override
	public void handle(DeadLetter deadLetter) {
		logger.warn(incidentLine(deadLetter));
	}

	/**
	 * The incident line of a dead letter: one JSON object on one line, without the
	 * payload.
	 */
	public static String incidentLine(DeadLetter deadLetter) {
		Map<String, Object> line = new LinkedHashMap<>();
		line.put("event", "dead-letter");
		line.put("dlq.topic", deadLetter.topic());
		line.put("dlq.partition", deadLetter.partition());
		line.put("dlq.offset", deadLetter.offset());
		line.put("dlq.timestamp", deadLetter.timestamp().toString());
		line.put("key", deadLetter.keyText());
		line.put("original.topic", deadLetter.originalTopic());
		line.put("original.partition", deadLetter.originalPartition());
		line.put("original.offset", deadLetter.originalOffset());
		line.put("previous.topic", deadLetter.previousTopic());
		line.put("retry.count", deadLetter.retryCount());
		line.put("error.class", deadLetter.errorClass());
		line.put("error.exception", deadLetter.errorException());
		line.put("error.message", deadLetter.errorMessage());
		line.put("error.timestamp", deadLetter.errorTimestamp());
		line.put("dlq.reason", deadLetter.dlqReason());
		line.put("payload.size", deadLetter.payloadSize());
		return MAPPER.writeValueAsString(line);
	}

}
