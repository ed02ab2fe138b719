package io.github.kafkaresilience.internal.metrics;

import java.time.Duration;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.github.kafkaresilience.ladder.DlqReason;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.LadderObserver;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Meters of what the listeners do with records, as a {@link ResilienceObserver}:
 * <ul>
 * <li>{@code kafka.resilience.handler} (timer) and {@code kafka.resilience.attempts}
 * (counter): handler runs by {@code stage} read from (0 is the main topic) and
 * {@code outcome} ({@code success}, {@code failure}, {@code poison});</li>
 * <li>{@code kafka.resilience.followers.forwarded} (counter): records of locked keys sent
 * to the first stage behind their key without running;</li>
 * <li>{@code kafka.resilience.dlq.records} (counter): dead letters by {@code reason} and
 * {@code error.class};</li>
 * <li>{@code kafka.resilience.consumer.poll.interval} (timer): time between two
 * polls;</li>
 * <li>{@code kafka.resilience.consumer.rebalances} (counter): rebalance callbacks by
 * {@code kind} ({@code assigned}, {@code revoked}, {@code lost});</li>
 * <li>for batch listeners, {@code kafka.resilience.batch.size} (distribution summary):
 * records per batch; {@code kafka.resilience.batch} (timer): time per batch;
 * {@code kafka.resilience.batch.bisections} (counter): splits of failed batches.</li>
 * </ul>
 * Tags are bounded: listener id, consumer group, main topic, stage, outcome, reason,
 * error class; never a key or an offset.
 *
 * @since 0.1.0
 */
public class LadderMetrics implements MeterBinder, ResilienceObserver {

	private volatile @Nullable MeterRegistry registry;

	private final Map<String, Timer> pollIntervals = new ConcurrentHashMap<>();

	@Override
	public void bindTo(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public LadderObserver ladder(String listenerId, String group, String mainTopic) {
		return new Ladder(listenerId, group, mainTopic);
	}

	@Override
	public void polling(String listenerId, Duration sinceLastPoll) {
		MeterRegistry current = this.registry;
		if (current != null) {
			this.pollIntervals.computeIfAbsent(listenerId, (id) -> Timer
				.builder("kafka.resilience.consumer.poll.interval")
				.description(
						"Time between two polls of a listener's consumer; at max.poll.interval.ms it leaves its group")
				.tag("listener", id)
				.register(current)).record(sinceLastPoll);
		}
	}

	@Override
	public void rebalanced(String listenerId, String kind, Collection<TopicPartition> partitions) {
		MeterRegistry current = this.registry;
		if (current != null) {
			Counter.builder("kafka.resilience.consumer.rebalances")
				.description("Rebalance callbacks of a listener's consumer, by kind: assigned, revoked or lost")
				.tag("listener", listenerId)
				.tag("kind", kind)
				.register(current)
				.increment();
		}
	}

	/** The meters of one main topic's batches. */
	private record BatchMeters(DistributionSummary size, Timer time, Counter bisections) {
	}

	/** The two meters of one stage and outcome, found with one look-up per record. */
	private record Attempts(Timer handler, Counter count) {
	}

	/** The meters of one main topic's ladder, looked up once per stage and outcome. */
	private final class Ladder implements LadderObserver {

		private final String listenerId;

		private final String group;

		private final String mainTopic;

		/**
		 * The meters of each stage and outcome, by {@code stage * outcomes + outcome}.
		 */
		private final Map<Integer, Attempts> attempts = new ConcurrentHashMap<>();

		private final Map<String, Counter> deadLetters = new ConcurrentHashMap<>();

		private volatile @Nullable Counter forwarded;

		private volatile @Nullable BatchMeters batches;

		Ladder(String listenerId, String group, String mainTopic) {
			this.listenerId = listenerId;
			this.group = group;
			this.mainTopic = mainTopic;
		}

		@Override
		public void handled(int stage, HandlerResult.Outcome outcome, long nanos) {
			MeterRegistry current = LadderMetrics.this.registry;
			if (current == null) {
				return;
			}
			int slot = stage * HandlerResult.Outcome.values().length + outcome.ordinal();
			Attempts meters = this.attempts.computeIfAbsent(slot, (s) -> attempts(current, stage, outcome));
			meters.handler().record(nanos, TimeUnit.NANOSECONDS);
			meters.count().increment();
		}

		private Attempts attempts(MeterRegistry registry, int stage, HandlerResult.Outcome outcome) {
			Tags tags = Tags.of("listener", this.listenerId, "group", this.group, "topic", this.mainTopic, "stage",
					Integer.toString(stage), "outcome", outcome.name().toLowerCase(Locale.ROOT));
			Timer handler = Timer.builder("kafka.resilience.handler")
				.description(
						"Time the handler took on a record, by the stage it was read from (0: the main topic) and outcome")
				.tags(tags)
				.register(registry);
			Counter count = Counter.builder("kafka.resilience.attempts")
				.description("Handler runs, by the stage the record was read from (0: the main topic) and outcome")
				.tags(tags)
				.register(registry);
			return new Attempts(handler, count);
		}

		@Override
		public void batchRan(int records, int bisections, long nanos) {
			MeterRegistry current = LadderMetrics.this.registry;
			if (current == null) {
				return;
			}
			BatchMeters meters = this.batches;
			if (meters == null) {
				Tags tags = Tags.of("listener", this.listenerId, "group", this.group, "topic", this.mainTopic);
				meters = new BatchMeters(
						DistributionSummary.builder("kafka.resilience.batch.size")
							.description("Records in each batch a batch listener's method was called with")
							.baseUnit("records")
							.tags(tags)
							.register(current),
						Timer.builder("kafka.resilience.batch")
							.description("Time a batch listener took on a batch, its bisections included")
							.tags(tags)
							.register(current),
						Counter.builder("kafka.resilience.batch.bisections")
							.description(
									"Splits of a failed batch in halves to find the records that fail on their own")
							.tags(tags)
							.register(current));
				this.batches = meters;
			}
			meters.size().record(records);
			meters.time().record(nanos, TimeUnit.NANOSECONDS);
			if (bisections > 0) {
				meters.bisections().increment(bisections);
			}
		}

		@Override
		public void followerForwarded() {
			MeterRegistry current = LadderMetrics.this.registry;
			if (current == null) {
				return;
			}
			Counter counter = this.forwarded;
			if (counter == null) {
				counter = Counter.builder("kafka.resilience.followers.forwarded")
					.description(
							"Records of a locked key sent to the first stage behind the key's earlier records, unrun")
					.tag("listener", this.listenerId)
					.tag("group", this.group)
					.tag("topic", this.mainTopic)
					.register(current);
				this.forwarded = counter;
			}
			counter.increment();
		}

		@Override
		public void deadLettered(DlqReason reason, String errorClass) {
			MeterRegistry current = LadderMetrics.this.registry;
			if (current == null) {
				return;
			}
			this.deadLetters
				.computeIfAbsent(reason.value() + "|" + errorClass, (k) -> Counter
					.builder("kafka.resilience.dlq.records")
					.description(
							"Records sent to the dead-letter topic, by dlq.reason and the class of the last failure")
					.tag("listener", this.listenerId)
					.tag("group", this.group)
					.tag("topic", this.mainTopic)
					.tag("reason", reason.value())
					.tag("error.class", errorClass)
					.register(current))
				.increment();
		}

	}

}
