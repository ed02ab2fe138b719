package com.example.payments;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.common.utils.Exit;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.context.event.ApplicationFailedEvent;
import org.springframework.boot.context.event.ApplicationPreparedEvent;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.util.StringUtils;

/**
 * Starts a single-node, in-process KRaft broker when no Kafka cluster is configured, so
 * the sample runs on a bare machine.
 * <p>
 * It reacts to {@link ApplicationEnvironmentPreparedEvent}: by then every property source
 * (command line, environment variables, {@code application.yml}) is in place. If
 * {@code spring.kafka.bootstrap-servers} is set anywhere, it does nothing and the sample
 * uses that cluster. Nor does it with {@code sample.embedded-kafka.enabled=false}: then
 * the brokers come from elsewhere, such as the {@code @ServiceConnection} Kafka container
 * that {@code TestPaymentsApplication} adds, which Spring Boot hands to the Kafka clients
 * without setting the property. Otherwise it starts the broker and puts its address first
 * in the environment. The broker is shut down with the application context, after the
 * listeners have stopped.
 */
class EmbeddedKafkaLauncher implements ApplicationListener<ApplicationEvent> {

	static final String BOOTSTRAP_SERVERS = "spring.kafka.bootstrap-servers";

	static final String PROPERTY_SOURCE_NAME = "sampleEmbeddedKafka";

	/**
	 * Whether to start the in-process broker when no brokers are configured; {@code true}
	 * by default.
	 */
	static final String ENABLED = "sample.embedded-kafka.enabled";

	/**
	 * The system property the broker writes its address to. Deliberately not
	 * {@code spring.kafka.bootstrap-servers}: that one would outlive the broker and make
	 * a second application in the same JVM connect to a stopped broker.
	 */
	private static final String BROKER_ADDRESS_SYSTEM_PROPERTY = "sample.embedded-kafka.bootstrap-servers";

	private final AtomicBoolean stopped = new AtomicBoolean();

	private volatile EmbeddedKafkaKraftBroker broker;

	@Override
	public void onApplicationEvent(ApplicationEvent event) {
		if (event instanceof ApplicationEnvironmentPreparedEvent prepared) {
			startIfNeeded(prepared.getEnvironment());
		}
		else if (event instanceof ApplicationPreparedEvent prepared) {
			stopWith(prepared.getApplicationContext());
		}
		else if (event instanceof ApplicationFailedEvent) {
			stop();
		}
	}

	/**
	 * The address of the embedded broker, or {@code null} when an external cluster is
	 * used.
	 * @return the bootstrap servers of the embedded broker
	 */
	String brokers() {
		EmbeddedKafkaKraftBroker current = this.broker;
		return (current != null) ? current.getBrokersAsString() : null;
	}

	private void startIfNeeded(ConfigurableEnvironment environment) {
		if (this.broker != null || StringUtils.hasText(environment.getProperty(BOOTSTRAP_SERVERS))
				|| !environment.getProperty(ENABLED, Boolean.class, true)) {
			return;
		}
		if (StringUtils.hasText(environment.getProperty("kafka.resilience.command"))) {
			// a fresh broker holds no dead letters: a replay needs the cluster that has
			// them
			throw new IllegalStateException("The replay command reads the dead letters of a running cluster; pass "
					+ "--spring.kafka.bootstrap-servers=<its brokers>");
		}
		System.out.println("[sample] spring.kafka.bootstrap-servers is not set: starting an in-process Kafka broker");
		EmbeddedKafkaKraftBroker embedded = new EmbeddedKafkaKraftBroker(1, 3);
		embedded.brokerListProperty(BROKER_ADDRESS_SYSTEM_PROPERTY);
		this.broker = embedded;
		// The broker deletes its data directory in a JVM shutdown hook. On Ctrl+C that
		// hook
		// would race with the orderly shutdown of the broker and fill the console with
		// I/O
		// errors: stop the broker first, then let the hook delete the directory.
		Exit.setShutdownHookAdder((name, hook) -> Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			stop();
			hook.run();
		}, name)));
		try {
			embedded.afterPropertiesSet();
		}
		catch (RuntimeException ex) {
			stop();
			throw ex;
		}
		finally {
			Exit.resetShutdownHookAdder();
		}
		String brokers = embedded.getBrokersAsString();
		environment.getPropertySources()
			.addFirst(new MapPropertySource(PROPERTY_SOURCE_NAME, Map.of(BOOTSTRAP_SERVERS, brokers)));
		System.out.println("[sample] in-process Kafka broker listening on " + brokers);
	}

	private void stopWith(ConfigurableApplicationContext context) {
		if (this.broker == null) {
			return;
		}
		ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
		if (beanFactory instanceof DefaultSingletonBeanRegistry registry) {
			// Registered before any other bean, so destroyed after all of them: the
			// listener containers and clients are gone by the time the broker stops.
			registry.registerDisposableBean("sampleEmbeddedKafkaBroker", this::stop);
		}
		else {
			context.addApplicationListener((ApplicationEvent event) -> {
				if (event instanceof ContextClosedEvent) {
					stop();
				}
			});
		}
	}

	private synchronized void stop() {
		EmbeddedKafkaKraftBroker current = this.broker;
		if (current != null && this.stopped.compareAndSet(false, true)) {
			try {
				current.destroy();
			}
			finally {
				System.clearProperty(BROKER_ADDRESS_SYSTEM_PROPERTY);
			}
		}
	}

}
