package com.example.payments;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.bootstrap.DefaultBootstrapContext;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

class EmbeddedKafkaLauncherTests {

	@Test
	void leavesAConfiguredClusterAlone() {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources()
			.addLast(new MapPropertySource("application.yml",
					Map.of(EmbeddedKafkaLauncher.BOOTSTRAP_SERVERS, "kafka-1:9092")));
		EmbeddedKafkaLauncher launcher = new EmbeddedKafkaLauncher();

		launcher.onApplicationEvent(new ApplicationEnvironmentPreparedEvent(new DefaultBootstrapContext(),
				new SpringApplication(PaymentsSampleApplication.class), new String[0], environment));

		assertThat(launcher.brokers()).isNull();
		assertThat(environment.getPropertySources().contains(EmbeddedKafkaLauncher.PROPERTY_SOURCE_NAME)).isFalse();
		assertThat(environment.getProperty(EmbeddedKafkaLauncher.BOOTSTRAP_SERVERS)).isEqualTo("kafka-1:9092");
	}

	@Test
	void staysOffWhenTheBrokersComeFromElsewhere() {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources()
			.addLast(new MapPropertySource("commandLineArgs", Map.of(EmbeddedKafkaLauncher.ENABLED, "false")));
		EmbeddedKafkaLauncher launcher = new EmbeddedKafkaLauncher();

		launcher.onApplicationEvent(new ApplicationEnvironmentPreparedEvent(new DefaultBootstrapContext(),
				new SpringApplication(PaymentsSampleApplication.class), new String[0], environment));

		assertThat(launcher.brokers()).isNull();
		assertThat(environment.getPropertySources().contains(EmbeddedKafkaLauncher.PROPERTY_SOURCE_NAME)).isFalse();
	}

}
