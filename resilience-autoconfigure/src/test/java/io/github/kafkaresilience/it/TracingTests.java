package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.observation.TestTracing;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.test.simple.SimpleSpan;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

import static io.github.kafkaresilience.it.OrderedRetryLadderTests.headers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With {@code spring.kafka.listener.observation-enabled=true} and a tracer (Micrometer
 * Tracing's test tracer, propagating W3C {@code traceparent}), every attempt of a record
 * is a span of one trace, linked through the spans of the sends that carried the record
 * from one stage to the next or to the dead-letter topic.
 */
@UsesSharedBroker
class TracingTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	/** The span current in the listener method, per value, one per attempt. */
	static final Map<String, List<SimpleSpan>> seen = new ConcurrentHashMap<>();

	@Test
	void everyAttemptOfARecordIsInOneTraceWithTheSendsBetweenThem() {
		String topic = SharedBroker.newTopic(1);
		try (ConfigurableApplicationContext context = start(topic)) {
			TestTracing tracing = context.getBean(TestTracing.class);
			SharedBroker.send(topic, "k-twice", "A-FAILS-TWICE");
			SharedBroker.send(topic, "k-always", "C-FAILS-ALWAYS");

			List<SimpleSpan> a = awaitTrace(tracing, "A-FAILS-TWICE", 3, 5);
			List<SimpleSpan> attempts = attempts(a);
			assertThat(attempts).extracting(SimpleSpan::getName)
				.containsExactly(topic + " process", Names.retry(topic, "1s") + " process",
						Names.retry(topic, "2s") + " process");
			assertThat(attempts).extracting((span) -> span.getTags().get("kafka.resilience.outcome"))
				.containsExactly("failure", "failure", "success");
			assertThat(attempts).allSatisfy((span) -> {
				assertThat(span.getKind()).isEqualTo(Span.Kind.CONSUMER);
				assertThat(span.getTags()).containsEntry("spring.kafka.listener.id", "traced-" + topic)
					.containsEntry("messaging.kafka.consumer.group", Names.group(topic));
			});
			assertThat(attempts.get(0).getError()).hasMessage("attempt 1 of A-FAILS-TWICE fails");
			assertThat(attempts.get(2).getError()).isNull();
			assertThat(seen.get("A-FAILS-TWICE")).as("the attempt is the method's current span")
				.extracting(SimpleSpan::getSpanId)
				.containsExactlyElementsOf(attempts.stream().map(SimpleSpan::getSpanId).toList());

			List<SimpleSpan> sends = sends(a);
			assertThat(sends).extracting((span) -> span.getTags().get("messaging.destination.name"))
				.containsExactly(Names.retry(topic, "1s"), Names.retry(topic, "2s"));
			assertThat(sends).allSatisfy((span) -> {
				assertThat(span.getKind()).isEqualTo(Span.Kind.PRODUCER);
				assertThat(span.getTags()).containsEntry("spring.kafka.template.name", "kafka-resilience");
			});
			// attempt 0 -> send to stage 1 -> attempt 1 -> send to stage 2 -> attempt 2
			assertThat(sends.get(0).getParentId()).isEqualTo(attempts.get(0).getSpanId());
			assertThat(attempts.get(1).getParentId()).isEqualTo(sends.get(0).getSpanId());
			assertThat(sends.get(1).getParentId()).isEqualTo(attempts.get(1).getSpanId());
			assertThat(attempts.get(2).getParentId()).isEqualTo(sends.get(1).getSpanId());

			List<SimpleSpan> c = awaitTrace(tracing, "C-FAILS-ALWAYS", 3, 6);
			assertThat(attempts(c)).extracting((span) -> span.getTags().get("kafka.resilience.outcome"))
				.containsExactly("failure", "failure", "failure");
			SimpleSpan deadLetterSend = sends(c).get(2);
			assertThat(deadLetterSend.getTags()).containsEntry("messaging.destination.name", Names.dlq(topic));
			assertThat(deadLetterSend.getParentId()).isEqualTo(attempts(c).get(2).getSpanId());
			ConsumerRecord<byte[], byte[]> deadLetter = await().atMost(WAIT)
				.until(() -> SharedBroker.readAll(Names.dlq(topic)), (letters) -> letters.size() == 1)
				.get(0);
			assertThat(TestTracing.traceparents(deadLetter.headers()))
				.containsExactly(TestTracing.traceparent(deadLetterSend.getTraceId(), deadLetterSend.getSpanId()));
			assertThat(headers(deadLetter)).containsEntry("dlq.reason", "exhausted");
		}
	}

	@Test
	void aRecordProducedInATraceKeepsItThroughItsRetries() {
		String topic = SharedBroker.newTopic(1);
		String trace = "4bf92f3577b34da6a3ce929d0e0e4736";
		String producerSpan = "00f067aa0ba902b7";
		try (ConfigurableApplicationContext context = start(topic)) {
			TestTracing tracing = context.getBean(TestTracing.class);
			Headers headers = new RecordHeaders();
			headers.add("tenant", bytes("t-1"));
			headers.add(TestTracing.TRACEPARENT, bytes(TestTracing.traceparent(trace, producerSpan)));
			SharedBroker.send(new ProducerRecord<>(topic, null, bytes("k-once"), bytes("B-FAILS-ONCE"), headers));

			List<SimpleSpan> b = awaitTrace(tracing, "B-FAILS-ONCE", 2, 3);
			assertThat(b).extracting(SimpleSpan::getTraceId).containsOnly(trace);
			List<SimpleSpan> attempts = attempts(b);
			assertThat(attempts.get(0).getParentId()).as("the producer's span").isEqualTo(producerSpan);
			assertThat(attempts).extracting((span) -> span.getTags().get("kafka.resilience.outcome"))
				.containsExactly("failure", "success");
			SimpleSpan send = sends(b).get(0);
			assertThat(attempts.get(1).getParentId()).isEqualTo(send.getSpanId());

			ConsumerRecord<byte[], byte[]> retry = SharedBroker.readAll(Names.retry(topic, "1s")).get(0);
			assertThat(TestTracing.traceparents(retry.headers())).as("replaced, not added to")
				.containsExactly(TestTracing.traceparent(trace, send.getSpanId()));
			assertThat(headers(retry)).containsEntry("tenant", "t-1").containsEntry("retry.count", "1");
		}
	}

	@Test
	void inTransactionModeTheSendInTheStepsTransactionCarriesTheTraceToo() {
		String topic = SharedBroker.newTopic(1);
		try (ConfigurableApplicationContext context = start(topic, "kafka.resilience.dual-write=transaction")) {
			TestTracing tracing = context.getBean(TestTracing.class);
			SharedBroker.send(topic, "k-tx", "D-FAILS-ONCE");

			List<SimpleSpan> d = awaitTrace(tracing, "D-FAILS-ONCE", 2, 3);
			SimpleSpan send = sends(d).get(0);
			assertThat(send.getParentId()).isEqualTo(attempts(d).get(0).getSpanId());
			assertThat(attempts(d).get(1).getParentId()).isEqualTo(send.getSpanId());
			ConsumerRecord<byte[], byte[]> retry = SharedBroker.readAll(Names.retry(topic, "1s"), true).get(0);
			assertThat(TestTracing.traceparents(retry.headers()))
				.containsExactly(TestTracing.traceparent(send.getTraceId(), send.getSpanId()));
		}
	}

	/**
	 * Waits for the finished spans of the trace a value's attempts ran in.
	 * @param value the record's value
	 * @param attempts how many attempts it gets
	 * @param spans how many spans its trace has then
	 * @return the spans of its trace, all finished
	 */
	private static List<SimpleSpan> awaitTrace(TestTracing tracing, String value, int attempts, int spans) {
		List<SimpleSpan> ran = await().atMost(WAIT)
			.until(() -> seen.getOrDefault(value, List.of()), (list) -> list.size() == attempts);
		String trace = ran.get(0).getTraceId();
		assertThat(ran).as("the trace of each attempt of " + value)
			.extracting(SimpleSpan::getTraceId)
			.containsOnly(trace);
		return await().atMost(WAIT)
			.until(() -> tracing.finishedSpans().stream().filter((span) -> span.getTraceId().equals(trace)).toList(),
					(finished) -> finished.size() == spans);
	}

	/** The attempts' spans, by stage. */
	private static List<SimpleSpan> attempts(List<SimpleSpan> trace) {
		List<SimpleSpan> attempts = trace.stream()
			.filter((span) -> span.getTags().containsKey("kafka.resilience.stage"))
			.sorted(Comparator.comparing((span) -> span.getTags().get("kafka.resilience.stage")))
			.toList();
		assertThat(attempts).extracting((span) -> span.getTags().get("kafka.resilience.stage"))
			.as("stages")
			.containsExactlyElementsOf(IntStream.range(0, attempts.size()).mapToObj(Integer::toString).toList());
		return attempts;
	}

	/** The sends' spans, in the order they started. */
	private static List<SimpleSpan> sends(List<SimpleSpan> trace) {
		return trace.stream()
			.filter((span) -> span.getName().endsWith(" send"))
			.sorted(Comparator.comparing(SimpleSpan::getStartTimestamp))
			.toList();
	}

	private static ConfigurableApplicationContext start(String topic, String... properties) {
		String[] all = Arrays.copyOf(properties, properties.length + 1);
		all[properties.length] = "spring.kafka.listener.observation-enabled=true";
		return TestApplication.start(TracedApplication.class, topic, all);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TracedListener.class)
	static class TracedApplication {

		@Bean
		TestTracing testTracing() {
			return new TestTracing();
		}

		@Bean
		ObservationRegistry observationRegistry(TestTracing testTracing) {
			return testTracing.registry();
		}

	}

	static class TracedListener {

		private final TestTracing tracing;

		TracedListener(TestTracing tracing) {
			this.tracing = tracing;
		}

		@OrderedRetryListener(id = "traced-${test.topic}", topics = "${test.topic}")
		void handle(String value) {
			List<SimpleSpan> attempts = seen.computeIfAbsent(value, (v) -> new CopyOnWriteArrayList<>());
			attempts.add(this.tracing.tracer().currentSpan());
			int attempt = attempts.size();
			boolean fails = value.endsWith("FAILS-ALWAYS") || (value.endsWith("FAILS-TWICE") && attempt <= 2)
					|| (value.endsWith("FAILS-ONCE") && attempt == 1);
			if (fails) {
				throw new IllegalStateException("attempt " + attempt + " of " + value + " fails");
			}
		}

	}

}
