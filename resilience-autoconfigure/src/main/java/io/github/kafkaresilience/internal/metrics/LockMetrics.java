package io.github.kafkaresilience.internal.metrics;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * Meters of the lock registries, per ladder (group and main topic):
 * {@code kafka.resilience.locks.active} (live locks), {@code kafka.resilience.locks.keys}
 * (keys with at least one live lock) and {@code kafka.resilience.locks.oldest.age}
 * (seconds since the live lock changed longest ago), gauges,
 * {@code kafka.resilience.locks.skipped} (lock records the tailer could not read) and
 * {@code kafka.resilience.foreign.records} (records of another group found on one of the
 * ladder's topics), function counters; and, as a {@link ResilienceObserver},
 * {@code kafka.resilience.barrier.wait} (timer) and {@code kafka.resilience.locks.reaped}
 * (counter).
 *
 * @since 0.1.0
 */
public class LockMetrics implements MeterBinder, ResilienceObserver {

	private final LockCoordinator coordinator;

	private volatile @Nullable MeterRegistry registry;

	public LockMetrics(LockCoordinator coordinator) {
		this.coordinator = coordinator;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.registry = registry;
		this.coordinator.onRegistry((locks) -> bind(registry, locks));
	}

	@Override
	public void barrierOpened(String listenerId, String group, TopicPartition partition, Duration waited) {
		MeterRegistry current = this.registry;
		if (current != null) {
			Timer.builder("kafka.resilience.barrier.wait")
				.description("Time a newly assigned partition stayed paused until the lock table was current")
				.tag("listener", listenerId)
				.tag("group", group)
				.tag("topic", partition.topic())
				.register(current)
				.record(waited);
		}
	}

	@Override
	public void lockReaped(String listenerId, String group, String mainTopic, Bytes key, String lockId) {
		MeterRegistry current = this.registry;
		if (current != null) {
			Counter.builder("kafka.resilience.locks.reaped")
				.description("Zombie locks released by the reaper: each is a record lost outside the protocol")
				.tag("listener", listenerId)
				.tag("group", group)
				.tag("topic", mainTopic)
				.register(current)
				.increment();
		}
	}

	/**
	 * Seconds since the live lock changed longest ago, 0 with none. Each reading goes
	 * through the live locks once, as the endpoint's oldest locks do.
	 */
	private static double oldestAgeSeconds(LockRegistry locks) {
		List<Lock> oldest = locks.oldest(1);
		if (oldest.isEmpty()) {
			return 0;
		}
		Duration age = Duration.between(oldest.get(0).updated(), Instant.now());
		return Math.max(0, age.toMillis() / 1000.0);
	}

	private void bind(MeterRegistry registry, LockRegistry locks) {
		String group = locks.ownership().group();
		Gauge.builder("kafka.resilience.locks.active", locks, LockRegistry::size)
			.description("Live locks: records of locked keys that are in the retry ladder")
			.tag("group", group)
			.tag("topic", locks.mainTopic())
			.register(registry);
		Gauge.builder("kafka.resilience.locks.keys", locks, LockRegistry::lockedKeys)
			.description("Keys with at least one live lock")
			.tag("group", group)
			.tag("topic", locks.mainTopic())
			.register(registry);
		Gauge.builder("kafka.resilience.locks.oldest.age", locks, LockMetrics::oldestAgeSeconds)
			.description("Time since the live lock changed longest ago: how long the most stuck held key's record "
					+ "has sat at its stage; 0 with no live lock")
			.baseUnit("seconds")
			.tag("group", group)
			.tag("topic", locks.mainTopic())
			.register(registry);
		FunctionCounter.builder("kafka.resilience.locks.skipped", locks, LockRegistry::skippedRecords)
			.description("Lock records the tailer could not read and skipped; each was logged at WARN")
			.tag("group", group)
			.tag("topic", locks.mainTopic())
			.register(registry);
		Ownership ownership = locks.ownership();
		for (String topic : ownership.topics()) {
			FunctionCounter.builder("kafka.resilience.foreign.records", ownership, (o) -> o.foreignRecords(topic))
				.description(
						"Records of another consumer group, or without an owner.group header where one is required, "
								+ "read from one of this group's ladder topics; none was run, applied or dead-lettered")
				.tag("group", group)
				.tag("topic", topic)
				.register(registry);
		}
	}

}
