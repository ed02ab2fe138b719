package io.github.kafkaresilience.internal.topics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.ladder.LadderStartupException;
import io.github.kafkaresilience.internal.support.KafkaFutures;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

/**
 * The upgrade check from releases that named a ladder after its main topic alone
 * ({@code T.retry.<delay>}, {@code T.dlq}, {@code T.locks}), so that every group reading
 * {@code T} shared one ladder. It runs before a group-scoped ladder is created or
 * checked, as long as the group has committed nothing on the new ladder's retry topics
 * (once it has, it runs that ladder and the check is done for good):
 * <ul>
 * <li>a group that never read {@code T}, or where no earlier retry topic exists, has
 * nothing to move;</li>
 * <li>while instances of the group still consume the earlier retry topics, startup
 * refuses: a group changes its ladder's names with every instance stopped, or one key's
 * records could wait in two ladders;</li>
 * <li>records in the earlier retry topics past the group's committed offsets (or, on a
 * partition it never committed on, any record) would never be read under the new names:
 * startup refuses, with the steps to drain them under the earlier names first;</li>
 * <li>otherwise the group leaves the earlier topics (its offsets there are deleted; other
 * groups may still use them), and once its own topics exist it commits their start, so
 * that the next start knows the group moved.</li>
 * </ul>
 *
 * @since 0.1.0
 */
final class UnscopedLadderCheck {

	private static final Log logger = LogFactory.getLog(UnscopedLadderCheck.class);

	/** The property that turns this check off. */
	public static final String PROPERTY = "kafka.resilience.topics.check-unscoped-at-startup";

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	/** A stage delay as the earlier releases wrote it into a retry topic's name. */
	private static final Pattern DELAY = Pattern.compile("[0-9]+(ms|s|m|h|d)");

	private UnscopedLadderCheck() {
	}

	/**
	 * Checks a ladder, before any of its topics is created or checked.
	 * @return whether the group's start on its own ladder is still to be marked with
	 * {@link #markMoved} once the ladder's topics exist
	 * @throws LadderStartupException when the group has records waiting under the earlier
	 * names, or instances still consuming them
	 */
	public static boolean check(Admin admin, LadderPlan plan) {
		if (!plan.scoped() || plan.stages().isEmpty()) {
			return false; // the earlier names themselves, or no retry topic to move from
		}
		Map<TopicPartition, OffsetAndMetadata> offsets = groupOffsets(admin, plan.group());
		if (offsets.keySet().stream().anyMatch((partition) -> plan.stageOf(partition.topic()) > 0)) {
			return false; // the group runs its own ladder already
		}
		String prefix = plan.mainTopic() + ".retry.";
		Set<String> earlier = new TreeSet<>();
		for (String topic : get(admin.listTopics().names(), "list the topics")) {
			if (topic.startsWith(prefix) && DELAY.matcher(topic.substring(prefix.length())).matches()) {
				earlier.add(topic);
			}
		}
		boolean readTopic = offsets.keySet()
			.stream()
			.anyMatch((partition) -> partition.topic().equals(plan.mainTopic()) || earlier.contains(partition.topic()));
		if (earlier.isEmpty() || !readTopic) {
			return true; // nothing left by an earlier release, or the group never read
							// the topic
		}
		List<String> stillThere = membersConsuming(admin, plan.group(), earlier);
		if (!stillThere.isEmpty()) {
			throw new LadderStartupException(
					"Instances of consumer group '" + plan.group() + "' (" + String.join(", ", stillThere)
							+ ") still consume " + earlier + ", the retry topics that releases before "
							+ "group-scoped ladders used for '" + plan.mainTopic()
							+ "', while this instance would use the ladder of " + plan.describe() + " ("
							+ plan.stage(1).topic() + ", ...). A group changes its ladder's names with every "
							+ "instance stopped, or one key's records would wait in two ladders and lose their order.",
					"Stop every instance of the group, then start them again on this release");
		}
		Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
		offsets.forEach((partition, offset) -> {
			if (offset != null && earlier.contains(partition.topic())) {
				committed.put(partition, offset);
			}
		});
		Map<String, Long> waiting = waiting(admin, earlier, committed);
		if (!waiting.isEmpty()) {
			throw refusal(plan, waiting);
		}
		leave(admin, plan, committed.keySet());
		return true;
	}

	/**
	 * Marks that the group moved to its own ladder: it commits the start of each of the
	 * ladder's retry partitions, where it would begin reading them anyway, unless it
	 * committed there already. If that fails (other instances of the group run already),
	 * the next start checks again.
	 */
	public static void markMoved(Admin admin, LadderPlan plan) {
		Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
		List<String> stages = plan.stages().stream().map(LadderPlan.Stage::topic).toList();
		try {
			get(admin.describeTopics(stages).allTopicNames(), "describe " + stages)
				.forEach((topic, description) -> description.partitions()
					.forEach((info) -> earliest.put(new TopicPartition(topic, info.partition()),
							OffsetSpec.earliest())));
			Map<TopicPartition, OffsetAndMetadata> start = new HashMap<>();
			get(admin.listOffsets(earliest).all(), "read start offsets")
				.forEach((partition, info) -> start.put(partition, new OffsetAndMetadata(info.offset())));
			get(admin.alterConsumerGroupOffsets(plan.group(), start).all(),
					"commit the start of " + stages + " for group '" + plan.group() + "'");
		}
		catch (KafkaException ex) {
			logger.debug("Could not mark that group '" + plan.group() + "' moved to its own ladder on '"
					+ plan.mainTopic() + "'; the next start checks the earlier topics again", ex);
		}
	}

