package io.github.kafkaresilience.it;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Marks a test class (or method) that runs on the {@link SharedBroker}. With
 * {@code kafka.broker=testcontainers} and no Docker environment it is skipped, with the
 * reason, before anything in it asks for the broker; otherwise it runs.
 */
@Target({ ElementType.TYPE, ElementType.METHOD })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@ExtendWith(UsesSharedBroker.BrokerAvailable.class)
@interface UsesSharedBroker {

	/** Enables the test where the shared broker can be had. */
	class BrokerAvailable implements ExecutionCondition {

		@Override
		public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
			if (!SharedBroker.onContainer()) {
				return ConditionEvaluationResult.enabled("the shared broker runs in process");
			}
			if (KafkaContainerBroker.dockerAvailable()) {
				return ConditionEvaluationResult.enabled("the shared broker runs in a Kafka container");
			}
			return ConditionEvaluationResult.disabled(KafkaContainerBroker.NO_DOCKER);
		}

	}

}
