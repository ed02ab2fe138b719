package io.github.kafkaresilience.listener;

import java.time.Duration;
import java.util.List;

import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.container.OrderedRetryContainer;
import org.jspecify.annotations.Nullable;

/**
 * What a listener uses where its annotation says nothing.
 *
 * @param delays the stage delays
 * @param maxAttempts the attempts, {@code null} for one more than the number of stages
 * @param settings how containers consume
 * @since 0.1.0
 */
public record ListenerDefaults(List<Duration> delays, @Nullable Integer maxAttempts,
		ContainerSettings settings) {
}
