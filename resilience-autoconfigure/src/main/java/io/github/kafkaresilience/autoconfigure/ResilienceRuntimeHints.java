package io.github.kafkaresilience.autoconfigure;

import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;

/**
 * What the library reads as resources or reaches by reflection, for an application
 * processed ahead of time into a native image. Registered in
 * {@code META-INF/spring/aot.factories}.
 * <p>
 * The listener methods, which the library invokes reflectively, are covered by
 * {@link io.github.kafkaresilience.OrderedRetryListener}, a {@code @Reflective}
 * annotation as spring-kafka's {@code @KafkaListener} is; the {@code kafka.resilience.*}
 * properties by Spring Boot's processing of configuration properties.
 *
 * @since 0.1.0
 */
final class ResilienceRuntimeHints implements RuntimeHintsRegistrar {

	/** The idempotency guard's schema scripts, one per database platform. */
	static final String SCHEMA_SCRIPTS = "io/github/kafkaresilience/idempotency/schema-*.sql";

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources().registerPattern(SCHEMA_SCRIPTS);
		// Java 21 API for virtual-thread workers, called by reflection so that the
		// library
		// still runs on Java 17 (WorkerThreads)
		hints.reflection()
			.registerType(Thread.class, (type) -> type.withMethod("isVirtual", List.of(), ExecutableMode.INVOKE))
			.registerType(Executors.class, (type) -> type.withMethod("newThreadPerTaskExecutor",
					List.of(TypeReference.of(ThreadFactory.class)), ExecutableMode.INVOKE));
	}

}
