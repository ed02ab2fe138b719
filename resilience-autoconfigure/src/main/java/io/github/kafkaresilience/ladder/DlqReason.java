package io.github.kafkaresilience.ladder;

/**
 * Why a record was dead-lettered, as written in the {@code dlq.reason} header.
 *
 * @since 0.1.0
 */
public enum DlqReason {

	/** The handler threw a permanent exception. */
	PERMANENT("permanent"),

	/** Every attempt failed. */
	EXHAUSTED("exhausted"),

	/** The record could not be deserialized, or its protocol headers are unreadable. */
	POISON("poison"),

	/**
	 * An operator sent the head of a held key to the dead-letter topic (docs/PROTOCOL.md,
	 * rule 11).
	 */
	OPERATOR("operator");

	private final String value;

	DlqReason(String value) {
		this.value = value;
	}

	public String value() {
		return this.value;
	}

}
