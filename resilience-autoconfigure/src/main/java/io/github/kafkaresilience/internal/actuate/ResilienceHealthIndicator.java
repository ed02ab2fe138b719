package io.github.kafkaresilience.internal.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.github.kafkaresilience.internal.listener.ListenerEndpoint;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.outage.OutageBreaker;
import org.apache.kafka.common.TopicPartition;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The health of the ordered retry listeners.
 * <ul>
 * <li>{@code OUT_OF_SERVICE} until every lock tailer has read its lock topic up to the
 * end it had when it started: before that this instance does not know every locked
 * key.</li>
 * <li>{@code UP} afterwards. The details name the partitions whose sync barrier has
 * waited longer than the configured bound, the listeners whose time since the last poll
 * passed the configured share of {@code max.poll.interval.ms} (past it, the consumer
 * leaves its group), and the listeners that hold their records for an outage, with the
 * reason.</li>
 * </ul>
 *
 * @since 0.1.0
 */
public class ResilienceHealthIndicator extends AbstractHealthIndicator {

	private final ListenerRegistry listeners;

	private final LockCoordinator locks;

	private final Duration barrierWaitWarning;

	private final Duration pollGapWarning;

	private final Duration maxPollInterval;

	/**
	 * @param listeners the listeners
	 * @param locks the lock views of their topics
	 * @param barrierWaitWarning a barrier closed longer than this is reported
	 * @param pollGapWarning a share of {@code maxPollInterval}: a longer gap since the
	 * last poll is reported
	 * @param maxPollInterval the consumers' {@code max.poll.interval.ms}
	 */
	public ResilienceHealthIndicator(ListenerRegistry listeners, LockCoordinator locks, Duration barrierWaitWarning,
			double pollGapWarning, Duration maxPollInterval) {
		super("Kafka resilience health check failed");
		if (!(pollGapWarning > 0 && pollGapWarning <= 1)) {
			throw new IllegalArgumentException(
					"kafka.resilience.health.poll-gap-warning is a share of max.poll.interval.ms between 0 (excluded) and 1 but was "
							+ pollGapWarning);
		}
		this.listeners = listeners;
		this.locks = locks;
		this.barrierWaitWarning = barrierWaitWarning;
		this.maxPollInterval = maxPollInterval;
		this.pollGapWarning = Duration.ofNanos((long) (maxPollInterval.toNanos() * pollGapWarning));
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		Map<String, String> lockViews = new TreeMap<>();
		boolean loading = false;
		for (LockRegistry registry : this.locks.registries()) {
			boolean caughtUp = registry.hasCaughtUp();
			lockViews.put(registry.lockTopic(), caughtUp ? "current" : "loading");
			loading |= !caughtUp;
		}
		List<ListenerEndpoint> endpoints = this.listeners.endpoints();
		Map<String, Object> listeners = new LinkedHashMap<>();
		List<String> warnings = new ArrayList<>();
		boolean started = true;
		for (ListenerEndpoint endpoint : endpoints) {
			RetryContainer container = this.listeners.container(endpoint.id());
			boolean running = container != null && container.isRunning();
			started &= running || !endpoint.autoStartup(); // a listener left to start
															// later is not missing
			Map<String, Object> details = new LinkedHashMap<>();
			details.put("running", running);
			if (container != null) {
				details.put("partitions", container.assignment().size());
				Duration sinceLastPoll = container.sinceLastPoll();
				details.put("sinceLastPoll", sinceLastPoll.toString());
				if (running && sinceLastPoll.compareTo(this.pollGapWarning) > 0) {
					warnings.add("Listener '" + endpoint.id() + "' has not polled for " + sinceLastPoll.toMillis()
							+ " ms; at " + this.maxPollInterval.toMillis()
							+ " ms (max.poll.interval.ms) its consumer leaves the group. A handler or a write is slower than "
							+ "the poll loop allows: see 'Sizing' in the operations guide");
				}
				Map<String, String> slow = new TreeMap<>();
				container.closedBarriers().forEach((partition, waited) -> {
					if (waited.compareTo(this.barrierWaitWarning) > 0) {
						slow.put(name(partition), waited.toString());
					}
				});
				if (!slow.isEmpty()) {
					details.put("slowBarriers", slow);
					warnings
						.add("Listener '" + endpoint.id() + "' has " + slow.size() + " partition(s) paused longer than "
								+ this.barrierWaitWarning.toMillis() + " ms waiting for the lock view: " + slow.keySet()
								+ ". Check that the lock topics are readable and the brokers reachable");
				}
				OutageBreaker breaker = container.outageBreaker();
				if (breaker != null && breaker.isOpen()) {
					// stays UP: a restart would not bring the dependency back, and would
					// only drop what is held
					Map<String, Object> holding = new LinkedHashMap<>();
					holding.put("since", String.valueOf(breaker.openedAt()));
					holding.put("reason", breaker.reason());
					holding.put("heldRecords", container.heldRecords());
					details.put("holding", holding);
					warnings.add("Listener '" + endpoint.id() + "' holds its records since " + breaker.openedAt()
							+ " because its dependency looks down for every key (" + breaker.reason() + "); it resumes "
							+ "when a probe succeeds. See 'A dependency is down' in the operations guide");
				}
				Map<String, String> stopped = new TreeMap<>();
				container.stoppedPartitions().forEach((partition, reason) -> stopped.put(name(partition), reason));
				if (!stopped.isEmpty()) {
					// stays UP: a restart by a liveness probe would only stop at the same
					// record again
					details.put("stoppedPartitions", stopped);
					warnings.add("Listener '" + endpoint.id() + "' stopped " + stopped.keySet()
							+ " at a record that can be"
							+ " neither retried nor dead-lettered; raise the setting named in stoppedPartitions, then restart");
				}
			}
			listeners.put(endpoint.id(), details);
		}
		if (!lockViews.isEmpty()) {
			builder.withDetail("lockViews", lockViews);
		}
		builder.withDetail("listeners", listeners);
		if (!warnings.isEmpty()) {
			builder.withDetail("warnings", warnings);
		}
		if (loading) {
			builder.outOfService().withDetail("reason", "The lock view is still loading: records are not routed yet");
		}
		else if (!started && !endpoints.isEmpty()) {
			builder.outOfService().withDetail("reason", "The listeners are not running");
		}
		else {
			builder.up();
		}
	}

	private static String name(TopicPartition partition) {
		return partition.topic() + "-" + partition.partition();
	}

}
