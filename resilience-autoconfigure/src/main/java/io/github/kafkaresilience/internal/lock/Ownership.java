package io.github.kafkaresilience.internal.lock;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import io.github.kafkaresilience.ladder.RetryHeaders;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

/**
 * Which records on a ladder's topics belong to its consumer group (docs/PROTOCOL.md,
 * "Topics"). The library writes {@code owner.group} on every record it sends to a stage,
 * dead-letter or lock topic, and acts only on records of its own group: a record of
 * another group, or one without the header on a ladder whose names contain the group, is
 * never run, applied or dead-lettered again. Each such record is counted per topic, and
 * the first one of each partition is logged with both group names.
 *
 * @since 0.1.0
 */
public final class Ownership {

	private static final Log logger = LogFactory.getLog(Ownership.class);

	/** The header naming the consumer group that owns a ladder record. */
	public static final String HEADER = RetryHeaders.OWNER_GROUP;

	private final String group;

	private final byte[] groupBytes;

	private final boolean required;

	private final List<String> topics;

	private final Map<String, LongAdder> foreign = new ConcurrentHashMap<>();

	private final Set<TopicPartition> reported = ConcurrentHashMap.newKeySet();

	/**
	 * @param group the consumer group that owns the ladder
	 * @param required whether a record without the header is foreign: true when the
	 * ladder's names contain the group, so that no release before the header existed
	 * wrote there
	 * @param topics the ladder's own topics (stages, dead letters, locks), for the meters
	 */
	public Ownership(String group, boolean required, List<String> topics) {
		this.group = group;
		this.groupBytes = group.getBytes(StandardCharsets.UTF_8);
		this.required = required;
		this.topics = List.copyOf(topics);
	}

	public String group() {
		return this.group;
	}

	/** Whether a record without the header is foreign. */
	public boolean isRequired() {
		return this.required;
	}

	/** The topics whose foreign records are counted. */
	public List<String> topics() {
		return this.topics;
	}

	/** Writes this group into {@code headers} as their owner, replacing any other. */
	public Headers stamp(Headers headers) {
		headers.remove(HEADER);
		headers.add(HEADER, this.groupBytes);
		return headers;
	}

	/** The group a record's header names, or {@code null} without one. */
	public static @Nullable String ownerOf(Headers headers) {
		Header header = headers.lastHeader(HEADER);
		return (header != null && header.value() != null) ? new String(header.value(), StandardCharsets.UTF_8) : null;
	}

	/**
	 * Whether a record read from one of the ladder's topics belongs to this group. A
	 * record that does not is counted, and the first one of its partition logged.
	 */
	public boolean owns(String topic, int partition, long offset, Headers headers) {
		String owner = ownerOf(headers);
		if ((owner == null) ? !this.required : owner.equals(this.group)) {
			return true;
		}
		this.foreign.computeIfAbsent(topic, (t) -> new LongAdder()).increment();
		if (this.reported.add(new TopicPartition(topic, partition))) {
			logger.warn("Skipping record " + topic + "-" + partition + "@" + offset + ": " + whose(owner)
					+ ", but this ladder belongs to group '" + this.group
					+ "'. It is not run, applied or dead-lettered. " + "Further such records of " + topic + "-"
					+ partition + " are only counted in " + "kafka.resilience.foreign.records. " + advice(owner));
		}
		return false;
	}

	/**
	 * Records of other groups (or without an owner where one is required) read from
	 * {@code topic}.
	 */
	public long foreignRecords(String topic) {
		LongAdder count = this.foreign.get(topic);
		return (count != null) ? count.sum() : 0;
	}

	private static String whose(@Nullable String owner) {
		return (owner != null) ? "it was written by group '" + owner + "'"
				: "it has no " + HEADER + " header, so the library did not write it for this group";
	}

	private static String advice(@Nullable String owner) {
		return (owner != null)
				? "Two consumer groups use the same ladder topics: give each its own names "
						+ "(kafka.resilience.topics.retry-template, dlq-template and lock-template with {group})"
				: "Only the library writes to a ladder's topics";
	}

}
