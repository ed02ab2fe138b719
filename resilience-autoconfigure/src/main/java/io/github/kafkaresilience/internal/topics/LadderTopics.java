package io.github.kafkaresilience.internal.topics;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.ladder.LadderStartupException;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import org.apache.kafka.clients.consumer.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The topics of this instance's retry ladders: names them from the configured templates,
 * creates or checks them, and checks at startup that no other consumer group wrote to
 * them.
 *
 * @since 0.1.0
 */
public class LadderTopics {

	/**
	 * Name templates of the library's topics; {@code {group}} is the listener's consumer
	 * group, {@code {topic}} the main topic and {@code {delay}} the stage delay in its
	 * shortest exact unit.
	 *
	 * @param retry retry topic template
	 * @param dlq dead-letter topic template
	 * @param locks lock topic template
	 */
	public record Naming(String retry, String dlq, String locks) {

		public static Naming defaults() {
			return new Naming(LadderPlan.DEFAULT_RETRY_TEMPLATE, LadderPlan.DEFAULT_DLQ_TEMPLATE,
					LadderPlan.DEFAULT_LOCK_TEMPLATE);
		}

	}

	/**
	 * How the ladders' topics are created and checked.
	 *
	 * @param create whether missing topics are created
	 * @param replicationFactor replication factor of created topics, -1 for the broker
	 * default
	 * @param retryRetention retention of retry topics
	 * @param dlqRetention retention of dead-letter topics
	 * @param lockSegment segment time of lock topics (compaction only cleans closed
	 * segments)
	 * @param lockDeleteRetention how long lock tombstones are kept
	 * @param checkUnscoped whether a group-scoped ladder first checks that its group has
	 * nothing waiting under the topic names of releases before group-scoped ladders
	 */
	public record Topics(boolean create, short replicationFactor, Duration retryRetention, Duration dlqRetention,
			Duration lockSegment, Duration lockDeleteRetention, boolean checkUnscoped) {

		/** Settings that check the earlier names. */
		public Topics(boolean create, short replicationFactor, Duration retryRetention, Duration dlqRetention,
				Duration lockSegment, Duration lockDeleteRetention) {
			this(create, replicationFactor, retryRetention, dlqRetention, lockSegment, lockDeleteRetention, true);
		}

	}

	private final Naming naming;

	private final TopicProvisioner provisioner;

	/**
	 * @param naming the name templates of the ladders' topics
	 * @param adminConfig the configuration of the admin clients that create or check the
	 * topics of a ladder
	 * @param topics how the topics are created and checked
	 */
	public LadderTopics(Naming naming, Map<String, Object> adminConfig, Topics topics) {
		this.naming = naming;
		this.provisioner = new TopicProvisioner(adminConfig, topics);
	}

	/** The ladder of a consumer group on a main topic. */
	public LadderPlan plan(String group, String mainTopic, List<Duration> delays, @Nullable Integer maxAttempts) {
		return LadderPlan.of(group, mainTopic, delays, maxAttempts, this.naming.retry(), this.naming.dlq(),
				this.naming.locks());
	}

	/**
	 * Creates or checks the topics of a plan.
	 * @param plan the ladder
	 * @return what provisioning found out about its main topic
	 * @throws LadderStartupException naming the topic, what is wrong and the fix
	 */
	public Provisioned provision(LadderPlan plan) {
		return this.provisioner.provisionLadder(plan);
	}

	/**
	 * The startup check of a ladder's ownership (docs/PROTOCOL.md, "Topics"): refuses to
	 * start when another consumer group wrote live locks to its lock topic or records
	 * among the latest of its retry and dead-letter partitions.
	 * @param plan the ladder, whose lock tailer runs
	 * @param locks the ladder's locks
	 * @param consumers creates a consumer outside any group, reading from the earliest
	 * offset
	 * @param timeout how long the lock tailer may take to catch up, and the latest
	 * records to be read
	 * @throws LadderStartupException naming the groups, the topics and the fix when
	 * another group wrote to them
	 */
	public void checkOwnership(LadderPlan plan, LockRegistry locks, Supplier<Consumer<byte[], byte[]>> consumers,
			Duration timeout) {
		new OwnershipCheck(consumers, timeout).check(plan, locks);
	}

	/**
	 * What provisioning a ladder found out about its main topic.
	 *
	 * @param partitions the partition count of the main topic, shared by every topic of
	 * the ladder
	 * @param maxMessageBytes the main topic's {@code max.message.bytes}: the largest
	 * record batch it accepts, and so about the largest record the ladder has to move
	 */
	public record Provisioned(int partitions, int maxMessageBytes) {
	}

}
