package io.github.kafkaresilience.ladder;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Creates the retry, dead-letter and lock topics of a ladder with the main topic's partition
 * count, and checks existing ones: a different partition count, or a lock topic that is not
 * compacted, fails startup with a message that names the topic and the fix.
 *
 * @since 0.1.0
 */
public class TopicProvisioner {

	/**
	 * How the library's own topics are created.
	 * @param create whether missing topics are created
	 * @param replicationFactor replication factor of created topics, -1 for the broker default
	 * @param retryRetention retention of retry topics
	 * @param dlqRetention retention of dead-letter topics
	 * @param lockSegment segment time of lock topics (compaction only cleans closed segments)
	 * @param lockDeleteRetention how long lock tombstones are kept
	 */
	public record Settings(boolean create, short replicationFactor, Duration retryRetention, Duration dlqRetention,
			Duration lockSegment, Duration lockDeleteRetention) {
	}

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final Map<String, Object> adminConfig;

	private final Settings settings;

	public TopicProvisioner(Map<String, Object> adminConfig, Settings settings) {
		this.adminConfig = Map.copyOf(adminConfig);
		this.settings = settings;
	}

	/**
	 * Makes sure every topic of the plan exists, aligned with the main topic.
	 * @return the partition count of the main topic
	 * @throws IllegalStateException when a topic is missing or misconfigured
	 */
	public int provision(LadderPlan plan) {
		Duration longestDelay = plan.stages().stream().map(LadderPlan.Stage::delay).max(Duration::compareTo)
			.orElse(Duration.ZERO);
		if (!plan.stages().isEmpty() && this.settings.retryRetention().compareTo(longestDelay.multipliedBy(2)) < 0) {
			throw new IllegalStateException("kafka.resilience.topics.retry-retention (" + this.settings.retryRetention()
					+ ") must be at least twice the longest retry delay of '" + plan.mainTopic() + "' (" + longestDelay
					+ "), or waiting records are deleted before they run");
		}
		try (Admin admin = Admin.create(this.adminConfig)) {
			Map<String, TopicDescription> existing = describe(admin, plan.consumedTopics().subList(0, 1));
			TopicDescription main = existing.get(plan.mainTopic());
			if (main == null) {
				throw new IllegalStateException("Topic '" + plan.mainTopic()
						+ "' does not exist; create it before the listener starts (its retry, dead-letter and lock topics "
						+ "are created with its partition count)");
			}
			int partitions = main.partitions().size();
			Map<String, TopicDescription> own = describe(admin, plan.ownTopics());
			List<NewTopic> missing = new ArrayList<>();
			for (String topic : plan.ownTopics()) {
				TopicDescription description = own.get(topic);
				if (description == null) {
					missing.add(newTopic(plan, topic, partitions));
				}
				else if (description.partitions().size() != partitions) {
					throw new IllegalStateException("Topic '" + topic + "' has " + description.partitions().size()
							+ " partitions but '" + plan.mainTopic() + "' has " + partitions
							+ "; retry, dead-letter and lock topics must match the main topic (recreate '" + topic
							+ "' with " + partitions + " partitions)");
				}
			}
			if (!missing.isEmpty()) {
				if (!this.settings.create()) {
					throw new IllegalStateException("Topics " + missing.stream().map(NewTopic::name).toList()
							+ " do not exist and kafka.resilience.topics.create is false; create them with " + partitions
							+ " partitions (the lock topic compacted)");
				}
				create(admin, missing);
			}
			if (own.containsKey(plan.lockTopic())) {
				checkCompacted(admin, plan.lockTopic());
			}
			return partitions;
		}
	}

	private NewTopic newTopic(LadderPlan plan, String topic, int partitions) {
		Optional<Short> replication = (this.settings.replicationFactor() > 0)
				? Optional.of(this.settings.replicationFactor()) : Optional.empty();
		NewTopic newTopic = new NewTopic(topic, Optional.of(partitions), replication);
		Map<String, String> configs = new HashMap<>();
		if (topic.equals(plan.lockTopic())) {
			configs.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
			configs.put(TopicConfig.SEGMENT_MS_CONFIG, Long.toString(this.settings.lockSegment().toMillis()));
			configs.put(TopicConfig.DELETE_RETENTION_MS_CONFIG, Long.toString(this.settings.lockDeleteRetention().toMillis()));
		}
		else {
			Duration retention = topic.equals(plan.dlqTopic()) ? this.settings.dlqRetention() : this.settings.retryRetention();
			configs.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE);
			configs.put(TopicConfig.RETENTION_MS_CONFIG, Long.toString(retention.toMillis()));
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
				// another instance created it meanwhile; its partition count is checked next start
			}
			catch (InterruptedException | TimeoutException ex) {
				throw interrupted("create topic '" + topic.name() + "'", ex);
			}
		}
	}

	private void checkCompacted(Admin admin, String lockTopic) {
		ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, lockTopic);
		try {
			Config config = admin.describeConfigs(List.of(resource)).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
				.get(resource);
			ConfigEntry policy = config.get(TopicConfig.CLEANUP_POLICY_CONFIG);
			if (policy == null || !policy.value().contains(TopicConfig.CLEANUP_POLICY_COMPACT)) {
				throw new IllegalStateException("Lock topic '" + lockTopic + "' has cleanup.policy="
						+ ((policy != null) ? policy.value() : "unknown")
						+ " but must be compacted; set cleanup.policy=compact on it");
			}
		}
		catch (ExecutionException ex) {
			throw new KafkaException("Could not read the configuration of '" + lockTopic + "'", ex.getCause());
		}
		catch (InterruptedException | TimeoutException ex) {
			throw interrupted("describe topic '" + lockTopic + "'", ex);
		}
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

	private KafkaException interrupted(String what, Exception ex) {
		if (ex instanceof InterruptedException) {
			Thread.currentThread().interrupt();
		}
		return new KafkaException("Timed out or interrupted trying to " + what, ex);
	}

}
