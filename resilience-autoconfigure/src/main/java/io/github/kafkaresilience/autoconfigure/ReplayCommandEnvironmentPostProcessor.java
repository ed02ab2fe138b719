package io.github.kafkaresilience.autoconfigure;

import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.StringUtils;

/**
 * Turns the application into the {@code replay} command when its first argument that is
 * not an option is {@code replay}
 * ({@code java -jar app.jar replay --from orders.dlq --to orders ...}): its ordered retry
 * listeners, its {@code @KafkaListener} containers, the dead-letter handler and the web
 * server stay off, and {@link ReplayCommandRunner} runs the replay and exits.
 *
 * @since 0.1.0
 */
final class ReplayCommandEnvironmentPostProcessor implements EnvironmentPostProcessor {

	/**
	 * The command's name on the command line and the value of
	 * {@code kafka.resilience.command}.
	 */
	static final String REPLAY = "replay";

	static final String COMMAND_PROPERTY = "kafka.resilience.command";

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		String[] nonOptionArgs = StringUtils.commaDelimitedListToStringArray(environment.getProperty("nonOptionArgs"));
		if (nonOptionArgs.length == 0 || !REPLAY.equals(nonOptionArgs[0])) {
			return;
		}
		environment.getPropertySources()
			.addFirst(new MapPropertySource("kafkaResilienceReplayCommand",
					Map.of(COMMAND_PROPERTY, REPLAY, "kafka.resilience.dlq-handler.enabled", "false",
							"spring.kafka.listener.auto-startup", "false", "spring.main.web-application-type",
							"none")));
	}

}
