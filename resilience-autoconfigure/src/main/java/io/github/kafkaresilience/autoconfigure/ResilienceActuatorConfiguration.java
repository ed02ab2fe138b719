package io.github.kafkaresilience.autoconfigure;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import io.github.kafkaresilience.internal.actuate.KafkaResilienceEndpoint;
import io.github.kafkaresilience.internal.actuate.LastErrors;
import io.github.kafkaresilience.internal.actuate.OperatorActions;
import io.github.kafkaresilience.internal.actuate.ValueDisclosure;
import io.github.kafkaresilience.internal.actuate.ViewSettings;
import io.github.kafkaresilience.internal.dlq.DeadLetterBrowser;
import io.micrometer.core.instrument.MeterRegistry;
import io.github.kafkaresilience.internal.actuate.ResilienceHealthIndicator;
import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaAdmin;

/**
 * The health indicator and the {@code kafkaresilience} endpoint, when Spring Boot's
 * health and Actuator modules are on the class path.
 */
final class ResilienceActuatorConfiguration {

	/**
	 * A class of Spring Security's core: present, actions need the configured role;
	 * absent, they need {@code kafka.resilience.console.allow-anonymous-actions}.
	 */
	private static final String SPRING_SECURITY = "org.springframework.security.core.Authentication";

	private ResilienceActuatorConfiguration() {
	}

	// Conditions from the optional modules sit on member classes: Spring reads those only
	// once the outer class found the module on the class path.
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(HealthIndicator.class)
	static class Health {

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnEnabledHealthIndicator("kafkaresilience")
		static class Enabled {

			@Bean
			@ConditionalOnMissingBean(name = "kafkaResilienceHealthIndicator")
			ResilienceHealthIndicator kafkaResilienceHealthIndicator(ListenerRegistry listeners, LockCoordinator locks,
					ResilienceProperties properties, ConsumerFactory<?, ?> consumerFactory) {
				ResilienceProperties.Health health = properties.getHealth();
				return new ResilienceHealthIndicator(listeners, locks, health.getBarrierWaitWarning(),
						health.getPollGapWarning(), maxPollInterval(consumerFactory.getConfigurationProperties()));
			}

			private static Duration maxPollInterval(Map<String, Object> config) {
				Object configured = config.get(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG);
				if (configured == null) {
					return Duration.ofMinutes(5);
				}
				return Duration.ofMillis(Long.parseLong(configured.toString().trim()));
			}

		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
	static class EndpointConfiguration {

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnAvailableEndpoint(KafkaResilienceEndpoint.class)
		static class Available {

			@Bean
			@ConditionalOnMissingBean
			KafkaResilienceEndpoint kafkaResilienceEndpoint(ListenerRegistry listeners, LockCoordinator locks,
					KafkaAdmin kafkaAdmin, ObjectProvider<DlqReplayer> replayer, ResilienceProperties properties,
					OperatorActions operatorActions, DeadLetterBrowser deadLetterBrowser, ResilienceClients clients) {
				Map<String, Object> adminConfig = kafkaAdmin.getConfigurationProperties();
				ConsoleProperties console = properties.getConsole();
				ViewSettings settings = new ViewSettings(console.getMaxPageSize(), console.getScanLimit(),
						new ValueDisclosure(console.getShowValues(), console.getMaskedHeaders()));
				return new KafkaResilienceEndpoint(listeners, locks, () -> Admin.create(adminConfig),
						replayer::getObject, properties.getEndpoint().getOldestLocks(), Clock.systemUTC(),
						operatorActions, deadLetterBrowser, new LastErrors(clients.consumers()), settings);
			}

			/**
			 * The endpoint's actions with Spring Security on the class path: each needs
			 * the configured role besides {@code actions-enabled}.
			 */
			@Configuration(proxyBeanMethods = false)
			@ConditionalOnClass(name = SPRING_SECURITY)
			static class WithSpringSecurity {

				@Bean
				@ConditionalOnMissingBean
				OperatorActions kafkaResilienceOperatorActions(ListenerRegistry listeners, LockCoordinator locks,
						ResilienceProperties properties, ObjectProvider<MeterRegistry> meters) {
					ConsoleProperties console = properties.getConsole();
					return new OperatorActions(listeners, locks, console.isActionsEnabled(), console.getRole(),
							meters.getIfUnique(), Clock.systemUTC());
				}

			}

			/**
			 * The endpoint's actions without Spring Security: nothing tells who asks, so
			 * actions are enabled only when the application says that anyone may take
			 * them.
			 */
			@Configuration(proxyBeanMethods = false)
			@ConditionalOnMissingClass(SPRING_SECURITY)
			static class WithoutSpringSecurity {

				@Bean
				@ConditionalOnMissingBean
				OperatorActions kafkaResilienceOperatorActions(ListenerRegistry listeners, LockCoordinator locks,
						ResilienceProperties properties, ObjectProvider<MeterRegistry> meters) {
					ConsoleProperties console = properties.getConsole();
					if (console.isActionsEnabled() && !console.isAllowAnonymousActions()) {
						throw new AnonymousActionsException();
					}
					return new OperatorActions(listeners, locks, console.isActionsEnabled(), null, meters.getIfUnique(),
							Clock.systemUTC());
				}

			}

			@Bean
			@ConditionalOnMissingBean
			DeadLetterBrowser kafkaResilienceDeadLetterBrowser(ResilienceClients clients) {
				return new DeadLetterBrowser(clients.consumers());
			}

		}

	}

}
