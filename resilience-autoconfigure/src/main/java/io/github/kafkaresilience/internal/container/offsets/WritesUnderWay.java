package io.github.kafkaresilience.internal.container.offsets;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The writes under way of records whose steps returned without waiting for them, with
 * each record's partition, so that a revocation or a stop can let them finish before the
 * partition's last commit.
 */
public final class WritesUnderWay {

	private final Map<CompletableFuture<?>, TopicPartition> pending = new ConcurrentHashMap<>();

	/**
	 * Notes the writes of a record of {@code partition}; they are forgotten once
	 * complete.
	 */
	public void add(CompletableFuture<?> writes, TopicPartition partition) {
		this.pending.put(writes, partition);
		writes.whenComplete((ignored, ex) -> this.pending.remove(writes));
	}

	/**
	 * Waits for the writes under way of some partitions (all when {@code null}), up to
	 * {@code timeout}; returns false when some did not complete in time or failed.
	 */
	public boolean await(@Nullable Collection<TopicPartition> which, Duration timeout) {
		CompletableFuture<?>[] writes = this.pending.entrySet()
			.stream()
			.filter((entry) -> which == null || which.contains(entry.getValue()))
			.map(Map.Entry::getKey)
			.toArray(CompletableFuture<?>[]::new);
		if (writes.length == 0) {
			return true;
		}
		try {
			CompletableFuture.allOf(writes).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
		catch (ExecutionException | TimeoutException ex) {
			return false;
		}
	}

}
