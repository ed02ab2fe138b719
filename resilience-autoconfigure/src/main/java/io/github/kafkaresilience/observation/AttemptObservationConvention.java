package io.github.kafkaresilience.observation;

import io.micrometer.observation.Observation;

import org.springframework.kafka.support.micrometer.KafkaListenerObservationConvention;

/**
 * A convention for the observations of attempts: spring-kafka's listener convention, for
 * the {@link AttemptContext} of an {@code @OrderedRetryListener}'s attempt. Declare a
 * bean of this type to replace {@link DefaultAttemptObservationConvention}.
 *
 * @since 0.1.0
 */
public interface AttemptObservationConvention extends KafkaListenerObservationConvention {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof AttemptContext;
	}

}
