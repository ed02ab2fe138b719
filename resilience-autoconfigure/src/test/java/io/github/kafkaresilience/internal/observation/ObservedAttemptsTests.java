package io.github.kafkaresilience.internal.observation;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.internal.ladder.AttemptObservation;
import io.github.kafkaresilience.internal.ladder.AttemptObservation.Attempt;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.ladder.RecordPublisher;
import io.github.kafkaresilience.observation.AttemptContext;
import io.github.kafkaresilience.observation.TestTracing;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.test.simple.SimpleSpan;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An attempt and the sends it makes, observed with Micrometer Tracing's test tracer.
 */
class ObservedAttemptsTests {

	private static final String STAGE_1 = "billing.orders.retry.1s";

	private static final String STAGE_2 = "billing.orders.retry.2s";

	private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

	private final TestTracing tracing = new TestTracing();

	private final ObservedAttempts attempts = new ObservedAttempts(this.tracing.registry(), null, "orders-listener",
			"billing", () -> "cluster-1");

	private final List<Headers> sent = new ArrayList<>();

	private final CompletableFuture<Long> broker = new CompletableFuture<>();

	private final RecordPublisher publisher = new RecordPublisher() {

		@Override
		public long publish(String topic, int partition, byte[] key, byte[] value, Headers headers) {
			throw new UnsupportedOperationException();
		}

		@Override
		public CompletableFuture<Long> sending(String topic, int partition, byte[] key, byte[] value, Headers headers) {
			ObservedAttemptsTests.this.sent.add(headers);
			return ObservedAttemptsTests.this.broker;
		}

	};

	@Test
	void anAttemptWhoseResultCompletesLaterLeavesTheCallingThreadOnceCalledAndEndsWhenItsResultCompletes()
			throws Exception {
		Attempt attempt = this.attempts.start(record(STAGE_1, new RecordHeaders()), 1);
		assertThat(this.tracing.registry().getCurrentObservation()).as("current while the method is called")
			.isNotNull();

		attempt.called();

		assertThat(this.tracing.registry().getCurrentObservation()).as("the worker is let go").isNull();
		assertThat(this.tracing.finishedSpans()).as("the attempt lasts while its result is pending").isEmpty();
		Thread completing = new Thread(() -> attempt.ended(HandlerResult.success()), "result-completer");
		completing.start();
		completing.join();
		SimpleSpan span = this.tracing.tracer().onlySpan();
		assertThat(span.getEndTimestamp().toEpochMilli()).as("ended on the completing thread").isNotZero();
		assertThat(span.getTags()).containsEntry("kafka.resilience.stage", "1")
			.containsEntry("kafka.resilience.outcome", "success");
	}

	@Test
	void anAttemptIsTheCurrentObservationWhileTheMethodRunsAndEndsWithItsStageAndOutcome() {
		Attempt attempt = this.attempts.start(record(STAGE_1, new RecordHeaders()), 1);
		Observation current = this.tracing.registry().getCurrentObservation();
		assertThat(current).isNotNull();
		assertThat(current.getContext()).isInstanceOfSatisfying(AttemptContext.class,
				(context) -> assertThat(context.getStage()).isEqualTo(1));
		assertThat(this.tracing.tracer().currentSpan()).isNotNull();

		attempt.ended(HandlerResult.failed(new IllegalStateException("payment service down")));

		assertThat(this.tracing.registry().getCurrentObservation()).isNull();
		SimpleSpan span = this.tracing.tracer().onlySpan();
		assertThat(span.getName()).isEqualTo(STAGE_1 + " process");
		assertThat(span.getKind()).isEqualTo(Span.Kind.CONSUMER);
		assertThat(span.getRemoteServiceName()).isEqualTo("Apache Kafka: cluster-1");
		assertThat(span.getTags()).containsEntry("kafka.resilience.stage", "1")
			.containsEntry("kafka.resilience.outcome", "failure")
			.containsEntry("spring.kafka.listener.id", "orders-listener")
			.containsEntry("messaging.kafka.consumer.group", "billing")
			.containsEntry("messaging.source.name", STAGE_1)
			.containsEntry("messaging.operation", "process")
			.containsEntry("messaging.kafka.source.partition", "2")
			.containsEntry("messaging.kafka.message.offset", "41");
		assertThat(span.getError()).hasMessage("payment service down");
	}

