package io.github.kafkaresilience.autoconfigure;

import io.github.kafkaresilience.internal.ladder.AttemptObservation;
import io.github.kafkaresilience.internal.listener.AttemptObservationFactory;
import io.github.kafkaresilience.observation.AttemptObservationConvention;
import io.github.kafkaresilience.internal.observation.ObservedAttempts;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.util.function.SingletonSupplier;

/**
 * Observation of the listeners' attempts, when Micrometer's Observation API is on the
 * class path, switched on as for spring-kafka's listener containers: by
 * {@code spring.kafka.listener.observation-enabled}, with the application's
 * {@link ObservationRegistry} bean. The library's sends to its retry and dead-letter
 * topics belong to the attempts and are observed with them (they carry the trace from one
 * attempt to the next); {@code spring.kafka.template.observation-enabled} is the
 * application's {@code KafkaTemplate}'s.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(ObservationRegistry.class)
class ResilienceObservationConfiguration {

	@Bean
	@ConditionalOnMissingBean
	AttemptObservationFactory kafkaResilienceAttemptObservations(ObjectProvider<KafkaProperties> kafkaProperties,
			ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<AttemptObservationConvention> convention, ObjectProvider<KafkaAdmin> kafkaAdmin) {
		// asked for when the listeners start, as spring-kafka's containers ask for them
		SingletonSupplier<ObservationRegistry> registry = SingletonSupplier.of(() -> {
			KafkaProperties kafka = kafkaProperties.getIfAvailable();
			boolean enabled = kafka != null && kafka.getListener().isObservationEnabled();
			return enabled ? observationRegistry.getIfUnique(() -> ObservationRegistry.NOOP) : ObservationRegistry.NOOP;
		});
		return (endpoint, mainTopic) -> {
			ObservationRegistry current = registry.obtain();
			if (current == ObservationRegistry.NOOP) {
				return AttemptObservation.NONE;
			}
			KafkaAdmin admin = kafkaAdmin.getIfUnique();
			return new ObservedAttempts(current, convention.getIfUnique(), endpoint.id(), endpoint.groupId(),
					() -> (admin != null) ? admin.clusterId() : null);
		};
	}

}
