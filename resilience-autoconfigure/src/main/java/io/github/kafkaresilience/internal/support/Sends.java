package io.github.kafkaresilience.internal.support;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Sends records without waiting for them: each send returns a future that completes once
 * the broker has the record, fails with a {@link KafkaException} that says what was being
 * done, or fails when the send takes longer than its timeout.
 * <p>
 * The futures complete on a thread of this object, never on the producer's network
 * thread, so whatever is chained on them may send again: a send from the network thread
 * can block it on a full buffer that only that thread drains. The continuations are short
 * (a lock table update, the next send of a move), so one thread serves every send of its
 * owner.
 *
 * @since 0.1.0
 */
public final class Sends implements AutoCloseable {

	/** How long after its timeout a send fails when its producer has not called back. */
	private static final Duration CALLBACK_GRACE = Duration.ofSeconds(5);

	private final ExecutorService callbacks;

	private final ScheduledThreadPoolExecutor timeouts;

	/**
	 * @param name names the threads, e.g. {@code kafka-resilience-locks}
	 */
	public Sends(String name) {
		this.callbacks = Executors.newSingleThreadExecutor(daemon(name + "-callbacks-"));
		this.timeouts = new ScheduledThreadPoolExecutor(1, daemon(name + "-timeouts-"));
		this.timeouts.setRemoveOnCancelPolicy(true);
	}

	/**
	 * @param producer the producer
	 * @param record the record
	 * @param timeout how long the send may take
	 * @param what what the send does, completing "Could not ..." (e.g. "publish to
	 * 'orders.dlq'")
	 * @return the record's metadata, once the broker has it
	 */
	public <K, V> CompletableFuture<RecordMetadata> send(Producer<K, V> producer, ProducerRecord<K, V> record,
			Duration timeout, String what) {
		CompletableFuture<RecordMetadata> result = new CompletableFuture<>();
		ScheduledFuture<?> timer;
		try {
			// the producer gives up first (its delivery.timeout.ms is bounded by the same
			// timeout,
			// see ProducerSettings): this timer only answers for a producer that never
			// calls back
			timer = this.timeouts.schedule(
					() -> complete(result, null,
							new KafkaException("Could not " + what + " within " + timeout.toMillis() + " ms")),
					timeout.plus(CALLBACK_GRACE).toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			return CompletableFuture.failedFuture(new KafkaException("Could not " + what + ": closed", ex));
		}
		try {
			producer.send(record, (metadata, ex) -> {
				timer.cancel(false);
				complete(result, metadata, (ex != null) ? new KafkaException("Could not " + what, ex) : null);
			});
		}
		catch (RuntimeException ex) {
			timer.cancel(false);
			return CompletableFuture.failedFuture(new KafkaException("Could not " + what, ex));
		}
		return result;
	}

	private void complete(CompletableFuture<RecordMetadata> result, @Nullable RecordMetadata metadata,
			@Nullable KafkaException failure) {
		Runnable completion = () -> {
			if (failure != null) {
				result.completeExceptionally(failure);
			}
			else {
				result.complete(metadata);
			}
		};
		try {
			this.callbacks.execute(completion);
		}
		catch (RejectedExecutionException ex) {
			completion.run(); // closing: nothing chained on it sends any more
		}
	}

	private static ThreadFactory daemon(String prefix) {
		CustomizableThreadFactory threads = new CustomizableThreadFactory(prefix);
		threads.setDaemon(true);
		return threads;
	}

	@Override
	public void close() {
		this.timeouts.shutdownNow();
		this.callbacks.shutdown();
		try {
			this.callbacks.awaitTermination(5, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
