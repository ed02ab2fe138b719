package io.github.kafkaresilience.observation;

import java.util.Locale;

import io.github.kafkaresilience.ladder.HandlerResult;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.support.micrometer.KafkaListenerObservation.DefaultKafkaListenerObservationConvention;
import org.springframework.kafka.support.micrometer.KafkaRecordReceiverContext;

/**
 * The observation of an attempt, named and tagged as spring-kafka observes a record a
 * {@code @KafkaListener} receives ({@code spring.kafka.listener}, contextual name
 * {@code <topic read> process}), plus two low-cardinality key values: the stage the
 * record was read from ({@value #STAGE}: {@code 0} for the main topic, {@code 1} for the
 * first retry topic...) and what the listener method gave ({@value #OUTCOME}:
 * {@code success}, {@code failure}, {@code poison}, or {@code unknown} while it runs and
 * when the attempt ended without a result).
 *
 * @since 0.1.0
 */
public class DefaultAttemptObservationConvention extends DefaultKafkaListenerObservationConvention
		implements AttemptObservationConvention {

	/** A shared instance. */
	public static final DefaultAttemptObservationConvention INSTANCE = new DefaultAttemptObservationConvention();

	/** The key of the stage a record was read from. */
	public static final String STAGE = "kafka.resilience.stage";

	/** The key of an attempt's outcome. */
	public static final String OUTCOME = "kafka.resilience.outcome";

	/** The outcome of an attempt that is running, or ended without a result. */
	public static final String UNKNOWN = "unknown";

	@Override
	public KeyValues getLowCardinalityKeyValues(KafkaRecordReceiverContext context) {
		KeyValues keyValues = super.getLowCardinalityKeyValues(context);
		if (context instanceof AttemptContext attempt) {
			return keyValues.and(KeyValue.of(STAGE, Integer.toString(attempt.getStage())),
					KeyValue.of(OUTCOME, outcome(attempt.getOutcome())));
		}
		return keyValues;
	}

	/** The value of {@value #OUTCOME}: the lower-case outcome, as the meters tag it. */
	private static String outcome(HandlerResult.@Nullable Outcome outcome) {
		return (outcome != null) ? outcome.name().toLowerCase(Locale.ROOT) : UNKNOWN;
	}

}
