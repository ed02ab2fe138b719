package io.github.kafkaresilience.internal.listener;

import io.github.kafkaresilience.internal.ladder.AttemptObservation;

/**
 * Creates what observes the attempts of an endpoint's records on one of its main topics.
 */
@FunctionalInterface
public interface AttemptObservationFactory {

	AttemptObservation create(ListenerEndpoint endpoint, String mainTopic);

}
