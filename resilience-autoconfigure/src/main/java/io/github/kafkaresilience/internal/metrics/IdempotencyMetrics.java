package io.github.kafkaresilience.internal.metrics;

import io.github.kafkaresilience.idempotency.IdempotencyObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

/**
 * Meters of the idempotency guards, by listener and main topic:
 * {@code kafka.resilience.idempotency.skipped} (records whose key was completed before,
 * not handled again) and {@code kafka.resilience.idempotency.held} (records whose key
 * another attempt held; they were retried later).
 *
 * @since 0.1.0
 */
public class IdempotencyMetrics implements MeterBinder, IdempotencyObserver.Factory {

	private volatile @Nullable MeterRegistry registry;

	@Override
	public void bindTo(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public IdempotencyObserver observer(String listenerId, String mainTopic) {
		return new IdempotencyObserver() {

			@Override
			public void skipped() {
				count("kafka.resilience.idempotency.skipped",
						"Records not handled because their idempotency key was completed before", listenerId,
						mainTopic);
			}

			@Override
			public void held() {
				count("kafka.resilience.idempotency.held",
						"Records whose idempotency key another attempt held; they were retried later", listenerId,
						mainTopic);
			}

		};
	}

	private void count(String name, String description, String listenerId, String mainTopic) {
		MeterRegistry current = this.registry;
		if (current != null) {
			Counter.builder(name)
				.description(description)
				.tag("listener", listenerId)
				.tag("topic", mainTopic)
				.register(current)
				.increment();
		}
	}

}
