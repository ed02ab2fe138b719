package io.github.kafkaresilience.internal.metrics;

import java.util.Map;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.dlq.DlqDispatcher;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Meters of the dead-letter topics as the {@link DlqDispatcher} reads them:
 * {@code kafka.resilience.dlq.end.offset} per dead-letter partition read by this instance
 * (dead letters ever written there) and {@code kafka.resilience.dlq.handler.failures}
 * (dead letters the handler threw on).
 *
 * @since 0.1.0
 */
public class DlqMetrics implements MeterBinder {

	private final Supplier<@Nullable DlqDispatcher> dispatchers;

	/**
	 * @param dispatchers the dispatcher, or {@code null} when dead letters are not
	 * handled (then there is nothing to measure)
	 */
	public DlqMetrics(Supplier<@Nullable DlqDispatcher> dispatchers) {
		this.dispatchers = dispatchers;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		DlqDispatcher dispatcher = this.dispatchers.get();
		if (dispatcher == null) {
			return;
		}
		FunctionCounter.builder("kafka.resilience.dlq.handler.failures", dispatcher, DlqDispatcher::handlerFailures)
			.description("Dead letters the DlqHandler threw on; each was logged with its coordinates and skipped")
			.register(registry);
		MultiGauge endOffsets = MultiGauge.builder("kafka.resilience.dlq.end.offset")
			.description("End offset of a dead-letter partition read by this instance: dead letters ever written to it")
			.register(registry);
		Runnable renew = () -> endOffsets.register(dispatcher.endOffsets()
			.keySet()
			.stream()
			.map((partition) -> MultiGauge.Row.of(
					Tags.of("topic", partition.topic(), "partition", Integer.toString(partition.partition())),
					dispatcher, (d) -> endOffset(d.endOffsets(), partition)))
			.toList(), true);
		dispatcher.onAssignmentChanged(renew);
		renew.run();
	}

	private static double endOffset(Map<TopicPartition, Long> endOffsets, TopicPartition partition) {
		Long end = endOffsets.get(partition);
		return (end != null && end >= 0) ? end : Double.NaN;
	}

}
