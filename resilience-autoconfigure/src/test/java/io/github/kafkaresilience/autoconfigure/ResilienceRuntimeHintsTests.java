package io.github.kafkaresilience.autoconfigure;

import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;

import io.github.kafkaresilience.OrderedRetryListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

import org.springframework.aot.hint.ExecutableHint;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeHint;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.annotation.ReflectiveRuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.messaging.handler.annotation.Header;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application processed ahead of time (for a native image) can still read what the
 * library reads as resources and reach what it reaches by reflection.
 */
class ResilienceRuntimeHintsTests {

	private final RuntimeHints hints = new RuntimeHints();

	@Test
	void springFindsTheHintsInAotFactories() {
		assertThat(AotServices.factories(getClass().getClassLoader()).load(RuntimeHintsRegistrar.class).asList())
			.hasAtLeastOneElementOfType(ResilienceRuntimeHints.class);
	}

	@Test
	void everyIdempotencySchemaScriptTheLibraryShipsCanBeRead() throws Exception {
		new ResilienceRuntimeHints().registerHints(this.hints, getClass().getClassLoader());

		Resource[] scripts = new PathMatchingResourcePatternResolver()
			.getResources("classpath*:io/github/kafkaresilience/idempotency/*.sql");
		assertThat(scripts).extracting(Resource::getFilename)
			.contains("schema-h2.sql", "schema-postgresql.sql", "schema-mysql.sql", "schema-mariadb.sql",
					"schema-hsqldb.sql");
		assertThat(scripts).allSatisfy((script) -> assertThat(RuntimeHintsPredicates.resource()
			.forResource("io/github/kafkaresilience/idempotency/" + script.getFilename())).accepts(this.hints));
	}

	@Test
	void theJava21MethodsOfVirtualThreadWorkersAreRegisteredForInvocationOnAnyJava() {
		new ResilienceRuntimeHints().registerHints(this.hints, getClass().getClassLoader());

		assertThat(invocableMethod(Thread.class, "isVirtual")).isNotNull();
		assertThat(invocableMethod(Executors.class, "newThreadPerTaskExecutor").getParameterTypes())
			.containsExactly(TypeReference.of(ThreadFactory.class));
	}

	@Test
	@EnabledForJreRange(min = JRE.JAVA_21)
	void theJava21MethodsOfVirtualThreadWorkersCanBeInvoked() throws Exception {
		new ResilienceRuntimeHints().registerHints(this.hints, getClass().getClassLoader());

		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Thread.class.getMethod("isVirtual")))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection()
			.onMethodInvocation(Executors.class.getMethod("newThreadPerTaskExecutor", ThreadFactory.class)))
			.accepts(this.hints);
	}

	@Test
	void aListenerMethodCanBeInvokedAndItsPayloadBound() throws Exception {
		new ReflectiveRuntimeHintsRegistrar().registerRuntimeHints(this.hints, PaymentListener.class);

		assertThat(RuntimeHintsPredicates.reflection()
			.onMethodInvocation(PaymentListener.class.getDeclaredMethod("onPayment", Payment.class, String.class)))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Payment.class.getMethod("amount")))
			.accepts(this.hints);
	}

	private ExecutableHint invocableMethod(Class<?> type, String name) {
		TypeHint typeHint = this.hints.reflection().getTypeHint(type);
		assertThat(typeHint).as(type.getName()).isNotNull();
		return typeHint.methods()
			.filter((method) -> method.getName().equals(name) && method.getMode() == ExecutableMode.INVOKE)
			.findFirst()
			.orElseThrow(() -> new AssertionError(name + " is not registered for invocation on " + type.getName()
					+ "; registered: " + Arrays.toString(typeHint.methods().map(ExecutableHint::getName).toArray())));
	}

	record Payment(String id, long amount) {
	}

	static class PaymentListener {

		@OrderedRetryListener(topics = "payments")
		void onPayment(Payment payment, @Header("trace-id") String traceId) {
		}

	}

}
