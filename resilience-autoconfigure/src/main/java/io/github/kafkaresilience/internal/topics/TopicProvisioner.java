package io.github.kafkaresilience.internal.topics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

import io.github.kafkaresilience.internal.ladder.Delays;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.ladder.LadderStartupException;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.jspecify.annotations.Nullable;

/**
 * Creates the retry, dead-letter and lock topics of a ladder with the main topic's
 * partition count, and checks existing ones. Startup fails, with a
 * {@link LadderStartupException} that names the topic and the fix, when the main topic is
 * missing, a topic has another partition count, the lock topic is not compacted alone, a
 * retry or dead-letter topic is compacted, a retry topic keeps its records for less than
 * twice its delay, or the group still has records waiting under the names of releases
 * before group-scoped ladders ({@link UnscopedLadderCheck}).
 * <p>
 * A hop adds headers to a record, so when the main topic was given its own
 * {@code max.message.bytes}, the retry and dead-letter topics created here accept that
 * much plus {@link ProtocolHeaders#HEADER_ALLOWANCE}; existing ones that accept less than
 * the main topic are logged.
 *
 */
final class TopicProvisioner {

	private static final Log logger = LogFactory.getLog(TopicProvisioner.class);

	/**
	 * Kafka's default {@code message.max.bytes}: what a topic accepts unless configured.
	 */
	static final int DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024 + 12;

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final String BROKER = "<broker>";

	private final Map<String, Object> adminConfig;

	private final LadderTopics.Topics settings;

	TopicProvisioner(Map<String, Object> adminConfig, LadderTopics.Topics settings) {
		this.adminConfig = Map.copyOf(adminConfig);
		this.settings = settings;
	}

	/**
	 * Makes sure every topic of the plan exists, aligned with the main topic.
	 * @return the partition count of the main topic
	 * @throws LadderStartupException when a topic is missing or misconfigured
	 * @see #provisionLadder(LadderPlan)
	 */
	public int provision(LadderPlan plan) {
		return provisionLadder(plan).partitions();
	}

	/**
	 * Makes sure every topic of the plan exists, aligned with the main topic and
	 * configured so that no waiting record is lost. Everything is checked before a
	 * missing topic is created.
	 * @return the main topic's partition count and the size of the records it accepts
	 * @throws LadderStartupException when a topic is missing or misconfigured, or the
	 * group still has records under the names of an earlier release
	 */
	public LadderTopics.Provisioned provisionLadder(LadderPlan plan) {
		try (Admin admin = Admin.create(this.adminConfig)) {
			TopicDescription main = describe(admin, List.of(plan.mainTopic())).get(plan.mainTopic());
			if (main == null) {
				throw missingMainTopic(plan);
			}
			int partitions = main.partitions().size();
			boolean moved = this.settings.checkUnscoped() && UnscopedLadderCheck.check(admin, plan);
			Map<String, TopicDescription> own = describe(admin, plan.ownTopics());
			List<String> missing = new ArrayList<>();
			for (String topic : plan.ownTopics()) {
				TopicDescription description = own.get(topic);
				if (description == null) {
					missing.add(topic);
				}
				else if (description.partitions().size() != partitions) {
					throw partitionMismatch(plan, topic, description.partitions().size(), partitions);
				}
			}
			List<String> existing = plan.ownTopics().stream().filter(own::containsKey).toList();
			List<String> described = new ArrayList<>(existing);
			described.add(0, plan.mainTopic());
			Map<String, Config> configs = describeConfigs(admin, described, plan.lockTopic());
			ConfigEntry mainLimit = entry(configs.get(plan.mainTopic()), TopicConfig.MAX_MESSAGE_BYTES_CONFIG);
			int maxMessageBytes = (int) Math.min(Integer.MAX_VALUE, number(mainLimit, DEFAULT_MAX_MESSAGE_BYTES));
			for (String topic : existing) {
				check(plan, topic, configs.get(topic), maxMessageBytes);
			}
			if (!missing.isEmpty()) {
				if (!this.settings.create()) {
					throw missingTopics(plan, missing, partitions);
				}
				checkRetryRetention(plan, missing);
				// the main topic was given a size of its own: a created retry or
				// dead-letter topic
				// gets as much, plus room for the headers of a hop
				boolean ownSize = mainLimit != null
						&& mainLimit.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG;
				Integer ownLimit = ownSize
						? (int) Math.min(Integer.MAX_VALUE, (long) maxMessageBytes + ProtocolHeaders.HEADER_ALLOWANCE)
						: null;
				create(admin, missing.stream().map((topic) -> newTopic(plan, topic, partitions, ownLimit)).toList());
			}
			if (moved) {
				UnscopedLadderCheck.markMoved(admin, plan);
			}
			return new LadderTopics.Provisioned(partitions, maxMessageBytes);
		}
	}

