package io.github.kafkaresilience.container;

import java.time.Duration;
import java.util.Collection;
import java.util.List;

import io.github.kafkaresilience.ladder.DlqReason;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.LadderObserver;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;

/**
 * Tells several observers everything, in order: the meters and the health indicator, and
 * any of the application's own.
 */
final class CompositeResilienceObserver implements ResilienceObserver {

	private final List<ResilienceObserver> observers;

	CompositeResilienceObserver(List<ResilienceObserver> observers) {
		this.observers = List.copyOf(observers);
	}

	@Override
	public void barrierOpened(String listenerId, String group, TopicPartition partition, Duration waited) {
		this.observers.forEach((observer) -> observer.barrierOpened(listenerId, group, partition, waited));
	}

	@Override
	public void lockReaped(String listenerId, String group, String mainTopic, Bytes key, String lockId) {
		this.observers.forEach((observer) -> observer.lockReaped(listenerId, group, mainTopic, key, lockId));
	}

	@Override
	public LadderObserver ladder(String listenerId, String group, String mainTopic) {
		List<LadderObserver> ladders = this.observers.stream()
			.map((observer) -> observer.ladder(listenerId, group, mainTopic))
			.filter((ladder) -> ladder != LadderObserver.NONE)
			.toList();
		if (ladders.size() <= 1) {
			return ladders.isEmpty() ? LadderObserver.NONE : ladders.get(0);
		}
		return new LadderObserver() {

			@Override
			public void handled(int stage, HandlerResult.Outcome outcome, long nanos) {
				ladders.forEach((ladder) -> ladder.handled(stage, outcome, nanos));
			}

			@Override
			public void followerForwarded() {
				ladders.forEach(LadderObserver::followerForwarded);
			}

			@Override
			public void deadLettered(DlqReason reason, String errorClass) {
				ladders.forEach((ladder) -> ladder.deadLettered(reason, errorClass));
			}

		};
	}

	@Override
	public void polling(String listenerId, Duration sinceLastPoll) {
		this.observers.forEach((observer) -> observer.polling(listenerId, sinceLastPoll));
	}

	@Override
	public void rebalanced(String listenerId, String kind, Collection<TopicPartition> partitions) {
		this.observers.forEach((observer) -> observer.rebalanced(listenerId, kind, partitions));
	}

}
