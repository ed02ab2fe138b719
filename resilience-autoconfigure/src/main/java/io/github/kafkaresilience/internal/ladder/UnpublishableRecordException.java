package io.github.kafkaresilience.internal.ladder;

import org.apache.kafka.common.KafkaException;

/**
 * A record can be neither moved on nor dead-lettered: the dead-letter topic, or the
 * producer, refuses it as too large. Nothing was committed, and routing it again cannot
 * succeed until a setting is raised, so its partition must not go on past it.
 *
 * @since 0.1.0
 */
final class UnpublishableRecordException extends KafkaException {

	private final String refusingTopic;

	UnpublishableRecordException(String message, String refusingTopic, Throwable cause) {
		super(message, cause);
		this.refusingTopic = refusingTopic;
	}

	/** The topic that refused the record. */
	String refusingTopic() {
		return this.refusingTopic;
	}

}
