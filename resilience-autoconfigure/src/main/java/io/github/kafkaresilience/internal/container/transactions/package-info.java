/**
 * A listener's Kafka transactions ({@code transaction} mode): the steps that join one,
 * their lock writes and publishes, and the pool of transactional producers.
 */
@NullMarked
package io.github.kafkaresilience.internal.container.transactions;

import org.jspecify.annotations.NullMarked;
