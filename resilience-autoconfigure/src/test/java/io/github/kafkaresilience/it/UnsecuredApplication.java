package io.github.kafkaresilience.it;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.io.DefaultResourceLoader;

/**
 * The test application as a web application without Spring Security: its classes are
 * hidden from the application's class loader, as if the jar were absent; and a meter
 * registry, for the operator actions' counter.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(TestApplication.ScriptedListener.class)
class UnsecuredApplication {

	static ConfigurableApplicationContext start(String topic, String... properties) {
		return new SpringApplicationBuilder(UnsecuredApplication.class).web(WebApplicationType.SERVLET)
			.resourceLoader(new DefaultResourceLoader(new FilteredClassLoader("org.springframework.security")))
			.properties(TestApplication.defaults(topic))
			.properties(properties)
			.run();
	}

	@Bean
	SimpleMeterRegistry meterRegistry() {
		return new SimpleMeterRegistry();
	}

}
