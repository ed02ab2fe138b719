package com.example.orders;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the sample end to end, the way {@code main} does: with no
 * {@code spring.kafka.bootstrap-servers} it starts its own broker.
 */
class OrdersSampleApplicationTests {

	@Test
	void handlesEveryKeyInOrderRetriesTheFlakyOrderAndDeadLettersThePoisonOne() throws Exception {
		DemoTracker.Summary summary;
		String brokers;
		String prometheus;
		String resilience;
		String health;
		try (ConfigurableApplicationContext context = OrdersSampleApplication.application()
			.run("--sample.exit-when-done=false", "--sample.timeout=120s", "--server.port=0")) {
			assertThat(context.getEnvironment().getPropertySources()
				.contains(EmbeddedKafkaLauncher.PROPERTY_SOURCE_NAME)).isTrue();
			brokers = context.getEnvironment().getProperty(EmbeddedKafkaLauncher.BOOTSTRAP_SERVERS);
			summary = context.getBean(DemoTracker.class).awaitSummary(150, TimeUnit.SECONDS);
			String base = "http://localhost:" + context.getEnvironment().getProperty("local.server.port") + "/actuator/";
			prometheus = get(base + "prometheus");
			resilience = get(base + "kafkaresilience");
			health = get(base + "health");
		}
		assertThat(brokers).isNotBlank();
		assertThat(summary).as("the sample did not finish").isNotNull();
		String report = String.join(System.lineSeparator(), summary.lines());
		assertThat(summary.ok()).as(report).isTrue();
		assertThat(summary.lines()).as(report)
			.anySatisfy((line) -> assertThat(line).startsWith("k2:")
				.contains("handled 1 2 3 4 5 6 7 8 9 10 ")
				.contains("in order: yes"))
			.anySatisfy((line) -> assertThat(line).startsWith("k5:")
				.contains("handled 1 2 4 5 6 7 8 9 10 ")
				.contains("dead-lettered: 3"))
			.anySatisfy((line) -> assertThat(line).contains("k2-1 handled on attempt 3"))
			.anySatisfy((line) -> assertThat(line).startsWith("records dead-lettered: 1 (k5-3)"));
		// what an operator sees over HTTP
		assertThat(prometheus).contains("kafka_resilience_dlq_records_total{error_class=\"permanent\"")
			.contains("kafka_resilience_attempts_total{")
			.contains("kafka_resilience_locks_active{");
		assertThat(resilience).contains("\"id\":\"orders\"")
			.contains("\"dlqTopic\":\"orders.dlq\"")
			.contains("\"active\":0");
		assertThat(health).contains("\"status\":\"UP\"").contains("\"lockViews\":{\"orders.locks\":\"current\"}");
	}

	private static String get(String url) throws Exception {
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as(url).isEqualTo(200);
		return response.body();
	}

}
