package io.github.kafkaresilience.internal.metrics;

import java.util.OptionalLong;
import java.util.function.ToDoubleFunction;

import io.github.kafkaresilience.internal.listener.ListenerEndpoint;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.apache.kafka.common.TopicPartition;

/**
 * Gauges of what each listener holds, tagged with its id:
 * {@code kafka.resilience.consumer.in.flight} (records held in memory),
 * {@code kafka.resilience.consumer.parked} (retries parked until they are nearly due),
 * {@code kafka.resilience.consumer.partition.in.flight.max} (records held by the fullest
 * partition, what {@code max-in-flight-per-partition} bounds) and
 * {@code kafka.resilience.consumer.key.depth.max} (records of the busiest key waiting in
 * one partition: a hot key); and {@code kafka.resilience.consumer.lag} per assigned
 * partition.
 *
 * @since 0.1.0
 */
public class ListenerMetrics implements MeterBinder {

	private final ListenerRegistry listeners;

	public ListenerMetrics(ListenerRegistry listeners) {
		this.listeners = listeners;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.listeners.onContainer((container) -> bind(registry, container));
	}

	private void bind(MeterRegistry registry, RetryContainer container) {
		gauge(registry, container, "kafka.resilience.consumer.in.flight", "Records held in memory, running or waiting",
				(load) -> load.inFlight());
		gauge(registry, container, "kafka.resilience.consumer.parked",
				"Retries parked: only their offsets are kept until they are read again shortly before they are due",
				(load) -> load.parked());
		gauge(registry, container, "kafka.resilience.consumer.partition.in.flight.max",
				"Records held by the fullest partition; it is paused at max-in-flight-per-partition",
				(load) -> load.busiestPartitionInFlight());
		gauge(registry, container, "kafka.resilience.consumer.key.depth.max",
				"Records of the busiest key waiting in one partition, held or parked: a hot key",
				(load) -> load.busiestKeyDepth());
		bindLag(registry, container, groupOf(container));
	}

	/**
	 * The consumer group of a container's listener: its stages belong to that group's
	 * ladders.
	 */
	private String groupOf(RetryContainer container) {
		return this.listeners.endpoints()
			.stream()
			.filter((endpoint) -> endpoint.id().equals(container.id()))
			.map(ListenerEndpoint::groupId)
			.findFirst()
			.orElse("");
	}

	/**
	 * {@code kafka.resilience.consumer.lag}, one gauge per partition assigned to the
	 * listener here (main topic and stages), renewed after every rebalance so partitions
	 * owned by other instances do not show.
	 */
	private static void bindLag(MeterRegistry registry, RetryContainer container, String group) {
		MultiGauge lag = MultiGauge.builder("kafka.resilience.consumer.lag")
			.description("Records of a partition not done yet, from the first pending one to the end of the partition; "
					+ "for a stage topic, the retries waiting or running")
			.tag("listener", container.id())
			.tag("group", group)
			.register(registry);
		Runnable renew = () -> lag.register(container.assignment()
			.stream()
			.map((partition) -> MultiGauge.Row.of(
					Tags.of("topic", partition.topic(), "partition", Integer.toString(partition.partition())),
					container, (c) -> lagOf(c, partition)))
			.toList(), true);
		container.onAssignmentChanged(renew);
		renew.run();
	}

	private static double lagOf(RetryContainer container, TopicPartition partition) {
		OptionalLong lag = container.lag(partition);
		return lag.isPresent() ? lag.getAsLong() : Double.NaN;
	}

	private static void gauge(MeterRegistry registry, RetryContainer container, String name, String description,
			ToDoubleFunction<RetryContainer.Load> value) {
		Gauge.builder(name, container, (c) -> value.applyAsDouble(c.load()))
			.description(description)
			.tag("listener", container.id())
			.register(registry);
	}

}