	@Test
	void aBatchIsOneObservationCurrentWhileItsMethodRunsAndItsRecordsAttemptsStayInTheirOwnTracesCarryingItsId() {
		Headers headers = new RecordHeaders();
		headers.add(TestTracing.TRACEPARENT, bytes(TestTracing.traceparent(TRACE, "00f067aa0ba902b7")));
		AttemptObservation.Batch batch = this.attempts.startBatch(2);
		assertThat(this.tracing.registry().getCurrentObservation()).isNotNull();
		batch.ended(null);
		SimpleSpan batchSpan = this.tracing.tracer().onlySpan();
		assertThat(batchSpan.getName()).isEqualTo("orders-listener batch");
		assertThat(batchSpan.getTags()).containsEntry("messaging.batch.message_count", "2")
			.containsEntry("spring.kafka.listener.id", "orders-listener")
			.containsEntry(ObservedAttempts.BATCH_ID, batch.id());
		assertThat(this.tracing.registry().getCurrentObservation()).isNull();

		this.attempts.start(record(STAGE_1, headers), 1, batch).ended(HandlerResult.success());

		SimpleSpan attempt = this.tracing.tracer().lastSpan();
		assertThat(attempt.getTraceId()).as("the record's own trace").isEqualTo(TRACE);
		assertThat(attempt.getParentId()).isEqualTo("00f067aa0ba902b7");
		assertThat(attempt.getTags()).containsEntry(ObservedAttempts.BATCH_ID, batch.id())
			.containsEntry("kafka.resilience.outcome", "success");
	}

	@Test
	void aSuccessfulAttemptHasNoError() {
		this.attempts.start(record("orders", new RecordHeaders()), 0).ended(HandlerResult.success());
		SimpleSpan span = this.tracing.tracer().onlySpan();
		assertThat(span.getTags()).containsEntry("kafka.resilience.stage", "0")
			.containsEntry("kafka.resilience.outcome", "success");
		assertThat(span.getError()).isNull();
	}

	@Test
	void anAttemptThatEndsWithoutAResultHasAnUnknownOutcome() {
		this.attempts.start(record("orders", new RecordHeaders()), 0).failed(new IllegalStateException("store down"));
		assertThat(this.tracing.registry().getCurrentObservation()).isNull();
		SimpleSpan span = this.tracing.tracer().onlySpan();
		assertThat(span.getTags()).containsEntry("kafka.resilience.outcome", "unknown");
		assertThat(span.getError()).hasMessage("store down");
	}

	@Test
	void anAttemptContinuesTheTraceTheRecordArrivedWith() {
		Headers headers = new RecordHeaders();
		headers.add(TestTracing.TRACEPARENT, bytes(TestTracing.traceparent(TRACE, "00f067aa0ba902b7")));
		this.attempts.start(record(STAGE_1, headers), 1).ended(HandlerResult.success());
		SimpleSpan span = this.tracing.tracer().onlySpan();
		assertThat(span.getTraceId()).isEqualTo(TRACE);
		assertThat(span.getParentId()).isEqualTo("00f067aa0ba902b7");
	}

