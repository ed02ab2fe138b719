package io.github.kafkaresilience.it;

import io.github.kafkaresilience.OrderedRetryListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

/**
 * A minimal application with one ordered retry listener whose behaviour is scripted per
 * topic.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(TestApplication.ScriptedListener.class)
class TestApplication {

	static ConfigurableApplicationContext start(String topic, String... properties) {
		return start(TestApplication.class, topic, properties);
	}

	static ConfigurableApplicationContext start(Class<?> application, String topic, String... properties) {
		return start(WebApplicationType.NONE, application, topic, properties);
	}

	/**
	 * The application as a servlet web application on a free port
	 * ({@code local.server.port}).
	 */
	static ConfigurableApplicationContext startWeb(Class<?> application, String topic, String... properties) {
		return start(WebApplicationType.SERVLET, application, topic, properties);
	}

	private static ConfigurableApplicationContext start(WebApplicationType web, Class<?> application, String topic,
			String... properties) {
		return new SpringApplicationBuilder(application).web(web)
			.properties(defaults(topic))
			.properties(properties)
			.run();
	}

	/** The properties every test application of a topic starts with, before its own. */
	static String[] defaults(String topic) {
		return new String[] { "spring.kafka.bootstrap-servers=" + SharedBroker.bootstrapServers(),
				"test.topic=" + topic, "spring.kafka.consumer.group-id=g-" + topic,
				"spring.kafka.consumer.auto-offset-reset=earliest", "kafka.resilience.instance-id=it-" + topic,
				"kafka.resilience.retry.delays=1s,2s", "kafka.resilience.consumer.commit-interval=200ms",
				"spring.main.banner-mode=off",
				// the ladder's tests script every first attempt of many keys to fail,
				// which outage
				// mode rightly takes for an outage; the outage tests turn it on
				"kafka.resilience.outage.enabled=false", "server.port=0" };
	}

	static class ScriptedListener {

		@OrderedRetryListener(id = "it-${test.topic}", topics = "${test.topic}",
				autoStartup = "${test.autostartup:true}")
		void handle(ConsumerRecord<String, String> record) {
			Script
				.forTopic(record.headers().lastHeader("original.topic") != null
						? new String(record.headers().lastHeader("original.topic").value()) : record.topic())
				.handle(record);
		}

	}

}
