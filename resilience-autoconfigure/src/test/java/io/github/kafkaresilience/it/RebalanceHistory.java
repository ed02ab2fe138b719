package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import io.github.kafkaresilience.container.ResilienceObserver;
import org.apache.kafka.common.TopicPartition;

/**
 * What an application hears of its listener's rebalances through a
 * {@link ResilienceObserver} bean: partitions assigned, revoked and lost, and the barrier
 * of each partition opening.
 */
final class RebalanceHistory implements ResilienceObserver {

	record Event(String kind, Set<TopicPartition> partitions, long nanos) {
	}

	private final List<Event> events = new CopyOnWriteArrayList<>();

	@Override
	public void rebalanced(String listenerId, String kind, Collection<TopicPartition> partitions) {
		this.events.add(new Event(kind, Set.copyOf(partitions), System.nanoTime()));
	}

	@Override
	public void barrierOpened(String listenerId, String group, TopicPartition partition, Duration waited) {
		this.events.add(new Event("opened", Set.of(partition), System.nanoTime()));
	}

	List<Event> events() {
		return List.copyOf(this.events);
	}

	/** Every partition revoked or lost so far. */
	Set<TopicPartition> given() {
		return this.events.stream()
			.filter((event) -> !event.kind().equals("assigned") && !event.kind().equals("opened"))
			.flatMap((event) -> event.partitions().stream())
			.collect(Collectors.toSet());
	}

	/** How often the barrier of a partition opened. */
	long openings(TopicPartition partition) {
		return this.events.stream()
			.filter((event) -> event.kind().equals("opened") && event.partitions().contains(partition))
			.count();
	}

	/** When the first partition was revoked or lost. */
	long firstRevoked() {
		return this.events.stream()
			.filter((event) -> !event.kind().equals("assigned") && !event.kind().equals("opened")
					&& !event.partitions().isEmpty())
			.mapToLong(Event::nanos)
			.min()
			.orElseThrow();
	}

	/** When the last barrier opened. */
	long lastOpened() {
		return this.events.stream()
			.filter((event) -> event.kind().equals("opened"))
			.mapToLong(Event::nanos)
			.max()
			.orElseThrow();
	}

}