	@Test
	void aSendIsAChildOfItsAttemptAndReplacesThePropagationHeaderTheRecordArrivedWith() {
		Headers arrived = new RecordHeaders();
		arrived.add("tenant", bytes("t-1"));
		arrived.add(TestTracing.TRACEPARENT, bytes(TestTracing.traceparent(TRACE, "00f067aa0ba902b7")));
		arrived.add("retry.count", bytes("1"));
		Attempt attempt = this.attempts.start(record(STAGE_1, arrived), 1);
		attempt.ended(HandlerResult.failed(new IllegalStateException("again")));
		SimpleSpan attemptSpan = this.tracing.tracer().onlySpan();

		CompletableFuture<Long> sending = attempt.sending(this.publisher, STAGE_2, 2, bytes("k"), bytes("v"), arrived);

		assertThat(sending).isSameAs(this.broker);
		SimpleSpan send = this.tracing.tracer().lastSpan();
		assertThat(send.getTraceId()).isEqualTo(TRACE);
		assertThat(send.getParentId()).isEqualTo(attemptSpan.getSpanId());
		assertThat(this.sent).singleElement().satisfies((headers) -> {
			assertThat(TestTracing.traceparents(headers))
				.containsExactly(TestTracing.traceparent(TRACE, send.getSpanId()));
			assertThat(names(headers)).containsExactly("tenant", "retry.count", TestTracing.TRACEPARENT);
			assertThat(headers.lastHeader("tenant").value()).isEqualTo(bytes("t-1"));
		});
		assertThat(TestTracing.traceparents(arrived)).as("the record's own headers")
			.containsExactly(TestTracing.traceparent(TRACE, "00f067aa0ba902b7"));
		assertThat(this.tracing.finishedSpans()).as("the send ends once the broker has the record")
			.containsExactly(attemptSpan);

		this.broker.complete(12L);

		assertThat(this.tracing.finishedSpans()).containsExactly(attemptSpan, send);
		assertThat(send.getName()).isEqualTo(STAGE_2 + " send");
		assertThat(send.getKind()).isEqualTo(Span.Kind.PRODUCER);
		assertThat(send.getTags()).containsEntry("spring.kafka.template.name", ObservedAttempts.SENDER_NAME)
			.containsEntry("messaging.destination.name", STAGE_2)
			.containsEntry("messaging.operation", "publish");
		assertThat(send.getError()).isNull();
	}

	@Test
	void aFailedSendEndsWithItsFailure() {
		Attempt attempt = this.attempts.start(record("orders", new RecordHeaders()), 0);
		attempt.ended(HandlerResult.failed(new IllegalStateException("down")));
		attempt.sending(this.publisher, STAGE_1, 2, bytes("k"), bytes("v"), new RecordHeaders());
		this.broker.completeExceptionally(new KafkaException("Could not publish to '" + STAGE_1 + "' partition 2"));
		SimpleSpan send = this.tracing.tracer().lastSpan();
		assertThat(this.tracing.finishedSpans()).contains(send);
		assertThat(send.getError()).isInstanceOf(KafkaException.class).hasMessageContaining(STAGE_1);
	}

	@Test
	void anUnobservedAttemptSendsTheHeadersAsTheRecordArrivedWithThem() {
		Headers arrived = new RecordHeaders();
		arrived.add(TestTracing.TRACEPARENT, bytes(TestTracing.traceparent(TRACE, "00f067aa0ba902b7")));
		Attempt.NONE.sending(this.publisher, STAGE_1, 2, bytes("k"), bytes("v"), arrived);
		assertThat(this.sent).containsExactly(arrived);
		assertThat(this.tracing.tracer().getSpans()).isEmpty();
	}

	@Test
	void aRegistryWithoutHandlersObservesNoAttempt() {
		ObservedAttempts unobserved = new ObservedAttempts(ObservationRegistry.create(), null, "orders-listener",
				"billing", () -> {
					throw new AssertionError("no context is made for an attempt that is not observed");
				});
		assertThat(unobserved.start(record("orders", new RecordHeaders()), 0)).isSameAs(Attempt.NONE);
	}

	private static Delivery record(String topic, Headers headers) {
		return new Delivery(topic, 2, 41, 1_000L, bytes("k"), bytes("v"), headers);
	}

	private static List<String> names(Headers headers) {
		List<String> names = new ArrayList<>();
		for (Header header : headers) {
			names.add(header.key());
		}
		return names;
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
