package io.github.kafkaresilience.ladder;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The topics of one main topic's ladder: its retry stages (one topic per delay), its
 * dead-letter topic and its lock topic, with the number of attempts a record gets.
 *
 * @param mainTopic the user's topic
 * @param stages the retry stages, stage 1 first
 * @param dlqTopic the dead-letter topic
 * @param lockTopic the compacted lock topic
 * @param maxAttempts attempts before a record is dead-lettered, the first one included
 * @since 0.1.0
 */
public record LadderPlan(String mainTopic, List<Stage> stages, String dlqTopic, String lockTopic, int maxAttempts) {

	/** Default name template of a retry topic. */
	public static final String DEFAULT_RETRY_TEMPLATE = "{topic}.retry.{delay}";

	/** Default name template of a dead-letter topic. */
	public static final String DEFAULT_DLQ_TEMPLATE = "{topic}.dlq";

	/** Default name template of a lock topic. */
	public static final String DEFAULT_LOCK_TEMPLATE = "{topic}.locks";

	/**
	 * One retry stage.
	 * @param index the stage number, from 1
	 * @param delay how long a retried record waits in this stage before it runs again
	 * @param topic the stage's topic
	 */
	public record Stage(int index, Duration delay, String topic) {
	}

	public LadderPlan {
		stages = List.copyOf(stages);
		if (maxAttempts < 1) {
			throw new IllegalArgumentException("max-attempts must be at least 1 but was " + maxAttempts + " for topic '"
					+ mainTopic + "'");
		}
		if (stages.isEmpty() && maxAttempts > 1) {
			throw new IllegalArgumentException("Topic '" + mainTopic + "' allows " + maxAttempts
					+ " attempts but has no retry delays; set kafka.resilience.retry.delays or max-attempts 1");
		}
	}

	/**
	 * Builds the plan of a main topic from name templates ({@code {topic}} and {@code {delay}}
	 * are replaced).
	 * @param maxAttempts the attempts, or {@code null} for one more than the number of stages
	 */
	public static LadderPlan of(String mainTopic, List<Duration> delays, Integer maxAttempts, String retryTemplate,
			String dlqTemplate, String lockTemplate) {
		List<Stage> stages = new ArrayList<>();
		Set<String> names = new HashSet<>();
		for (Duration delay : delays) {
			String topic = retryTemplate.replace("{topic}", mainTopic).replace("{delay}", Delays.format(delay));
			if (!names.add(topic)) {
				throw new IllegalArgumentException("Retry delays of topic '" + mainTopic + "' give the topic name '" + topic
						+ "' twice; use distinct delays (" + delays + ")");
			}
			stages.add(new Stage(stages.size() + 1, delay, topic));
		}
		int attempts = (maxAttempts != null) ? maxAttempts : stages.size() + 1;
		return new LadderPlan(mainTopic, stages, dlqTemplate.replace("{topic}", mainTopic),
				lockTemplate.replace("{topic}", mainTopic), attempts);
	}

	public Stage stage(int index) {
		return this.stages.get(index - 1);
	}

	public int lastStage() {
		return this.stages.size();
	}

	/** Stage number of a topic of this ladder: 0 for the main topic, -1 if it is not one of ours. */
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

	/** Every topic of the ladder but the main one: what the library creates. */
	public List<String> ownTopics() {
		List<String> topics = new ArrayList<>();
		this.stages.forEach((stage) -> topics.add(stage.topic()));
		topics.add(this.dlqTopic);
		topics.add(this.lockTopic);
		return topics;
	}

}
