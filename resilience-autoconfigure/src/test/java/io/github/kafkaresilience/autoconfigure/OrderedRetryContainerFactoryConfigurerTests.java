package io.github.kafkaresilience.autoconfigure;

import java.io.InputStream;
import java.time.DateTimeException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.function.Function;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.listener.TenantResolver;
import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.internal.listener.ContainerAssemblies;
import io.github.kafkaresilience.internal.listener.ContainerAssembly;
import io.github.kafkaresilience.internal.listener.ListenerEndpoint;
import io.github.kafkaresilience.internal.listener.OrderedRetryComponentFactory;
import io.github.kafkaresilience.listener.OrderedRetryContainerCustomizer;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.system.JavaVersion;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The container factory is Boot's kind of bean: the auto-configured one backs off to the
 * application's, customizers apply in their order, and the configurer maps every
 * {@code kafka.resilience.*} property that concerns containers (checked against the
 * configuration metadata, so that a new property cannot be forgotten).
 */
class OrderedRetryContainerFactoryConfigurerTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, OrderedRetryAutoConfiguration.class))
		.withPropertyValues("spring.kafka.bootstrap-servers=localhost:1");

	/**
	 * Every property the configurer maps onto a factory: a value other than its default,
	 * and what the factory then says.
	 */
	private static final Map<String, Mapped> MAPPED = mapped();

	/** Every other property, with the bean it configures instead. */
	private static final Map<String, String> NOT_THE_FACTORYS = Map.ofEntries(
			Map.entry("kafka.resilience.enabled", "the auto-configuration itself"),
			Map.entry("kafka.resilience.command", "the registry's auto-startup (a one-off command runs no listener)"),
			Map.entry("kafka.resilience.instance-id", "the engine every factory shares"),
			Map.entry("kafka.resilience.dlq-handler.enabled", "DlqDispatcher"),
			Map.entry("kafka.resilience.endpoint.oldest-locks", "KafkaResilienceEndpoint"),
			Map.entry("kafka.resilience.console.enabled", "the console's router function"),
			Map.entry("kafka.resilience.tenants.expression",
					"the factory's tenant resolver, as the header is (they exclude each other: tried on its own)"),
			Map.entry("kafka.resilience.console.path", "the console's router function"),
			Map.entry("kafka.resilience.console.actions-enabled", "OperatorActions"),
			Map.entry("kafka.resilience.console.role", "OperatorActions"),
			Map.entry("kafka.resilience.console.allow-anonymous-actions", "OperatorActions"),
			Map.entry("kafka.resilience.console.max-page-size", "KafkaResilienceEndpoint"),
			Map.entry("kafka.resilience.console.scan-limit", "KafkaResilienceEndpoint"),
			Map.entry("kafka.resilience.console.show-values", "KafkaResilienceEndpoint"),
			Map.entry("kafka.resilience.console.masked-headers", "KafkaResilienceEndpoint"),
			Map.entry("kafka.resilience.health.barrier-wait-warning", "ResilienceHealthIndicator"),
			Map.entry("kafka.resilience.health.poll-gap-warning", "ResilienceHealthIndicator"),
			Map.entry("kafka.resilience.replay.rate", "DlqReplayer"),
			Map.entry("kafka.resilience.locks.tailer-poll-timeout", "LockCoordinator"),
			Map.entry("kafka.resilience.locks.write-timeout",
					"LockCoordinator, LadderPublisher and the engine's transactions"),
			Map.entry("kafka.resilience.topics.check-owner-at-startup", "ListenerRegistry"),
			Map.entry("kafka.resilience.idempotency.enabled", "IdempotencyGuards"),
			Map.entry("kafka.resilience.idempotency.lease", "IdempotencyGuards"),
			Map.entry("kafka.resilience.idempotency.retention", "IdempotencyStore"),
			Map.entry("kafka.resilience.idempotency.cleanup-interval", "IdempotencyStore"),
			Map.entry("kafka.resilience.idempotency.transaction", "IdempotencyGuards"),
			Map.entry("kafka.resilience.idempotency.jdbc.continue-on-error", "the idempotency schema initializer"),
			Map.entry("kafka.resilience.idempotency.jdbc.initialize-schema", "the idempotency schema initializer"),
			Map.entry("kafka.resilience.idempotency.jdbc.platform", "the idempotency schema initializer"),
			Map.entry("kafka.resilience.idempotency.jdbc.schema", "the idempotency schema initializer"));

	/**
	 * The ladder's names and provisioning: LadderTopics, which every factory's engine
	 * shares.
	 */
	private static final String TOPICS = "kafka.resilience.topics.";

	@Test
	void everyPropertyIsMappedOntoTheFactoryOrBelongsToANamedOtherBean() throws Exception {
		Set<String> properties = new TreeSet<>();
		try (InputStream metadata = new ClassPathResource("META-INF/spring-configuration-metadata.json")
			.getInputStream()) {
			for (JsonNode property : new ObjectMapper().readTree(metadata).get("properties")) {
				String name = property.get("name").asText();
				if (name.startsWith("kafka.resilience.")) {
					properties.add(name);
				}
			}
		}
		List<String> unaccounted = new ArrayList<>();
		for (String property : properties) {
			boolean accounted = MAPPED.containsKey(property) || NOT_THE_FACTORYS.containsKey(property)
					|| (property.startsWith(TOPICS)
							&& !property.equals("kafka.resilience.topics.check-owner-at-startup"));
			if (!accounted) {
				unaccounted.add(property);
			}
		}
		assertThat(unaccounted).as("properties neither mapped onto the factory nor owned by another bean").isEmpty();
		assertThat(properties).containsAll(MAPPED.keySet()).containsAll(NOT_THE_FACTORYS.keySet());
	}

	@Test
	void theConfigurerMapsEachOfItsPropertiesOntoTheFactory() {
		// on Java 21 or later spring.threads.virtual.enabled makes workers virtual unless
		// kafka.resilience.consumer.virtual-threads says otherwise; before 21 they never
		// are
		boolean virtualByDefault = JavaVersion.getJavaVersion().isEqualOrNewerThan(JavaVersion.TWENTY_ONE);
		ApplicationContextRunner runner = this.runner.withPropertyValues("spring.threads.virtual.enabled=true");
		runner.run((defaults) -> {
			OrderedRetryContainerFactory factory = defaults.getBean(OrderedRetryContainerFactory.class);
			ContainerAssembly assembly = defaults.getBean(ContainerAssemblies.class).of(factory);
			MAPPED.forEach((property, mapped) -> {
				if (virtualByDefault || !property.equals("kafka.resilience.consumer.virtual-threads")) {
					assertThat(mapped.read().apply(factory, assembly)).as(property + " by default")
						.isNotEqualTo(mapped.expected());
				}
			});
		});
		// the reaper's settings matter only while it is enabled: its switch is tried on
		// its own
		String reaperSwitch = "kafka.resilience.reaper.enabled";
		List<String> values = MAPPED.entrySet()
			.stream()
			.filter((entry) -> !entry.getKey().equals(reaperSwitch))
			.map((entry) -> entry.getValue().entry(entry.getKey()))
			.toList();
		runner.withPropertyValues(values.toArray(String[]::new)).run((context) -> {
			OrderedRetryContainerFactory factory = context.getBean(OrderedRetryContainerFactory.class);
			ContainerAssembly assembly = context.getBean(ContainerAssemblies.class).of(factory);
			MAPPED.forEach((property, mapped) -> {
				if (!property.equals(reaperSwitch)) {
					assertThat(mapped.read().apply(factory, assembly)).as(property).isEqualTo(mapped.expected());
				}
			});
		});
		Mapped reaper = MAPPED.get(reaperSwitch);
		runner.withPropertyValues(reaper.entry(reaperSwitch))
			.run((context) -> assertThat(reaper.read().apply(context.getBean(OrderedRetryContainerFactory.class), null))
				.as(reaperSwitch)
				.isEqualTo(reaper.expected()));
	}

	@Test
	void theAutoConfiguredFactoryBacksOffToTheApplicationsAndTheRegistryUsesIt() {
		this.runner.withUserConfiguration(UserFactoryConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(OrderedRetryContainerFactory.class);
			OrderedRetryContainerFactory factory = context.getBean(OrderedRetryContainerFactory.class);
			assertThat(factory.getDelays()).containsExactly(Duration.ofSeconds(42));
			assertThat(context.getBean(ListenerRegistry.class).factory(UserFactoryConfiguration.endpoint()))
				.isSameAs(factory);
		});
	}

	@Test
	void aListenerNamingNoFactoryBeanIsRefusedNamingTheFactory() {
		this.runner.run((context) -> {
			ListenerEndpoint endpoint = new ListenerEndpoint("orders", "billing", List.of("orders"), null, null, null,
					null, null, true, new Object(), Object.class.getMethod("toString"), "missing", Map.of());
			assertThatIllegalStateException()
				.isThrownBy(() -> context.getBean(ListenerRegistry.class).factory(endpoint))
				.withMessageContaining("'orders'")
				.withMessageContaining(
						"names containerFactory 'missing', which is no OrderedRetryContainerFactory bean");
		});
	}

	@Test
	void theFactoryFindsTenantsByTheExpressionOrTheApplicationsResolverAndRefusesTwoWays() {
		Delivery record = new Delivery("orders", 0, 0, 0, "acme:42".getBytes(StandardCharsets.UTF_8), null,
				new RecordHeaders());
		this.runner.withPropertyValues("kafka.resilience.tenants.expression=#key.substring(0, #key.indexOf(':'))")
			.run((context) -> assertThat(
					context.getBean(OrderedRetryContainerFactory.class).getTenantResolver().tenantOf(record))
				.isEqualTo("acme"));
		this.runner.withBean(TenantResolver.class, () -> (delivery) -> "initech")
			.run((context) -> assertThat(
					context.getBean(OrderedRetryContainerFactory.class).getTenantResolver().tenantOf(record))
				.isEqualTo("initech"));
		this.runner.withBean(TenantResolver.class, () -> (delivery) -> "initech")
			.withPropertyValues("kafka.resilience.tenants.header=tenant")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("has a TenantResolver bean and sets kafka.resilience.tenants.header; keep one"));
		this.runner.run((context) -> assertThat(context.getBean(OrderedRetryContainerFactory.class).getTenantResolver())
			.isNull());
	}

	@Test
	void aSecondFactoryMadeWithTheConfigurerLeavesTheDefaultOneInPlace() {
		this.runner.withUserConfiguration(SecondFactoryConfiguration.class).run((context) -> {
			assertThat(context.getBeansOfType(OrderedRetryContainerFactory.class))
				.containsOnlyKeys(OrderedRetryAutoConfiguration.CONTAINER_FACTORY, "transactional");
			assertThat(
					context.getBean(OrderedRetryAutoConfiguration.CONTAINER_FACTORY, OrderedRetryContainerFactory.class)
						.getDualWrite())
				.isEqualTo(DualWrite.COMPENSATE);
			OrderedRetryContainerFactory transactional = context.getBean("transactional",
					OrderedRetryContainerFactory.class);
			assertThat(transactional.getDualWrite()).isEqualTo(DualWrite.TRANSACTION);
			assertThat(context.getBean(ContainerAssemblies.class).of(transactional).dualWrite().mode())
				.isEqualTo(DualWrite.TRANSACTION);
		});
	}

	@Test
	void customizersAreGivenToTheFactoryInTheirOrder() {
		this.runner.withUserConfiguration(CustomizersConfiguration.class).run((context) -> {
			List<OrderedRetryContainerCustomizer> customizers = context.getBean(OrderedRetryContainerFactory.class)
				.getContainerCustomizers();
			assertThat(customizers).containsExactly(context.getBean("first", OrderedRetryContainerCustomizer.class),
					context.getBean("second", OrderedRetryContainerCustomizer.class));
		});
	}

	@Test
	void anApplicationsComponentFactoryIsGivenToTheFactoryAndAPlainOneOtherwise() {
		OrderedRetryComponentFactory components = new OrderedRetryComponentFactory() {
		};
		this.runner.withBean(OrderedRetryComponentFactory.class, () -> components)
			.run((context) -> assertThat(assembly(context).componentFactory()).isSameAs(components));
		this.runner.run((context) -> assertThat(assembly(context).componentFactory())
			.isExactlyInstanceOf(OrderedRetryComponentFactory.class));
	}

	private static ContainerAssembly assembly(ApplicationContext context) {
		return context.getBean(ContainerAssemblies.class).of(context.getBean(OrderedRetryContainerFactory.class));
	}

	private static Map<String, Mapped> mapped() {
		Map<String, Mapped> mapped = new LinkedHashMap<>();
		mapped.put("kafka.resilience.consumer.concurrency",
				new Mapped("7", 7, (f) -> f.getContainerSettings().concurrency()));
		mapped.put("kafka.resilience.consumer.max-in-flight-per-partition",
				new Mapped("77", 77, (f) -> f.getContainerSettings().maxInFlightPerPartition()));
		mapped.put("kafka.resilience.consumer.poll-timeout",
				new Mapped("7ms", Duration.ofMillis(7), (f) -> f.getContainerSettings().pollTimeout()));
		mapped.put("kafka.resilience.consumer.commit-interval",
				new Mapped("7s", Duration.ofSeconds(7), (f) -> f.getContainerSettings().commitInterval()));
		mapped.put("kafka.resilience.consumer.shutdown-timeout",
				new Mapped("7s", Duration.ofSeconds(7), (f) -> f.getContainerSettings().shutdownTimeout()));
		mapped.put("kafka.resilience.consumer.recheck-interval",
				new Mapped("7s", Duration.ofSeconds(7), (f) -> f.getContainerSettings().recheckInterval()));
		mapped.put("kafka.resilience.consumer.park-after",
				new Mapped("77s", Duration.ofSeconds(77), (f) -> f.getContainerSettings().parkAfter()));
		mapped.put("kafka.resilience.consumer.batch-size", new Mapped("77", 77, (f) -> f.getBatchSettings().size()));
		mapped.put("kafka.resilience.consumer.attempt-timeout",
				new Mapped("7s", Duration.ofSeconds(7), OrderedRetryContainerFactory::getAttemptTimeout));
		mapped.put("kafka.resilience.consumer.batch-wait",
				new Mapped("7ms", Duration.ofMillis(7), (f) -> f.getBatchSettings().maxWait()));
		mapped.put("kafka.resilience.consumer.batch-failure",
				new Mapped("fail-all", BatchSettings.Failure.FAIL_ALL, (f) -> f.getBatchSettings().failure()));
		// virtual-threads=true needs Java 21: false against
		// spring.threads.virtual.enabled=true shows the mapping
		mapped.put("kafka.resilience.consumer.virtual-threads",
				new Mapped("false", false, (f) -> f.getContainerSettings().virtualThreads()));
		mapped.put("kafka.resilience.retry.delays", new Mapped("7s,8s",
				List.of(Duration.ofSeconds(7), Duration.ofSeconds(8)), OrderedRetryContainerFactory::getDelays));
		mapped.put("kafka.resilience.retry.max-attempts",
				new Mapped("7", 7, OrderedRetryContainerFactory::getMaxAttempts));
		mapped.put("kafka.resilience.retry.jitter",
				new Mapped("0.5", 0.5, OrderedRetryContainerFactory::getDueTimeJitter));
		mapped.put("kafka.resilience.retry.permanent-exceptions", new Mapped("java.time.DateTimeException", true,
				(f) -> f.getClassifier().isPermanent(new DateTimeException("bad date"))));
		mapped.put("kafka.resilience.dual-write",
				new Mapped("transaction", DualWrite.TRANSACTION, OrderedRetryContainerFactory::getDualWrite));
		mapped.put("kafka.resilience.tenants.header",
				new Mapped("tenant", "header 'tenant'", (f) -> String.valueOf(f.getTenantResolver())));
		mapped.put("kafka.resilience.tenants.weights",
				new Mapped(".acme=3", 3, (f) -> f.getFairShare().weightOf("acme")));
		mapped.put("kafka.resilience.tenants.max-share", new Mapped("0.25", 0.25, (f) -> f.getFairShare().maxShare()));
		mapped.put("kafka.resilience.tenants.rate-limits",
				new Mapped(".acme=70", 70.0, (f) -> f.getFairShare().rateLimitOf("acme")));
		mapped.put("kafka.resilience.tenants.default-rate-limit",
				new Mapped("7", 7.0, (f) -> f.getFairShare().rateLimitOf("initech")));
		mapped.put("kafka.resilience.tenants.tagged-tenants",
				new Mapped("7", 7, (f) -> f.getFairShare().taggedTenants()));
		mapped.put("kafka.resilience.rate-limit.records-per-second",
				new Mapped("77", 77.0, (f) -> f.getRateLimit().recordsPerSecond()));
		mapped.put("kafka.resilience.rate-limit.shared", new Mapped("true", true, (f) -> f.getRateLimit().shared()));
		mapped.put("kafka.resilience.reaper.enabled",
				new Mapped("false", null, OrderedRetryContainerFactory::getReaper));
		mapped.put("kafka.resilience.reaper.interval", new Mapped("7m", Duration.ofMinutes(7),
				(f) -> (f.getReaper() != null) ? f.getReaper().interval() : null));
		mapped.put("kafka.resilience.reaper.grace",
				new Mapped("7m", Duration.ofMinutes(7), (f) -> (f.getReaper() != null) ? f.getReaper().grace() : null));
		mapped.put("kafka.resilience.outage.enabled",
				new Mapped("false", false, (f, assembly) -> assembly.outageSettings("any").enabled()));
		mapped.put("kafka.resilience.outage.minimum-duration", new Mapped("7s", Duration.ofSeconds(7),
				(f, assembly) -> assembly.outageSettings("any").minimumDuration()));
		mapped.put("kafka.resilience.outage.window",
				new Mapped("77s", Duration.ofSeconds(77), (f, assembly) -> assembly.outageSettings("any").window()));
		mapped.put("kafka.resilience.outage.minimum-attempts",
				new Mapped("77", 77, (f, assembly) -> assembly.outageSettings("any").minimumAttempts()));
		mapped.put("kafka.resilience.outage.failure-rate",
				new Mapped("0.7", 0.7, (f, assembly) -> assembly.outageSettings("any").failureRate()));
		mapped.put("kafka.resilience.outage.minimum-keys",
				new Mapped("7", 7, (f, assembly) -> assembly.outageSettings("any").minimumKeys()));
		mapped.put("kafka.resilience.outage.probe-interval", new Mapped("7s", Duration.ofSeconds(7),
				(f, assembly) -> assembly.outageSettings("any").probeInterval()));
		mapped.put("kafka.resilience.outage.max-probe-interval", new Mapped("77s", Duration.ofSeconds(77),
				(f, assembly) -> assembly.outageSettings("any").maxProbeInterval()));
		mapped.put("kafka.resilience.outage.ramp-up",
				new Mapped("3s", Duration.ofSeconds(3), (f, assembly) -> assembly.outageSettings("any").rampUp()));
		mapped.put("kafka.resilience.outage.listeners",
				new Mapped(null, 9, (f, assembly) -> assembly.outageSettings("payments").minimumKeys()));
		return mapped;
	}

	/**
	 * A property the configurer maps.
	 *
	 * @param value a value other than its default, {@code null} for one set through the
	 * property named in {@link #entry}
	 * @param expected what the factory says with it
	 * @param read reads it from the factory
	 */
	record Mapped(String value, Object expected,
			BiFunction<OrderedRetryContainerFactory, ContainerAssembly, Object> read) {

		Mapped(String value, Object expected, Function<OrderedRetryContainerFactory, Object> read) {
			this(value, expected, (factory, assembly) -> read.apply(factory));
		}

		String entry(String property) {
			if (this.value == null) {
				return property + ".payments.minimum-keys=9";
			}
			// a map's entry is named after the property
			return this.value.startsWith(".") ? property + this.value : property + "=" + this.value;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserFactoryConfiguration {

		@Bean
		OrderedRetryContainerFactory orderedRetryContainerFactory(OrderedRetryContainerFactoryConfigurer configurer) {
			OrderedRetryContainerFactory factory = new OrderedRetryContainerFactory();
			configurer.configure(factory);
			factory.setDelays(List.of(Duration.ofSeconds(42)));
			return factory;
		}

		static ListenerEndpoint endpoint() throws NoSuchMethodException {
			return new ListenerEndpoint("orders", "billing", List.of("orders"), null, null, null, null, null,
					new Object(), Object.class.getMethod("toString"));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SecondFactoryConfiguration {

		@Bean
		OrderedRetryContainerFactory transactional(OrderedRetryContainerFactoryConfigurer configurer) {
			OrderedRetryContainerFactory factory = new OrderedRetryContainerFactory();
			configurer.configure(factory);
			factory.setDualWrite(DualWrite.TRANSACTION);
			return factory;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class CustomizersConfiguration {

		@Bean
		@Order(2)
		OrderedRetryContainerCustomizer second() {
			return (container) -> {
			};
		}

		@Bean
		@Order(1)
		OrderedRetryContainerCustomizer first() {
			return (container) -> {
			};
		}

	}

}
