package io.github.kafkaresilience.internal.ladder;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.ladder.LadderStartupException;
import org.jspecify.annotations.Nullable;

/**
 * The topics of one consumer group's ladder on one main topic: its retry stages (one
 * topic per delay), its dead-letter topic and its lock topic, with the number of attempts
 * a record gets. A ladder belongs to one group: other groups reading the same main topic
 * have ladders of their own.
 *
 * @param group the consumer group that owns the ladder
 * @param mainTopic the user's topic
 * @param stages the retry stages, stage 1 first
 * @param dlqTopic the dead-letter topic
 * @param lockTopic the compacted lock topic
 * @param maxAttempts attempts before a record is dead-lettered, the first one included
 * @param scoped whether every name of the ladder contains the group (all three templates
 * have {@code {group}}): then a record on its topics without an {@code owner.group}
 * header was not written by the library for this group and is never acted on
 * @since 0.1.0
 */
public record LadderPlan(String group, String mainTopic, List<Stage> stages, String dlqTopic, String lockTopic,
		int maxAttempts, boolean scoped) {

	/** Default name template of a retry topic. */
	public static final String DEFAULT_RETRY_TEMPLATE = "{group}.{topic}.retry.{delay}";

	/** Default name template of a dead-letter topic. */
	public static final String DEFAULT_DLQ_TEMPLATE = "{group}.{topic}.dlq";

	/** Default name template of a lock topic. */
	public static final String DEFAULT_LOCK_TEMPLATE = "{group}.{topic}.locks";

	/** The retry topic template of releases before ladders were scoped to a group. */
	public static final String UNSCOPED_RETRY_TEMPLATE = "{topic}.retry.{delay}";

	/**
	 * The dead-letter topic template of releases before ladders were scoped to a group.
	 */
	public static final String UNSCOPED_DLQ_TEMPLATE = "{topic}.dlq";

	/** The lock topic template of releases before ladders were scoped to a group. */
	public static final String UNSCOPED_LOCK_TEMPLATE = "{topic}.locks";

	/** The placeholder of the consumer group in a name template. */
	public static final String GROUP = "{group}";

	/** What Kafka allows in a topic name. */
	private static final Pattern LEGAL = Pattern.compile("[a-zA-Z0-9._-]+");

	/** The longest topic name Kafka allows. */
	private static final int MAX_NAME_LENGTH = 249;

	private static final String TEMPLATES = "kafka.resilience.topics.retry-template, dlq-template and lock-template";

	/**
	 * One retry stage.
	 *
	 * @param index the stage number, from 1
	 * @param delay how long a retried record waits in this stage before it runs again
	 * @param topic the stage's topic
	 */
	public record Stage(int index, Duration delay, String topic) {
	}

	public LadderPlan {
		stages = List.copyOf(stages);
		if (maxAttempts < 1) {
			throw new IllegalArgumentException(
					"max-attempts must be at least 1 but was " + maxAttempts + " for topic '" + mainTopic + "'");
		}
		if (stages.isEmpty() && maxAttempts > 1) {
			throw new IllegalArgumentException("Topic '" + mainTopic + "' allows " + maxAttempts
					+ " attempts but has no retry delays; set kafka.resilience.retry.delays or max-attempts 1");
		}
	}

	/**
	 * Builds the ladder of a group on a main topic from name templates ({@code {group}},
	 * {@code {topic}} and {@code {delay}} are replaced).
	 * @param maxAttempts the attempts, or {@code null} for one more than the number of
	 * stages
	 * @throws LadderStartupException when the group cannot be part of a topic name
	 * (naming the properties to set)
	 * @throws IllegalArgumentException when a name is not a legal topic name, or two
	 * delays give one name
	 */
	public static LadderPlan of(String group, String mainTopic, List<Duration> delays, @Nullable Integer maxAttempts,
			String retryTemplate, String dlqTemplate, String lockTemplate) {
		boolean scoped = retryTemplate.contains(GROUP) && dlqTemplate.contains(GROUP) && lockTemplate.contains(GROUP);
		if ((retryTemplate + dlqTemplate + lockTemplate).contains(GROUP) && !isLegalPart(group)) {
			throw new LadderStartupException(
					"Consumer group '" + group + "' (topic '" + mainTopic + "') cannot be part "
							+ "of a topic name: Kafka allows only letters, digits, '.', '_' and '-' there, but "
							+ TEMPLATES + " put the group into the names of its retry, dead-letter and lock topics.",
					"Give the listener a group id made of those characters, or set the three templates with a fixed name "
							+ "of your own in place of {group}, for example billing.{topic}.retry.{delay}, "
							+ "billing.{topic}.dlq and billing.{topic}.locks");
		}
		List<Stage> stages = new ArrayList<>();
		Set<String> names = new HashSet<>();
		for (Duration delay : delays) {
			String topic = legal(name(retryTemplate, group, mainTopic).replace("{delay}", Delays.format(delay)),
					"retry", group, mainTopic);
			if (!names.add(topic)) {
				throw new IllegalArgumentException("Retry delays of topic '" + mainTopic + "' give the topic name '"
						+ topic + "' twice; use distinct delays (" + delays + ")");
			}
			stages.add(new Stage(stages.size() + 1, delay, topic));
		}
		int attempts = (maxAttempts != null) ? maxAttempts : stages.size() + 1;
		return new LadderPlan(group, mainTopic, stages,
				legal(name(dlqTemplate, group, mainTopic), "dlq", group, mainTopic),
				legal(name(lockTemplate, group, mainTopic), "lock", group, mainTopic), attempts, scoped);
	}

	private static String name(String template, String group, String mainTopic) {
		return template.replace(GROUP, group).replace("{topic}", mainTopic);
	}

	private static boolean isLegalPart(String text) {
		return LEGAL.matcher(text).matches();
	}

	private static String legal(String name, String role, String group, String mainTopic) {
		if (!isLegalPart(name) || name.equals(".") || name.equals("..") || name.length() > MAX_NAME_LENGTH) {
			throw new IllegalArgumentException("The " + role + " topic of group '" + group + "' on '" + mainTopic
					+ "' would be named '" + name + "', which is not a legal topic name (at most " + MAX_NAME_LENGTH
					+ " letters, digits, '.', '_' or '-'; it has " + name.length()
					+ " characters); set kafka.resilience.topics." + role
					+ "-template to give a shorter or legal name");
		}
		return name;
	}

	public Stage stage(int index) {
		return this.stages.get(index - 1);
	}

	public int lastStage() {
		return this.stages.size();
	}

	/**
	 * Stage number of a topic of this ladder: 0 for the main topic, -1 if it is not one
	 * of ours.
	 */
	public int stageOf(String topic) {
		if (this.mainTopic.equals(topic)) {
			return 0;
		}
		for (Stage stage : this.stages) {
			if (stage.topic().equals(topic)) {
				return stage.index();
			}
		}
		return -1;
	}

	/** The topic of a stage: the main topic for stage 0. */
	public String topicOf(int stage) {
		return (stage == 0) ? this.mainTopic : stage(stage).topic();
	}

	/** The main topic followed by every stage topic: what a listener consumes. */
	public List<String> consumedTopics() {
		List<String> topics = new ArrayList<>();
		topics.add(this.mainTopic);
		this.stages.forEach((stage) -> topics.add(stage.topic()));
		return topics;
	}

	/**
	 * Every topic of the ladder but the main one: what the library creates, and what the
	 * group owns.
	 */
	public List<String> ownTopics() {
		List<String> topics = new ArrayList<>();
		this.stages.forEach((stage) -> topics.add(stage.topic()));
		topics.add(this.dlqTopic);
		topics.add(this.lockTopic);
		return topics;
	}

	/**
	 * A new check of which records on the ladder's topics belong to its group; share one
	 * per ladder, so that its counts cover every reader.
	 */
	public Ownership ownership() {
		return new Ownership(this.group, this.scoped, ownTopics());
	}

	/** The ladder as it is named in messages: its group and main topic. */
	public String describe() {
		return "group '" + this.group + "' on '" + this.mainTopic + "'";
	}

}
