package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.kafka.event.ConsumerPausedEvent;
import org.springframework.kafka.event.ConsumerResumedEvent;
import org.springframework.kafka.event.ConsumerStartedEvent;
import org.springframework.kafka.event.ConsumerStoppedEvent;
import org.springframework.kafka.event.ContainerStoppedEvent;
import org.springframework.kafka.event.ListenerContainerIdleEvent;

/**
 * Publishes spring-kafka's container events for one consumer of a container, from its
 * poll thread, with the container as their source: an application listening for them
 * hears an ordered-retry listener as it hears a {@code @KafkaListener} of as many
 * consumers (its main topics' and their stages'), each with its consumer started, paused,
 * resumed, idle and stopped events. A listener that throws is logged and does not stop
 * the container.
 */
final class ContainerEvents {

	/** Publishes nothing. */
	static final ContainerEvents NONE = new ContainerEvents(null, null, null);

	private static final Log logger = LogFactory.getLog(ContainerEvents.class);

	private final @Nullable RetryContainer container;

	private final @Nullable ApplicationEventPublisher publisher;

	private final long idleNanos;

	private long lastRecordsNanos = System.nanoTime();

	private long lastIdleEventNanos;

	ContainerEvents(@Nullable RetryContainer container, @Nullable ApplicationEventPublisher publisher,
			@Nullable Duration idleEventInterval) {
		this.container = container;
		this.publisher = publisher;
		this.idleNanos = (idleEventInterval != null) ? idleEventInterval.toNanos() : 0;
	}

	void consumerStarted() {
		this.lastRecordsNanos = System.nanoTime();
		publish((container) -> new ConsumerStartedEvent(container, container));
	}

	void paused(Collection<TopicPartition> partitions) {
		publish((container) -> new ConsumerPausedEvent(container, container, List.copyOf(partitions)));
	}

	void resumed(Collection<TopicPartition> partitions) {
		publish((container) -> new ConsumerResumedEvent(container, container, List.copyOf(partitions)));
	}

	/**
	 * After a poll: publishes an idle event when no record came for the idle interval,
	 * and again each interval while none comes.
	 */
	void polled(int records, Consumer<?, ?> consumer, boolean paused) {
		long now = System.nanoTime();
		if (records > 0) {
			this.lastRecordsNanos = now;
			return;
		}
		if (this.idleNanos <= 0 || now - this.lastRecordsNanos < this.idleNanos
				|| (this.lastIdleEventNanos > this.lastRecordsNanos
						&& now - this.lastIdleEventNanos < this.idleNanos)) {
			return;
		}
		this.lastIdleEventNanos = now;
		long idleMillis = Duration.ofNanos(now - this.lastRecordsNanos).toMillis();
		publish((container) -> new ListenerContainerIdleEvent(container, container, idleMillis, container.id(),
				consumer.assignment(), consumer, paused));
	}

	/** The events of another consumer of the same container: its idle time is its own. */
	ContainerEvents forConsumer() {
		return new ContainerEvents(this.container, this.publisher,
				(this.idleNanos > 0) ? Duration.ofNanos(this.idleNanos) : null);
	}

	/** A consumer is closed. */
	void consumerStopped() {
		publish((container) -> new ConsumerStoppedEvent(container, container, ConsumerStoppedEvent.Reason.NORMAL));
	}

	/** Every consumer is closed: the container stopped. */
	void containerStopped() {
		publish((container) -> new ContainerStoppedEvent(container, container));
	}

	private void publish(Function<RetryContainer, ApplicationEvent> event) {
		RetryContainer container = this.container;
		ApplicationEventPublisher publisher = this.publisher;
		if (container == null || publisher == null) {
			return;
		}
		try {
			publisher.publishEvent(event.apply(container));
		}
		catch (RuntimeException ex) {
			logger.warn("An application listener failed on a container event", ex);
		}
	}

}
