package io.github.kafkaresilience.internal.lock;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Future;
import java.util.function.Consumer;

import io.github.kafkaresilience.internal.support.KafkaFutures;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Releases zombie locks: live locks whose record can no longer be consumed, so that
 * nothing would ever release them and their key would wait forever. A confirmed lock is a
 * zombie when its carrier's offset lies below the group's committed offset or the
 * partition's log start (retention shorter than a delay, a manual offset reset); a moving
 * lock is one when its source record has been committed or deleted. Only locks unchanged
 * for a grace period are considered, and each is checked again on a caught-up table
 * before its tombstone is written. Every reaped lock means a record was lost outside the
 * protocol, so each is logged at ERROR.
 *
 * @since 0.1.0
 */
public class LockReaper {

	private static final Log logger = LogFactory.getLog(LockReaper.class);

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	/** Names the topic of a stage (0 is the main topic). */
	@FunctionalInterface
	public interface StageTopics {

		String topicOf(int stage);

	}

	private final String groupId;

	private final StageTopics topics;

	private final LockRegistry registry;

	private final Admin admin;

	private final Duration grace;

	private final Clock clock;

	private final Consumer<Lock> onReaped;

	public LockReaper(String groupId, StageTopics topics, LockRegistry registry, Admin admin, Duration grace,
			Clock clock, Consumer<Lock> onReaped) {
		this.groupId = groupId;
		this.topics = topics;
		this.registry = registry;
		this.admin = admin;
		this.grace = grace;
		this.clock = clock;
		this.onReaped = onReaped;
	}

	/**
	 * Looks for zombie locks once and releases them.
	 * @return the number of locks released
	 */
	public int reap() {
		endVoidCommands();
		long now = this.clock.millis();
		List<Lock> candidates = new ArrayList<>();
		for (Lock lock : this.registry.snapshot()) {
			if (now - lock.updated().toEpochMilli() >= this.grace.toMillis()) {
				candidates.add(lock);
			}
		}
		if (candidates.isEmpty()) {
			return 0;
		}
		Map<TopicPartition, OffsetAndMetadata> committed = get(
				this.admin.listConsumerGroupOffsets(this.groupId).partitionsToOffsetAndMetadata());
		Map<TopicPartition, OffsetSpec> wanted = new HashMap<>();
		candidates.forEach((lock) -> wanted.put(recordOf(lock), OffsetSpec.earliest()));
		Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> logStarts = get(
				this.admin.listOffsets(wanted).all());
		int reaped = 0;
		for (Lock lock : candidates) {
			TopicPartition partition = recordOf(lock);
			long offset = lock.isMoving() ? Objects.requireNonNull(lock.from()).offset()
					: Objects.requireNonNull(lock.at());
			OffsetAndMetadata groupOffset = committed.get(partition);
			ListOffsetsResult.ListOffsetsResultInfo logStart = logStarts.get(partition);
			boolean gone = (groupOffset != null && groupOffset.offset() > offset)
					|| (logStart != null && logStart.offset() > offset);
			if (gone && stillTheSame(lock)) {
				this.registry.release(lock);
				reaped++;
				logger.error("Released zombie lock " + lock + " of key " + lock.key() + " in '"
						+ this.registry.mainTopic() + "': its record " + partition + "@" + offset
						+ " can no longer be consumed (group offset "
						+ ((groupOffset != null) ? groupOffset.offset() : "none") + ", log start "
						+ ((logStart != null) ? logStart.offset() : "unknown") + "). The record was lost outside the "
						+ "retry protocol: check retention against the retry delays and for manual offset resets");
				this.onReaped.accept(lock);
			}
		}
		return reaped;
	}

	/**
	 * Ends the operator commands that are void (docs/PROTOCOL.md, rule 11): their lock is
	 * released, moving, or confirmed elsewhere than where the command saw it. The acting
	 * instance ends the commands it acted on; this pass ends the rest, judged on a table
	 * caught up with the command's lock partition.
	 * @return the number of commands ended
	 */
	int endVoidCommands() {
		int ended = 0;
		for (OperatorCommand command : this.registry.commands()) {
			if (isVoid(command)) {
				get(this.registry.catchUp(command.partition()));
				if (isVoid(command)) {
					get(this.registry.finishing(command));
					ended++;
					logger.info("Ended operator command " + command.id() + " (" + command.action().value() + " by '"
							+ command.by() + "') on lock " + command.lockId() + " of '" + this.registry.mainTopic()
							+ "': the lock is no longer confirmed at " + command.position());
				}
			}
		}
		return ended;
	}

	private boolean isVoid(OperatorCommand command) {
		Lock lock = this.registry.find(command.lockId());
		return lock == null || !command.appliesTo(lock);
	}

	private TopicPartition recordOf(Lock lock) {
		int stage = lock.isMoving() ? Objects.requireNonNull(lock.from()).stage() : lock.stage();
		return new TopicPartition(this.topics.topicOf(stage), lock.originPartition());
	}

	/** Whether, on a table caught up with the lock partition, the lock is unchanged. */
	private boolean stillTheSame(Lock lock) {
		get(this.registry.catchUp(lock.originPartition()));
		return lock.equals(this.registry.find(lock.id()));
	}

	private static <T> T get(Future<T> future) {
		return KafkaFutures.await(future, TIMEOUT, "look for zombie locks");
	}

}
