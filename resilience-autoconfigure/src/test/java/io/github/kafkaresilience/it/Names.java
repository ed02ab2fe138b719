package io.github.kafkaresilience.it;

import java.util.List;

import io.github.kafkaresilience.internal.lock.Ownership;

/**
 * The names of a ladder's topics with the default templates, for a test application whose
 * consumer group is {@code g-<topic>} ({@link TestApplication}, {@link InstanceProcess}).
 */
final class Names {

	private Names() {
	}

	/**
	 * The owner of the test application's ladder on a main topic, to stamp planted
	 * records with.
	 */
	static Ownership owner(String topic) {
		return new Ownership(group(topic), true, List.of());
	}

	/** The consumer group the test applications use for a main topic. */
	static String group(String topic) {
		return "g-" + topic;
	}

	static String dlq(String topic) {
		return dlq(group(topic), topic);
	}

	static String dlq(String group, String topic) {
		return group + "." + topic + ".dlq";
	}

	static String locks(String topic) {
		return locks(group(topic), topic);
	}

	static String locks(String group, String topic) {
		return group + "." + topic + ".locks";
	}

	static String retry(String topic, String delay) {
		return retry(group(topic), topic, delay);
	}

	static String retry(String group, String topic, String delay) {
		return group + "." + topic + ".retry." + delay;
	}

}
