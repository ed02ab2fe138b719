package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import org.apache.kafka.common.TopicPartition;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.MessageListenerContainer;

/**
 * The instances of one consumer group in P9R, each an application of its own in the
 * suite's JVM: starts them, tells when they hold partitions, and restarts one at a time,
 * as a rolling deploy does. An instance is ready, as its health would say, when its
 * listener holds partitions of the topic and, for an {@code @OrderedRetryListener}, none
 * of its sync barriers is closed.
 */
final class RollingGroup implements AutoCloseable {

	private final String id;

	private final String topic;

	private final boolean library;

	private final Launcher launcher;

	private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	/**
	 * @param id the listener id (and group) of every instance
	 * @param topic the topic they read
	 * @param library whether the instances run an {@code @OrderedRetryListener} (else a
	 * plain {@code @KafkaListener})
	 * @param launcher starts instance n
	 */
	RollingGroup(String id, String topic, boolean library, Launcher launcher) {
		this.id = id;
		this.topic = topic;
		this.library = library;
		this.launcher = launcher;
	}

	/**
	 * Starts the instances one after the other and waits until the group has settled:
	 * every instance ready, every partition of the topic held.
	 * @param count how many instances
	 * @param partitions the partitions of the topic
	 * @param timeout how long to wait for the group at most
	 */
	void start(int count, int partitions, Duration timeout) throws InterruptedException {
		for (int i = 0; i < count; i++) {
			this.instances.add(this.launcher.start(i));
		}
		await(() -> this.instances.stream().allMatch(this::ready)
				&& this.instances.stream().mapToLong((instance) -> held(instance).size()).sum() == partitions, timeout,
				"The " + count + " instances of '" + this.id + "' did not all hold partitions of '" + this.topic + "'");
	}

	/**
	 * Closes an instance gracefully, starts a new one in its place and waits until it is
	 * ready.
	 * @param index the instance
	 * @param timeout how long to wait for it to be ready at most
	 * @return how long each step took
	 */
	Restart restart(int index, Duration timeout) throws InterruptedException {
		long started = System.nanoTime();
		ConfigurableApplicationContext old = this.instances.set(index, null);
		old.close();
		long closed = System.nanoTime();
		ConfigurableApplicationContext fresh = this.launcher.start(index);
		this.instances.set(index, fresh);
		long running = System.nanoTime();
		await(() -> ready(fresh), timeout,
				"Instance " + index + " of '" + this.id + "' was not ready after its restart");
		long ready = System.nanoTime();
		return new Restart(closed - started, running - closed, ready - running);
	}

	/** Closes every instance that runs. */
	@Override
	public void close() {
		for (ConfigurableApplicationContext instance : this.instances) {
			if (instance != null) {
				instance.close();
			}
		}
		this.instances.clear();
	}

	private boolean ready(ConfigurableApplicationContext instance) {
		if (held(instance).isEmpty()) {
			return false;
		}
		if (!this.library) {
			return true;
		}
		RetryContainer container = instance.getBean(ListenerRegistry.class).container(this.id);
		return container != null && container.closedBarriers().isEmpty();
	}

	/** The partitions of the topic that an instance's listener holds now. */
	private List<TopicPartition> held(ConfigurableApplicationContext instance) {
		Collection<TopicPartition> assigned;
		if (this.library) {
			RetryContainer container = instance.getBean(ListenerRegistry.class).container(this.id);
			assigned = (container != null) ? container.assignment() : null;
		}
		else {
			MessageListenerContainer container = instance.getBean(KafkaListenerEndpointRegistry.class)
				.getListenerContainer(this.id);
			assigned = (container != null) ? container.getAssignedPartitions() : null;
		}
		return (assigned != null) ? assigned.stream().filter((tp) -> tp.topic().equals(this.topic)).toList()
				: List.of();
	}

	private static void await(BooleanSupplier condition, Duration timeout, String failure) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException(failure + " within " + timeout.toSeconds() + " s");
			}
			TimeUnit.MILLISECONDS.sleep(20); // the group's rebalance, not a result
		}
	}

	/** Starts the application of one instance. */
	@FunctionalInterface
	interface Launcher {

		/**
		 * @param index the instance, from 0; a restarted instance keeps its index
		 * @return the running application
		 */
		ConfigurableApplicationContext start(int index);

	}

	/**
	 * How long the steps of one restart took, in nanoseconds.
	 *
	 * @param closeNanos closing the old instance's application
	 * @param startNanos starting the new one's
	 * @param readyNanos from its start until it was ready
	 */
	record Restart(long closeNanos, long startNanos, long readyNanos) {

		long totalNanos() {
			return this.closeNanos + this.startNanos + this.readyNanos;
		}

	}

}