	/**
	 * The records of each earlier retry topic past the group's committed offsets; a
	 * partition it never committed on counts from its start.
	 */
	private static Map<String, Long> waiting(Admin admin, Set<String> topics,
			Map<TopicPartition, OffsetAndMetadata> committed) {
		Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
		Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
		get(admin.describeTopics(topics).allTopicNames(), "describe " + topics)
			.forEach((topic, description) -> description.partitions().forEach((info) -> {
				TopicPartition partition = new TopicPartition(topic, info.partition());
				latest.put(partition, OffsetSpec.latest());
				earliest.put(partition, OffsetSpec.earliest());
			}));
		Map<TopicPartition, ListOffsetsResultInfo> ends = get(admin.listOffsets(latest).all(), "read end offsets");
		Map<TopicPartition, ListOffsetsResultInfo> starts = get(admin.listOffsets(earliest).all(),
				"read start offsets");
		Map<String, Long> waiting = new TreeMap<>();
		ends.forEach((partition, end) -> {
			OffsetAndMetadata offset = committed.get(partition);
			long from = Math.max(Objects.requireNonNull(starts.get(partition)).offset(),
					(offset != null) ? offset.offset() : 0);
			if (end.offset() > from) {
				waiting.merge(partition.topic(), end.offset() - from, Long::sum);
			}
		});
		return waiting;
	}

	/**
	 * The group's consumer offsets on the earlier topics are deleted: it no longer reads
	 * them.
	 */
	private static void leave(Admin admin, LadderPlan plan, Collection<TopicPartition> partitions) {
		if (!partitions.isEmpty()) {
			try {
				get(admin.deleteConsumerGroupOffsets(plan.group(), Set.copyOf(partitions)).all(),
						"delete the offsets of group '" + plan.group() + "'");
			}
			catch (KafkaException ex) {
				logger.warn("Could not delete the offsets of consumer group '" + plan.group() + "' on " + partitions
						+ ", where it has nothing left", ex);
			}
		}
		logger
			.info("Consumer group '" + plan.group() + "' has nothing waiting in the retry topics that releases before "
					+ "group-scoped ladders used for '" + plan.mainTopic() + "'; it now uses its own ladder ("
					+ plan.stage(1).topic() + ", ..., " + plan.dlqTopic() + ", " + plan.lockTopic()
					+ "). Dead letters in '" + plan.mainTopic() + ".dlq' stay there. Other groups reading '"
					+ plan.mainTopic() + "' may still use the " + "earlier topics; delete them once none does");
	}

	private static LadderStartupException refusal(LadderPlan plan, Map<String, Long> waiting) {
		long total = waiting.values().stream().mapToLong(Long::longValue).sum();
		List<String> each = new ArrayList<>();
		waiting.forEach((topic, count) -> each.add(topic + " (" + count + ")"));
		String unscoped = plan.mainTopic() + ".dlq";
		String problem = "Consumer group '" + plan.group() + "' read '" + plan.mainTopic() + "' before, and " + total
				+ " record(s) wait in the retry topics that releases before group-scoped ladders used for it: "
				+ String.join(", ", each) + ". This release names the group's ladder " + plan.stage(1).topic()
				+ ", ..., " + plan.dlqTopic() + ", " + plan.lockTopic()
				+ " and would never read them: they, and the records of their " + "keys behind them, would be lost.";
		String action = "Drain them under the earlier names first: start this release with "
				+ "kafka.resilience.topics.retry-template=" + LadderPlan.UNSCOPED_RETRY_TEMPLATE
				+ ", kafka.resilience.topics.dlq-template=" + LadderPlan.UNSCOPED_DLQ_TEMPLATE
				+ " and kafka.resilience.topics.lock-template=" + LadderPlan.UNSCOPED_LOCK_TEMPLATE
				+ " until the group has no lag on these topics (kafka-consumer-groups --bootstrap-server <broker> --describe "
				+ "--group " + plan.group()
				+ ") and kafka.resilience.locks.active is 0, then stop every instance of the "
				+ "group, remove the three properties and start again. Dead letters in '" + unscoped
				+ "' stay there; replay " + "them into the new ladder with: replay --from " + unscoped + " --to "
				+ plan.mainTopic() + " --group " + plan.group()
				+ ". If none of these records is this group's (the group read '" + plan.mainTopic()
				+ "' without this library, and other groups still on an earlier release use these topics), set "
				+ PROPERTY + "=false. See the operations guide, 'Several services on one topic'";
		return new LadderStartupException(problem, action);
	}

	/**
	 * The members of a group assigned a partition of one of {@code topics}, by client and
	 * host.
	 */
	private static List<String> membersConsuming(Admin admin, String group, Set<String> topics) {
		ConsumerGroupDescription description = get(
				Objects.requireNonNull(admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)),
				"describe group '" + group + "'");
		List<String> members = new ArrayList<>();
		for (MemberDescription member : description.members()) {
			if (member.assignment()
				.topicPartitions()
				.stream()
				.anyMatch((partition) -> topics.contains(partition.topic()))) {
				members.add(member.clientId() + "@" + member.host());
			}
		}
		return members;
	}

	private static Map<TopicPartition, OffsetAndMetadata> groupOffsets(Admin admin, String group) {
		try {
			return get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata(),
					"read the offsets of group '" + group + "'");
		}
		catch (KafkaException ex) {
			if (ex.getCause() instanceof GroupIdNotFoundException) {
				return Map.of();
			}
			throw ex;
		}
	}

	private static <T> T get(KafkaFuture<T> future, String what) {
		return KafkaFutures.await(future, TIMEOUT, what);
	}

}