	private NewTopic newTopic(LadderPlan plan, String topic, int partitions, @Nullable Integer maxMessageBytes) {
		Optional<Short> replication = (this.settings.replicationFactor() > 0)
				? Optional.of(this.settings.replicationFactor()) : Optional.empty();
		NewTopic newTopic = new NewTopic(topic, Optional.of(partitions), replication);
		Map<String, String> configs = new HashMap<>();
		if (topic.equals(plan.lockTopic())) {
			configs.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
			configs.put(TopicConfig.SEGMENT_MS_CONFIG, Long.toString(this.settings.lockSegment().toMillis()));
			configs.put(TopicConfig.DELETE_RETENTION_MS_CONFIG,
					Long.toString(this.settings.lockDeleteRetention().toMillis()));
		}
		else {
			Duration retention = topic.equals(plan.dlqTopic()) ? this.settings.dlqRetention()
					: this.settings.retryRetention();
			configs.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE);
			configs.put(TopicConfig.RETENTION_MS_CONFIG, Long.toString(retention.toMillis()));
			if (maxMessageBytes != null) {
				configs.put(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(maxMessageBytes));
			}
		}
		return newTopic.configs(configs);
	}

	private void create(Admin admin, List<NewTopic> topics) {
		for (NewTopic topic : topics) {
			try {
				admin.createTopics(List.of(topic)).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (ExecutionException ex) {
				if (!(ex.getCause() instanceof TopicExistsException)) {
					throw new KafkaException("Could not create topic '" + topic.name() + "'", ex.getCause());
				}
				// another instance created it meanwhile; its partition count is checked
				// next start
			}
			catch (InterruptedException | TimeoutException ex) {
				throw interrupted("create topic '" + topic.name() + "'", ex);
			}
		}
	}

	/**
	 * The retention the library gives the retry topics it creates must keep their records
	 * at least twice each one's delay: the rule {@link #checkRetention} applies to
	 * existing ones. The setting does not matter when every retry topic exists already.
	 */
	private void checkRetryRetention(LadderPlan plan, List<String> missing) {
		Duration retention = this.settings.retryRetention();
		for (LadderPlan.Stage stage : plan.stages()) {
			Duration needed = stage.delay().multipliedBy(2);
			if (missing.contains(stage.topic()) && retention.compareTo(needed) < 0) {
				throw new LadderStartupException(
						"kafka.resilience.topics.retry-retention (" + format(retention)
								+ ") is the retention of the retry topics the library creates, but retry topic '"
								+ stage.topic() + "' has a delay of " + format(stage.delay())
								+ " and must keep its records at least twice as long (" + format(needed)
								+ "), or records are deleted while they wait and are lost.",
						"Set kafka.resilience.topics.retry-retention to " + format(needed) + " or more (default 7d)");
			}
		}
	}

	/** Checks the configuration of an existing topic of the ladder. */
	private void check(LadderPlan plan, String topic, @Nullable Config config, int mainMaxMessageBytes) {
		if (config == null) {
			return; // not allowed to describe it: logged when describing
		}
		Set<String> policy = policy(entry(config, TopicConfig.CLEANUP_POLICY_CONFIG));
		String policyText = String.join(",", policy);
		if (topic.equals(plan.lockTopic())) {
			if (!policy.equals(Set.of(TopicConfig.CLEANUP_POLICY_COMPACT))) {
				throw new LadderStartupException("Lock topic '" + topic + "' has cleanup.policy="
						+ (policy.isEmpty() ? "unknown" : policyText)
						+ " but must be compacted only (cleanup.policy=compact): "
						+ "a lock lives as long as its record waits in the ladder, and with 'delete' the broker deletes "
						+ "locks older than retention.ms, after which their records are skipped as finished and lost.",
						"Fix: " + alter(topic, "cleanup.policy=compact"));
			}
			return;
		}
		int stage = plan.stageOf(topic);
		String role = (stage > 0) ? "Retry topic" : "Dead-letter topic";
		if (policy.contains(TopicConfig.CLEANUP_POLICY_COMPACT)) {
			throw new LadderStartupException(role + " '" + topic + "' has cleanup.policy=" + policyText
					+ " but must have cleanup.policy=delete: compaction keeps only the latest record of each key, so "
					+ ((stage > 0) ? "earlier records of a key waiting there would be lost."
							: "earlier dead letters of a key would be lost."),
					"Fix: " + alter(topic, "cleanup.policy=delete"));
		}
		long accepts = number(entry(config, TopicConfig.MAX_MESSAGE_BYTES_CONFIG), DEFAULT_MAX_MESSAGE_BYTES);
		if (accepts < mainMaxMessageBytes) {
			logger.warn(role + " '" + topic + "' accepts records up to " + accepts + " bytes (max.message.bytes) but '"
					+ plan.mainTopic() + "' accepts " + mainMaxMessageBytes + ": a larger record "
					+ ((stage > 0) ? "cannot be retried and goes to '" + plan.dlqTopic() + "' as permanent"
							: "cannot be dead-lettered, and its partition stops until it can")
					+ ". Fix: " + alter(topic,
							"max.message.bytes=" + ((long) mainMaxMessageBytes + ProtocolHeaders.HEADER_ALLOWANCE)));
		}
		if (stage > 0) {
			checkRetention(plan.stage(stage), config);
		}
	}

	/**
	 * A record waits in a retry topic for the stage's delay, plus the time its key's
	 * earlier records in that stage take to run; a record whose predecessor moved on to a
	 * later stage is forwarded there at once, so a retry topic never holds a record for a
	 * later stage's delay. Its retention must therefore cover its own delay, with a
	 * margin for the earlier records, consumer lag and restarts: twice the delay, the
	 * rule the library applies to the retry topics it creates.
	 */
	private void checkRetention(LadderPlan.Stage stage, Config config) {
		long retention = number(entry(config, TopicConfig.RETENTION_MS_CONFIG), -1);
		long needed = stage.delay().multipliedBy(2).toMillis();
		if (retention >= 0 && retention < needed) {
			long suggested = Math.max(needed, this.settings.retryRetention().toMillis());
			throw new LadderStartupException("Retry topic '" + stage.topic() + "' has retention.ms=" + retention + " ("
					+ format(Duration.ofMillis(retention)) + ") but its delay is " + format(stage.delay())
					+ ": a record waits there for the delay plus the time earlier records of its key take, and one "
					+ "deleted while it waits is lost.",
					"Keep its records at least twice the delay (" + needed + " ms). Fix: "
							+ alter(stage.topic(), "retention.ms=" + suggested));
		}
		long bytes = number(entry(config, TopicConfig.RETENTION_BYTES_CONFIG), -1);
		if (bytes >= 0) {
			logger.warn("Retry topic '" + stage.topic() + "' has retention.bytes=" + bytes + ": once a partition holds "
					+ "more, its oldest records are deleted even while they wait, and each is lost. Fix: "
					+ alter(stage.topic(), "retention.bytes=-1"));
		}
	}

	private LadderStartupException missingMainTopic(LadderPlan plan) {
		String problem = "Topic '" + plan.mainTopic() + "' does not exist.";
		String action = "Create it before the listener starts (kafka-topics --bootstrap-server " + BROKER
				+ " --create --topic " + plan.mainTopic() + " --partitions <n>, or a NewTopic bean), or correct the "
				+ "listener's topics";
		if (this.settings.create()) {
			return new LadderStartupException(
					problem + " The library never creates a main topic: its retry, dead-letter "
							+ "and lock topics take its partition count, which only you can choose.",
					action);
		}
		return new LadderStartupException(problem,
				action + ". As kafka.resilience.topics.create is false, also create " + plan.ownTopics()
						+ " with the same partition count (the lock topic with cleanup.policy=compact), or set "
						+ "kafka.resilience.topics.create=true");
	}

	private LadderStartupException missingTopics(LadderPlan plan, List<String> missing, int partitions) {
		String problem = "Topics " + missing + " of '" + plan.mainTopic() + "' do not exist and "
				+ "kafka.resilience.topics.create is false.";
		String action = "Create them with " + partitions + " partitions, like '" + plan.mainTopic()
				+ "' (kafka-topics --bootstrap-server " + BROKER + " --create --topic <name> --partitions " + partitions
				+ ", adding --config cleanup.policy=compact for the lock topic '" + plan.lockTopic()
				+ "'), or set kafka.resilience.topics.create=true";
		return new LadderStartupException(problem, action);
	}

	private static LadderStartupException partitionMismatch(LadderPlan plan, String topic, int has, int partitions) {
		String problem = "Topic '" + topic + "' has " + has + " partitions but '" + plan.mainTopic() + "' has "
				+ partitions
				+ "; retry, dead-letter and lock topics must match the main topic, as everything about a key lives in the "
				+ "same partition number of each.";
		if (has < partitions) {
			return new LadderStartupException(problem, "If partitions were added to '" + plan.mainTopic()
					+ "' while records waited in the ladder, drain it first (operations guide, 'Scaling out'); otherwise "
					+ "give it " + partitions + " partitions: kafka-topics --bootstrap-server " + BROKER
					+ " --alter --topic " + topic + " --partitions " + partitions);
		}
		return new LadderStartupException(problem, "A topic cannot lose partitions: add partitions to '"
				+ plan.mainTopic()
				+ "' to match (after draining the ladder, operations guide, 'Scaling out'), or delete '" + topic
				+ "' once nothing in it is still needed (no live locks, no lag on the retry topics, dead letters "
				+ "replayed) and let the library create it again with " + partitions + " partitions");
	}

	private static String alter(String topic, String config) {
		return "kafka-configs --bootstrap-server " + BROKER + " --alter --entity-type topics --entity-name " + topic
				+ " --add-config " + config;
	}

	/**
	 * The configurations of topics. One the application may not describe is logged and
	 * left out, except the lock topic's: its cleanup policy decides whether locks
	 * survive.
	 */
	private Map<String, Config> describeConfigs(Admin admin, List<String> topics, String lockTopic) {
		List<ConfigResource> resources = topics.stream()
			.map((topic) -> new ConfigResource(ConfigResource.Type.TOPIC, topic))
			.toList();
		Map<ConfigResource, KafkaFuture<Config>> futures = admin.describeConfigs(resources).values();
		Map<String, Config> configs = new LinkedHashMap<>();
		for (ConfigResource resource : resources) {
			try {
				configs.put(resource.name(),
						Objects.requireNonNull(futures.get(resource)).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
			}
			catch (ExecutionException ex) {
				if (ex.getCause() instanceof AuthorizationException && !resource.name().equals(lockTopic)) {
					logger
						.warn("Not allowed to describe the configuration of '" + resource.name() + "'; its retention, "
								+ "cleanup policy and record size are not checked (grant DescribeConfigs on it)");
					continue;
				}
				throw new KafkaException("Could not read the configuration of '" + resource.name() + "'",
						ex.getCause());
			}
			catch (InterruptedException | TimeoutException ex) {
				throw interrupted("describe the configuration of '" + resource.name() + "'", ex);
			}
		}
		return configs;
	}

	private Map<String, TopicDescription> describe(Admin admin, Collection<String> topics) {
		Map<String, TopicDescription> found = new HashMap<>();
		admin.describeTopics(topics).topicNameValues().forEach((name, future) -> {
			try {
				found.put(name, future.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
			}
			catch (ExecutionException ex) {
				if (!(ex.getCause() instanceof UnknownTopicOrPartitionException)) {
					throw new KafkaException("Could not describe topic '" + name + "'", ex.getCause());
				}
			}
			catch (InterruptedException | TimeoutException ex) {
				throw interrupted("describe topic '" + name + "'", ex);
			}
		});
		return found;
	}

	private static @Nullable ConfigEntry entry(@Nullable Config config, String name) {
		return (config != null) ? config.get(name) : null;
	}

	private static long number(@Nullable ConfigEntry entry, long otherwise) {
		if (entry == null || entry.value() == null) {
			return otherwise;
		}
		try {
			return Long.parseLong(entry.value().trim());
		}
		catch (NumberFormatException ex) {
			return otherwise;
		}
	}

	/**
	 * The policies of a {@code cleanup.policy} value, a list such as
	 * {@code compact,delete}.
	 */
	private static Set<String> policy(@Nullable ConfigEntry entry) {
		if (entry == null || entry.value() == null) {
			return Set.of();
		}
		return Arrays.stream(entry.value().split(","))
			.map(String::trim)
			.filter((value) -> !value.isEmpty())
			.collect(Collectors.toCollection(TreeSet::new));
	}

	private static String format(Duration duration) {
		if (duration.isNegative() || duration.isZero() || duration.toNanosPart() % 1_000_000 != 0) {
			return duration.toString();
		}
		return Delays.format(duration);
	}

	private KafkaException interrupted(String what, Exception ex) {
		if (ex instanceof InterruptedException) {
			Thread.currentThread().interrupt();
		}
		return new KafkaException("Timed out or interrupted trying to " + what, ex);
	}

}
