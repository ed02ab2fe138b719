package io.github.kafkaresilience.internal.metrics;

import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.outage.OutageBreaker;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Meters of outage mode, tagged with the listener's id:
 * {@code kafka.resilience.outage.holding} (1 while the listener holds its records for an
 * outage, 0 otherwise), {@code kafka.resilience.outage.held} (records held in memory, for
 * an outage or a pause) and {@code kafka.resilience.outage.opened} (times the breaker
 * opened). Listeners whose outage mode is off get none.
 *
 * @since 0.1.0
 */
public class OutageMetrics implements MeterBinder {

	private final ListenerRegistry listeners;

	public OutageMetrics(ListenerRegistry listeners) {
		this.listeners = listeners;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.listeners.onContainer((container) -> bind(registry, container));
	}

	private static void bind(MeterRegistry registry, RetryContainer container) {
		OutageBreaker breaker = container.outageBreaker();
		if (breaker == null) {
			return;
		}
		Gauge.builder("kafka.resilience.outage.holding", breaker, (b) -> b.isOpen() ? 1 : 0)
			.description("1 while the listener holds its records because its dependency looks down for every key")
			.tag("listener", container.id())
			.register(registry);
		Gauge.builder("kafka.resilience.outage.held", container, RetryContainer::heldRecords)
			.description("Records held in memory until the outage ends (or the listener is resumed)")
			.tag("listener", container.id())
			.register(registry);
		FunctionCounter.builder("kafka.resilience.outage.opened", breaker, OutageBreaker::timesOpened)
			.description("Times the outage breaker opened")
			.tag("listener", container.id())
			.register(registry);
	}

}
