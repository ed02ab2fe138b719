package io.github.kafkaresilience.observation;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.StreamSupport;

import io.micrometer.observation.ObservationHandler.FirstMatchingCompositeObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.TraceContext;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.propagation.Propagator;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleSpanBuilder;
import io.micrometer.tracing.test.simple.SimpleTraceContextBuilder;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer Tracing's test tracer behind an observation registry, as an application with
 * a tracer has it: senders write their context into a W3C {@code traceparent} header, and
 * receivers continue the trace a {@code traceparent} names, or start a new one.
 */
public final class TestTracing {

	public static final String TRACEPARENT = "traceparent";

	private final SimpleTracer tracer = new SimpleTracer();

	private final ObservationRegistry registry = ObservationRegistry.create();

	public TestTracing() {
		Propagator propagator = new TraceparentPropagator(this.tracer);
		this.registry.observationConfig()
			.observationHandler(new FirstMatchingCompositeObservationHandler(
					new PropagatingSenderTracingObservationHandler<>(this.tracer, propagator),
					new PropagatingReceiverTracingObservationHandler<>(this.tracer, propagator),
					new DefaultTracingObservationHandler(this.tracer)));
	}

	public SimpleTracer tracer() {
		return this.tracer;
	}

	public ObservationRegistry registry() {
		return this.registry;
	}

	/** The spans that have ended, in the order they started. */
	public List<SimpleSpan> finishedSpans() {
		return this.tracer.getSpans().stream().filter((span) -> span.getEndTimestamp().toEpochMilli() != 0).toList();
	}

	/** A {@code traceparent} value naming a sampled span. */
	public static String traceparent(String traceId, String spanId) {
		return "00-" + traceId + "-" + spanId + "-01";
	}

	/** The value of every {@code traceparent} header. */
	public static List<String> traceparents(Headers headers) {
		return StreamSupport.stream(headers.headers(TRACEPARENT).spliterator(), false)
			.map(Header::value)
			.map((value) -> new String(value, StandardCharsets.UTF_8))
			.toList();
	}

	/**
	 * W3C trace context, the {@code traceparent} header alone, for {@link SimpleTracer}.
	 */
	private static final class TraceparentPropagator implements Propagator {

		private final SimpleTracer tracer;

		TraceparentPropagator(SimpleTracer tracer) {
			this.tracer = tracer;
		}

		@Override
		public List<String> fields() {
			return List.of(TRACEPARENT);
		}

		@Override
		public <C> void inject(TraceContext context, @Nullable C carrier, Setter<C> setter) {
			setter.set(carrier, TRACEPARENT, traceparent(context.traceId(), context.spanId()));
		}

		@Override
		public <C> Span.Builder extract(C carrier, Getter<C> getter) {
			String value = getter.get(carrier, TRACEPARENT);
			String[] parts = (value != null) ? value.split("-") : new String[0];
			if (parts.length != 4) {
				return new RootSpanBuilder(this.tracer);
			}
			TraceContext parent = new SimpleTraceContextBuilder().traceId(parts[1])
				.spanId(parts[2])
				.sampled(true)
				.build();
			return this.tracer.spanBuilder().setParent(parent);
		}

	}

	/**
	 * Starts the first span of a new trace: the test tracer's builder gives it no ids.
	 */
	private static final class RootSpanBuilder extends SimpleSpanBuilder {

		RootSpanBuilder(SimpleTracer tracer) {
			super(tracer);
		}

		@Override
		public Span start() {
			SimpleSpan span = (SimpleSpan) super.start();
			span.context().setTraceId(id() + id());
			span.context().setSpanId(id());
			span.context().setSampled(true);
			return span;
		}

		private static String id() {
			return String.format("%016x", ThreadLocalRandom.current().nextLong());
		}

	}

}
