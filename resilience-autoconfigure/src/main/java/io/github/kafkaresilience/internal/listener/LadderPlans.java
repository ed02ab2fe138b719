package io.github.kafkaresilience.internal.listener;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

import io.github.kafkaresilience.internal.ladder.LadderPlan;
import org.jspecify.annotations.Nullable;

/**
 * Names the ladders of the application's listeners (not provisioned): one per consumer
 * group and main topic, with the listener's own delays and attempts or the defaults, and
 * checks that every topic plays one role in one ladder.
 */
public final class LadderPlans {

	private final BiFunction<ListenerEndpoint, String, LadderPlan> plans;

	/**
	 * @param plans the ladder of a listener's group on one of its topics, as its
	 * container factory names it
	 */
	public LadderPlans(BiFunction<ListenerEndpoint, String, LadderPlan> plans) {
		this.plans = plans;
	}

	/** The ladder of a listener's group on one of its topics. */
	LadderPlan plan(ListenerEndpoint endpoint, String topic) {
		return this.plans.apply(endpoint, topic);
	}

	/**
	 * The ladder of a consumer group on a main topic, as one of the listeners names it.
	 * @param endpoints the application's listeners
	 * @param group the consumer group, or {@code null} for the only group that consumes
	 * {@code mainTopic}
	 * @throws IllegalArgumentException when no listener consumes the topic in that group,
	 * or several groups do and none was named
	 */
	public LadderPlan ladder(List<ListenerEndpoint> endpoints, @Nullable String group, String mainTopic) {
		List<ListenerEndpoint> consuming = endpoints.stream()
			.filter((endpoint) -> endpoint.topics().contains(mainTopic))
			.toList();
		if (consuming.isEmpty()) {
			throw new IllegalArgumentException(
					"No @OrderedRetryListener of this application consumes '" + mainTopic + "'; consumed here: "
							+ endpoints.stream().flatMap((e) -> e.topics().stream()).distinct().toList());
		}
		List<ListenerEndpoint> inGroup = consuming.stream()
			.filter((endpoint) -> group == null || endpoint.groupId().equals(group))
			.toList();
		if (inGroup.isEmpty()) {
			throw new IllegalArgumentException("No @OrderedRetryListener of this application consumes '" + mainTopic
					+ "' in group '" + group + "'; it is consumed here in " + groupsOf(consuming));
		}
		if (inGroup.size() > 1) {
			throw new IllegalArgumentException("'" + mainTopic + "' is consumed here in " + groupsOf(inGroup)
					+ "; name the consumer group whose ladder is meant");
		}
		return plan(inGroup.get(0), mainTopic);
	}

	/**
	 * Every topic plays one role in one ladder: two ladders (of two groups, or of two
	 * main topics) sharing a retry, dead-letter or lock topic would mix their records and
	 * locks, and a listener consuming another ladder's topic as its main topic would take
	 * that ladder's records for fresh ones. Checked on the plans, before any topic is
	 * created.
	 * @throws IllegalStateException naming the topic, both roles and the fix
	 */
	public void checkTopicsAreDistinct(List<ListenerEndpoint> endpoints) {
		record Role(String mainTopic, boolean main, String description) {
		}
		Map<String, Role> roles = new HashMap<>();
		for (ListenerEndpoint endpoint : endpoints) {
			for (String topic : endpoint.topics()) {
				LadderPlan plan = plan(endpoint, topic);
				String of = " of '" + topic + "' (listener '" + endpoint.id() + "', group '" + endpoint.groupId()
						+ "')";
				List<Map.Entry<String, String>> named = new ArrayList<>();
				named.add(Map.entry(topic, "main topic of listener '" + endpoint.id() + "'"));
				plan.stages()
					.forEach((stage) -> named
						.add(Map.entry(stage.topic(), "retry topic (stage " + stage.index() + ")" + of)));
				named.add(Map.entry(plan.dlqTopic(), "dead-letter topic" + of));
				named.add(Map.entry(plan.lockTopic(), "lock topic" + of));
				for (Map.Entry<String, String> entry : named) {
					String name = entry.getKey();
					boolean main = name.equals(topic);
					Role other = roles.putIfAbsent(name, new Role(topic, main, entry.getValue()));
					if (other == null || (main && other.main())) {
						continue; // a main topic read by listeners of several groups
									// (each its own ladder)
					}
					boolean consumesAnother = !other.mainTopic().equals(topic)
							&& (name.equals(topic) || name.equals(other.mainTopic()));
					throw new IllegalStateException("Topic '" + name + "' is both the " + other.description()
							+ " and the " + entry.getValue()
							+ "; a topic may play only one role in one ladder, or the ladders would mix "
							+ "their records and locks. "
							+ (consumesAnother
									? "Do not consume another ladder's retry, dead-letter or lock topic with "
											+ "@OrderedRetryListener (a DlqHandler bean handles dead letters, and a replay "
											+ "sends them back), or make the templates give other names: "
									: "Fix the templates: ")
							+ "kafka.resilience.topics.retry-template, dlq-template and lock-template must each contain "
							+ "{group}, {topic} and a suffix of their own (the retry template {delay} too)");
				}
			}
		}
	}

	private static List<String> groupsOf(List<ListenerEndpoint> endpoints) {
		return endpoints.stream().map((endpoint) -> "group '" + endpoint.groupId() + "'").toList();
	}

}
