package com.example.payments;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Runs the sample end to end, the way {@code main} does: with no
 * {@code spring.kafka.bootstrap-servers} it starts its own broker. Besides the charges,
 * it checks what the ledger's batch listener booked. Over HTTP it also requests the
 * library's health contributor at the path docs/OPERATIONS.md and docs/METRICS.md give,
 * so the documented path cannot drift from the one the application answers on.
 */
class PaymentsSampleApplicationTests {

	private static final Pattern HEALTH_ROW = Pattern.compile("^\\| `(/actuator/health/[^`]+)` \\| health \\|",
			Pattern.MULTILINE);

	@Test
	void chargesEveryCustomerInOrderThroughAFlappingProviderAndShowsItOverHttp() throws Exception {
		DemoTracker.Summary summary;
		String brokers;
		String prometheus;
		String resilience;
		String console;
		String health;
		String documentedHealth;
		String documentedHealthPath = documentedHealthPath();
		Ledger ledger;
		try (ConfigurableApplicationContext context = PaymentsSampleApplication.application()
			.run("--sample.exit-when-done=false", "--sample.timeout=120s", "--server.port=0")) {
			assertThat(
					context.getEnvironment().getPropertySources().contains(EmbeddedKafkaLauncher.PROPERTY_SOURCE_NAME))
				.isTrue();
			brokers = context.getEnvironment().getProperty(EmbeddedKafkaLauncher.BOOTSTRAP_SERVERS);
			String port = context.getEnvironment().getProperty("local.server.port");
			// while the provider is down for c03, the console's API lists it as held
			await().atMost(Duration.ofSeconds(60))
				.until(() -> get("http://localhost:" + port + "/actuator/kafkaresilience/held?key=c03")
					.contains("\"key\":\"c03\""));
			console = get("http://localhost:" + port + "/kafka-resilience/");
			summary = context.getBean(DemoTracker.class).awaitSummary(150, TimeUnit.SECONDS);
			ledger = context.getBean(Ledger.class);
			String base = "http://localhost:" + context.getEnvironment().getProperty("local.server.port")
					+ "/actuator/";
			prometheus = get(base + "prometheus");
			resilience = get(base + "kafkaresilience");
			health = get(base + "health");
			documentedHealth = get("http://localhost:" + context.getEnvironment().getProperty("local.server.port")
					+ documentedHealthPath);
		}
		assertThat(console).contains("<title>kafka-resilience console</title>").contains("assets/console.js");
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
			.anySatisfy((line) -> assertThat(line).startsWith("throughput:    237 payments in "))
			.anySatisfy((line) -> assertThat(line)
				.startsWith("ledger:        240 of 240 payments booked, each customer's in the order sent, by ")
				.endsWith("; c06-5 booked on attempt 2 (retry.2s)"));
		assertLedgerBookedEveryPaymentOnceInOrderInBatches(ledger);
		// what an operator sees over HTTP
		assertThat(prometheus).contains("kafka_resilience_dlq_records_total{error_class=\"permanent\"")
			.contains("reason=\"exhausted\"")
			.contains("kafka_resilience_attempts_total{")
			.contains("kafka_resilience_locks_active{");
		assertThat(resilience).contains("\"id\":\"payments\"")
			.contains("\"dlqTopic\":\"payments-sample.payments.dlq\"")
			.contains("\"id\":\"ledger\"")
			.contains("\"dlqTopic\":\"ledger.payments.dlq\"")
			.contains("\"batch\":{\"size\":50,")
			.contains("\"active\":0");
		// one ladder per group: the payments listener's and the ledger's
		String lockViews = "\"lockViews\":{\"ledger.payments.locks\":\"current\",\"payments-sample.payments.locks\":\"current\"}";
		assertThat(health).contains("\"status\":\"UP\"").contains(lockViews);
		// the library's contributor alone, where the docs say it is
		assertThat(documentedHealth).as(documentedHealthPath)
			.contains("\"status\":\"UP\"")
			.contains(lockViews)
			.contains("\"payments\":{\"running\":true")
			.contains("\"ledger\":{\"running\":true");
	}

	/**
	 * The ledger's batch listener booked each payment sent once, each customer's in the
	 * order sent, in batches. The insert that stopped at {@link Ledger#BUSY_ONCE_PAYMENT}
	 * booked the rows before it (the index the listener named in its
	 * {@code BatchListenerFailedException}); that payment was booked from the first retry
	 * stage, by a later insert.
	 */
	private static void assertLedgerBookedEveryPaymentOnceInOrderInBatches(Ledger ledger) {
		List<Ledger.Entry> entries = ledger.entries();
		Map<String, List<String>> booked = entries.stream()
			.collect(Collectors.groupingBy(Ledger.Entry::customer, TreeMap::new,
					Collectors.mapping(Ledger.Entry::payment, Collectors.toList())));
		assertThat(booked).hasSize(12);
		booked.forEach((customer, payments) -> assertThat(payments).as(customer)
			.containsExactlyElementsOf(IntStream.rangeClosed(1, 20).mapToObj((n) -> customer + "-" + n).toList()));
		assertThat(entries).hasSize(240);

		List<Ledger.Insert> inserts = ledger.inserts();
		assertThat(inserts).as("inserts %s", inserts)
			.anySatisfy((insert) -> assertThat(insert.rows()).isGreaterThan(1))
			.allSatisfy((insert) -> assertThat(insert.rows()).isBetween(1, 50));
		assertThat(ledger.failedBookings()).isEqualTo(Map.of(Ledger.BUSY_ONCE_PAYMENT, 1));
		Ledger.Insert failed = inserts.stream().filter((insert) -> insert.failedOn() != null).findFirst().orElseThrow();
		assertThat(failed.failedOn()).isEqualTo(Ledger.BUSY_ONCE_PAYMENT);
		assertThat(entries.stream().filter((entry) -> entry.insert() == failed.number()))
			.as("the rows before the failed one were booked by its insert")
			.hasSize(failed.booked());
		assertThat(entries).filteredOn((entry) -> entry.payment().equals(Ledger.BUSY_ONCE_PAYMENT))
			.singleElement()
			.satisfies((entry) -> {
				assertThat(entry.stage()).isEqualTo("retry.2s");
				assertThat(entry.insert()).isGreaterThan(failed.number());
			});
	}

	/**
	 * The path of the library's health contributor as the operations guide's "What to
	 * watch" table gives it, which the metrics guide must give too.
	 */
	private static String documentedHealthPath() throws IOException {
		Path docs = Path.of("").toAbsolutePath().getParent().resolve("docs");
		Matcher row = HEALTH_ROW.matcher(Files.readString(docs.resolve("OPERATIONS.md")));
		assertThat(row.find()).as("a health row in docs/OPERATIONS.md").isTrue();
		String path = row.group(1);
		assertThat(Files.readString(docs.resolve("METRICS.md"))).as("docs/METRICS.md").contains("`" + path + "`");
		return path;
	}

	private static String get(String url) throws Exception {
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as(url).isEqualTo(200);
		return response.body();
	}

}
