package io.github.kafkaresilience.autoconfigure;

import io.github.kafkaresilience.internal.support.ConsumerClients;
import io.github.kafkaresilience.internal.support.ProducerClients;

/**
 * Where the library's consumers and producers come from: the application's consumer and
 * producer factories, with the library's settings on top.
 *
 * @param consumers creates the library's consumers
 * @param producers creates the library's producers
 */
record ResilienceClients(ConsumerClients consumers, ProducerClients producers) {
}
