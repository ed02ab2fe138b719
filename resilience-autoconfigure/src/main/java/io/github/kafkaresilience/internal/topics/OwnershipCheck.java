package io.github.kafkaresilience.internal.topics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.ladder.LadderStartupException;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.Ownership;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The startup check of a ladder's ownership (docs/PROTOCOL.md, "Topics"): an instance
 * whose ladder topics hold records written by another consumer group refuses to start,
 * naming both groups, the topics and the properties that give each group topics of its
 * own. It looks at the live locks the lock tailer found while catching up with the lock
 * topic, and at the latest records of each retry and dead-letter partition. At run time
 * such records are skipped and counted whatever this check found.
 *
 */
final class OwnershipCheck {

	private static final Log logger = LogFactory.getLog(OwnershipCheck.class);

	/** The records read at the end of each retry and dead-letter partition. */
	static final int LATEST = 16;

	/** The property that turns this check off. */
	static final String PROPERTY = "kafka.resilience.topics.check-owner-at-startup";

	private final Supplier<Consumer<byte[], byte[]>> consumers;

	private final Duration timeout;

	/**
	 * @param consumers creates a consumer outside any group, reading from the earliest
	 * offset
	 * @param timeout how long the lock tailer may take to catch up, and the latest
	 * records to be read
	 */
	OwnershipCheck(Supplier<Consumer<byte[], byte[]>> consumers, Duration timeout) {
		this.consumers = consumers;
		this.timeout = timeout;
	}

	/**
	 * Checks a ladder whose lock tailer runs.
	 * @throws LadderStartupException when another group wrote to its topics
	 */
	void check(LadderPlan plan, LockRegistry registry) {
		Map<String, Map<String, Long>> foreign = new TreeMap<>(); // by topic: by group,
																	// how many
		if (registry.awaitCaughtUp(this.timeout)) {
			registry.foreignLocks()
				.forEach((group, count) -> foreign
					.computeIfAbsent(plan.lockTopic() + " (live locks)", (t) -> new TreeMap<>())
					.put(group, (long) count));
		}
		else {
			logger.warn("The lock tailer of " + plan.describe() + " did not read '" + plan.lockTopic()
					+ "' to its end within " + this.timeout.toSeconds()
					+ " s; its live locks of other groups are not checked at startup (they are "
					+ "still never applied, and counted in kafka.resilience.foreign.records)");
		}
		List<String> topics = new ArrayList<>();
		plan.stages().forEach((stage) -> topics.add(stage.topic()));
		topics.add(plan.dlqTopic());
		latestOwners(topics, plan.group())
			.forEach((topic, byGroup) -> foreign.put(topic + " (latest records)", byGroup));
		if (!foreign.isEmpty()) {
			throw refusal(plan, foreign);
		}
	}

	/** The other groups that own records among the latest of each partition, by topic. */
	private Map<String, Map<String, Long>> latestOwners(List<String> topics, String group) {
		Map<String, Map<String, Long>> found = new TreeMap<>();
		try (Consumer<byte[], byte[]> consumer = this.consumers.get()) {
			List<TopicPartition> partitions = new ArrayList<>();
			for (String topic : topics) {
				List<PartitionInfo> infos = consumer.partitionsFor(topic, this.timeout);
				if (infos != null) {
					infos.forEach((info) -> partitions.add(new TopicPartition(topic, info.partition())));
				}
			}
			consumer.assign(partitions);
			Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, this.timeout);
			Map<TopicPartition, Long> starts = consumer.beginningOffsets(partitions, this.timeout);
			Map<TopicPartition, Long> reading = new HashMap<>();
			for (TopicPartition partition : partitions) {
				long end = ends.getOrDefault(partition, 0L);
				long from = Math.max(starts.getOrDefault(partition, 0L), end - LATEST);
				if (from < end) {
					consumer.seek(partition, from);
					reading.put(partition, end);
				}
			}
			consumer.assign(reading.keySet());
			long deadline = System.nanoTime() + this.timeout.toNanos();
			while (!reading.isEmpty() && System.nanoTime() < deadline) {
				for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
					String owner = Ownership.ownerOf(record.headers());
					if (owner != null && !owner.equals(group)) {
						found.computeIfAbsent(record.topic(), (t) -> new TreeMap<>()).merge(owner, 1L, Long::sum);
					}
				}
				reading.entrySet().removeIf((entry) -> consumer.position(entry.getKey()) >= entry.getValue());
			}
			if (!reading.isEmpty()) {
				logger.warn("Could not read the latest records of " + reading.keySet() + " within "
						+ this.timeout.toSeconds()
						+ " s; records of other groups there are not checked at startup (they are still skipped and "
						+ "counted in kafka.resilience.foreign.records)");
			}
		}
		return found;
	}

	private static LadderStartupException refusal(LadderPlan plan, Map<String, Map<String, Long>> foreign) {
		List<String> others = foreign.values()
			.stream()
			.flatMap((byGroup) -> byGroup.keySet().stream())
			.distinct()
			.toList();
		StringBuilder found = new StringBuilder();
		foreign.forEach((topic,
				byGroup) -> byGroup.forEach((owner, count) -> found.append("\n  ")
					.append(topic)
					.append(": ")
					.append(count)
					.append(" of group '")
					.append(owner)
					.append("'")));
		String problem = "The ladder of " + plan.describe() + " holds records written by "
				+ ((others.size() == 1) ? "group " : "groups ")
				+ String.join(", ", others.stream().map((other) -> "'" + other + "'").toList()) + ":" + found
				+ "\nTwo consumer groups use the same retry, dead-letter and lock topics, so each would run, release and "
				+ "dead-letter the other's records.";
		String action = "Give every group topics of its own: kafka.resilience.topics.retry-template, dlq-template and "
				+ "lock-template must contain {group} (as the defaults {group}.{topic}.retry.{delay}, {group}.{topic}.dlq "
				+ "and {group}.{topic}.locks do) in every application that reads '" + plan.mainTopic()
				+ "'. If the other " + "group no longer writes here and only left these records behind, set " + PROPERTY
				+ "=false to start "
				+ "anyway: they are never acted on, and counted in kafka.resilience.foreign.records";
		return new LadderStartupException(problem, action);
	}

}
