package io.github.kafkaresilience.observation;

import java.util.Locale;
import java.util.Optional;

import io.github.kafkaresilience.ladder.HandlerResult;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

import org.springframework.kafka.support.micrometer.KafkaListenerObservation.DefaultKafkaListenerObservationConvention;
import org.springframework.kafka.support.micrometer.KafkaRecordReceiverContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The attempt's convention: spring-kafka's listener convention, plus the stage and the
 * outcome.
 */
class DefaultAttemptObservationConventionTests {

	private static final ConsumerRecord<byte[], byte[]> RECORD = new ConsumerRecord<>("billing.orders.retry.30s", 3, 17,
			0L, TimestampType.CREATE_TIME, ConsumerRecord.NULL_SIZE, ConsumerRecord.NULL_SIZE, null, null,
			new RecordHeaders(), Optional.empty());

	private final DefaultAttemptObservationConvention convention = DefaultAttemptObservationConvention.INSTANCE;

	@Test
	void anAttemptIsNamedAndTaggedAsSpringKafkasListenerObservationPlusItsStageAndOutcome() {
		AttemptContext context = new AttemptContext(RECORD, "orders", null, "billing", () -> null, 1);
		KafkaRecordReceiverContext plain = new KafkaRecordReceiverContext(RECORD, "orders", null, "billing",
				() -> null);
		context.setOutcome(HandlerResult.Outcome.POISON);

		KeyValues springKafkas = DefaultKafkaListenerObservationConvention.INSTANCE.getLowCardinalityKeyValues(plain);

		assertThat(this.convention.getName()).isEqualTo("spring.kafka.listener");
		assertThat(this.convention.getContextualName(context)).isEqualTo("billing.orders.retry.30s process");
		assertThat(this.convention.getLowCardinalityKeyValues(context)).containsAll(springKafkas)
			.contains(KeyValue.of("kafka.resilience.stage", "1"), KeyValue.of("kafka.resilience.outcome", "poison"))
			.hasSize((int) springKafkas.stream().count() + 2);
		assertThat(this.convention.getHighCardinalityKeyValues(context)).containsExactlyElementsOf(
				DefaultKafkaListenerObservationConvention.INSTANCE.getHighCardinalityKeyValues(plain));
	}

	@Test
	void theOutcomeIsUnknownUntilTheMethodHasRun() {
		AttemptContext context = new AttemptContext(RECORD, "orders", null, "billing", () -> null, 0);
		assertThat(this.convention.getLowCardinalityKeyValues(context))
			.contains(KeyValue.of("kafka.resilience.stage", "0"), KeyValue.of("kafka.resilience.outcome", "unknown"));
	}

	@Test
	void everyOutcomeIsTaggedInLowerCaseAsTheMetersTagIt() {
		AttemptContext context = new AttemptContext(RECORD, "orders", null, "billing", () -> null, 2);
		for (HandlerResult.Outcome outcome : HandlerResult.Outcome.values()) {
			context.setOutcome(outcome);
			assertThat(this.convention.getLowCardinalityKeyValues(context))
				.contains(KeyValue.of("kafka.resilience.outcome", outcome.name().toLowerCase(Locale.ROOT)));
		}
	}

	@Test
	void itSupportsTheContextOfAnAttemptOnly() {
		AttemptContext attempt = new AttemptContext(RECORD, "orders", null, "billing", () -> null, 0);
		assertThat(this.convention.supportsContext(attempt)).isTrue();
		assertThat(this.convention
			.supportsContext(new KafkaRecordReceiverContext(RECORD, "orders", null, "billing", () -> null))).isFalse();
		assertThat(this.convention.supportsContext(new Observation.Context())).isFalse();
	}

}
