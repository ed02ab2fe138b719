package com.example.payments;

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
class PaymentsSampleApplicationTests {

	@Test
	void chargesEveryCustomerInOrderThroughAFlappingProviderAndShowsItOverHttp() throws Exception {
		DemoTracker.Summary summary;
		String brokers;
		String prometheus;
		String resilience;
		String health;
		try (ConfigurableApplicationContext context = PaymentsSampleApplication.application()
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
			.contains("payments:      240 sent over 12 customers; 237 charged, 3 dead-lettered")
			.contains("order:         checked for all 12 customers: each one's payments were charged in the order sent")
			.contains("dead letters:  exhausted 1 [c05-4], permanent 2 [c10-7, c11-2]")
			.anySatisfy((line) -> assertThat(line).startsWith("attempts:      main ")
				.contains("retry.2s")
				.contains("retry.5s")
				.contains("retry.10s"))
			.anySatisfy((line) -> assertThat(line).startsWith("retried:")
				.contains("c03-1 charged on attempt 4")
				.contains("c08-1 charged on attempt 4"))
			.anySatisfy((line) -> assertThat(line).startsWith("lateness:      the latest retry ran "))
			.anySatisfy((line) -> assertThat(line).startsWith("throughput:    237 payments in "));
		// what an operator sees over HTTP
		assertThat(prometheus).contains("kafka_resilience_dlq_records_total{error_class=\"permanent\"")
			.contains("reason=\"exhausted\"")
			.contains("kafka_resilience_attempts_total{")
			.contains("kafka_resilience_locks_active{");
		assertThat(resilience).contains("\"id\":\"payments\"")
			.contains("\"dlqTopic\":\"payments-sample.payments.dlq\"")
			.contains("\"active\":0");
		assertThat(health).contains("\"status\":\"UP\"").contains("\"lockViews\":{\"payments-sample.payments.locks\":\"current\"}");
	}

	private static String get(String url) throws Exception {
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as(url).isEqualTo(200);
		return response.body();
	}

}
