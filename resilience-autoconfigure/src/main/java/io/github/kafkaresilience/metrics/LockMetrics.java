package io.github.kafkaresilience.metrics;

import io.github.kafkaresilience.lock.LockCoordinator;
import io.github.kafkaresilience.lock.LockRegistry;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Gauges of the lock registries, per main topic: {@code kafka.resilience.locks.active} (live
 * locks) and {@code kafka.resilience.locks.keys} (keys with at least one live lock).
 *
 * @since 0.1.0
 */
public class LockMetrics implements MeterBinder {

	private final LockCoordinator coordinator;

	public LockMetrics(LockCoordinator coordinator) {
		this.coordinator = coordinator;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.coordinator.onRegistry((locks) -> bind(registry, locks));
	}

	private void bind(MeterRegistry registry, LockRegistry locks) {
		Gauge.builder("kafka.resilience.locks.active", locks.table(), (table) -> table.size())
			.description("Live locks: records of locked keys that are in the retry ladder")
			.tag("topic", locks.mainTopic())
			.register(registry);
		Gauge.builder("kafka.resilience.locks.keys", locks.table(), (table) -> table.lockedKeys())
			.description("Keys with at least one live lock")
			.tag("topic", locks.mainTopic())
			.register(registry);
	}

}
