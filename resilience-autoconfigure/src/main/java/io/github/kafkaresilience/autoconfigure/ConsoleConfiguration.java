package io.github.kafkaresilience.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.github.kafkaresilience.internal.actuate.KafkaResilienceEndpoint;
import io.github.kafkaresilience.internal.console.ConsoleRoutes;
import io.github.kafkaresilience.internal.console.EndpointResponseHeaders;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The operator's console page ({@code kafka.resilience.console.enabled=true}), in a
 * servlet web application with Spring MVC and Actuator, over the {@code kafkaresilience}
 * endpoint exposed on the web; and the headers of the responses of both that Actuator
 * does not set.
 */
final class ConsoleConfiguration {

	private ConsoleConfiguration() {
	}

	// the conditions on the optional modules sit on a member class, read once the outer
	// one loaded
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	@ConditionalOnClass({ RouterFunction.class, PathMappedEndpoints.class })
	@ConditionalOnBooleanProperty("kafka.resilience.console.enabled")
	static class Page {

		@Bean
		@ConditionalOnMissingBean(name = "kafkaResilienceConsole")
		RouterFunction<ServerResponse> kafkaResilienceConsole(ResilienceProperties properties,
				ObjectProvider<PathMappedEndpoints> endpoints) {
			PathMappedEndpoints mapped = endpoints.getIfAvailable();
			String endpointPath = (mapped != null) ? mapped.getPath(EndpointId.of("kafkaresilience")) : null;
			if (endpointPath == null) {
				throw new IllegalStateException("kafka.resilience.console.enabled is true, but the "
						+ KafkaResilienceEndpoint.class.getSimpleName()
						+ " ('kafkaresilience') is not exposed over the "
						+ "web, which the console reads and acts through: add kafkaresilience to "
						+ "management.endpoints.web.exposure.include (and serve Actuator on the application's port)");
			}
			ConsoleProperties console = properties.getConsole();
			return ConsoleRoutes.routes(console.getPath(), endpointPath, console.isActionsEnabled());
		}

	}

	/**
	 * {@code X-Content-Type-Options: nosniff} on the endpoint's and the console's
	 * responses, and {@code Retry-After} on the endpoint's 429, in a servlet web
	 * application where the endpoint is exposed over the web.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	@ConditionalOnClass({ FilterRegistrationBean.class, PathMappedEndpoints.class,
			ConditionalOnAvailableEndpoint.class })
	static class ResponseHeaders {

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnAvailableEndpoint(endpoint = KafkaResilienceEndpoint.class, exposure = EndpointExposure.WEB)
		static class Exposed {

			@Bean
			@ConditionalOnMissingBean(name = "kafkaResilienceResponseHeaders")
			FilterRegistrationBean<EndpointResponseHeaders> kafkaResilienceResponseHeaders(
					ResilienceProperties properties, ObjectProvider<PathMappedEndpoints> endpoints) {
				FilterRegistrationBean<EndpointResponseHeaders> registration = new FilterRegistrationBean<>(
						new EndpointResponseHeaders());
				List<String> paths = new ArrayList<>();
				PathMappedEndpoints mapped = endpoints.getIfAvailable();
				String endpointPath = (mapped != null) ? mapped.getPath(EndpointId.of("kafkaresilience")) : null;
				if (endpointPath != null) {
					paths.add(endpointPath);
				}
				ConsoleProperties console = properties.getConsole();
				if (console.isEnabled()) {
					paths.add(console.getPath());
				}
				paths.forEach((path) -> registration.addUrlPatterns(path, path + "/*"));
				registration.setEnabled(!paths.isEmpty());
				return registration;
			}

		}

	}

}
