package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.internal.actuate.KafkaResilienceEndpoint;
import io.github.kafkaresilience.internal.actuate.KafkaResilienceEndpoint.ListenerDescriptor;
import io.github.kafkaresilience.internal.actuate.TenantViews.TenantDescriptor;
import io.github.kafkaresilience.internal.container.TenantTally;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * The operator's console in a real browser (headless Chromium), behind Spring Security's
 * form login, on a real broker: it lists held keys while they are held, retry now runs
 * one before its due time, dead-letter now sends one to the DLQ with
 * {@code dlq.reason=operator} and lets the key's next record run, the DLQ list filters
 * and shows one dead letter, a replay of the selection follows a dry run, and a listener
 * is paused and resumed; a listener whose records have tenants shows each tenant's
 * figures and its rate limit. Screenshots are kept in {@code target/console-screenshots}.
 */
@UsesSharedBroker
class ConsoleBrowserTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	private WebDriver browser;

	@BeforeEach
	void startBrowser() {
		this.browser = ConsoleBrowser.start();
	}

	@AfterEach
	void stopBrowser() {
		if (this.browser != null) {
			this.browser.quit();
		}
	}

	@Test
	void anOperatorSeesHeldKeysAndActsOnThemInTheBrowser() throws Exception {
		String topic = SharedBroker.newTopic(2);
		Script script = Script.forTopic(topic)
			.failTransiently("S1", 1)
			.failTransiently("D1", Integer.MAX_VALUE)
			.failTransiently("W1", Integer.MAX_VALUE);
		try (ConfigurableApplicationContext context = TestApplication.startWeb(TestApplication.class, topic,
				"kafka.resilience.retry.delays=1h", "management.endpoints.web.exposure.include=kafkaresilience,health",
				"kafka.resilience.console.enabled=true", "kafka.resilience.console.actions-enabled=true",
				"spring.security.user.name=ops", "spring.security.user.password=secret",
				"spring.security.user.roles=KAFKA_RESILIENCE_OPERATOR")) {
			String console = "http://localhost:" + context.getEnvironment().getProperty("local.server.port")
					+ "/kafka-resilience/";
			SharedBroker.send(topic, "slow", "S1");
			SharedBroker.send(topic, "slow", "S2");
			SharedBroker.send(topic, "dead", "D1");
			SharedBroker.send(topic, "dead", "D2");
			SharedBroker.send(topic, "waiting", "W1");

			ConsoleBrowser.logIn(this.browser, console);
			WebElement slow = heldRow("slow");
			assertThat(slow.findElement(By.xpath("td[2]")).getText()).isEqualTo("2");
			assertThat(heldRow("dead")).isNotNull();
			await().atMost(WAIT).until(() -> this.browser.findElements(By.cssSelector("#held tbody tr")).size() == 3);
			ConsoleBrowser.screenshot(this.browser, "held-keys");
			assertThat(script.attempts("S2")).as("the key's next record waits behind its head").isZero();

			// retry now: the head runs before its due time (an hour away), then its key's
			// next record
			slow.findElement(By.cssSelector("button.retry-now")).click();
			await().atMost(WAIT).until(() -> script.succeeded("S2"));
			assertThat(script.firstSuccesses("slow")).containsExactly("S1", "S2");
			waitUntil(ExpectedConditions.numberOfElementsToBe(By.cssSelector("#held tbody tr[data-key='slow']"), 0));
			assertThat(this.browser.findElement(By.id("notice")).getText())
				.contains("retry-now on key slow: accepted (by ops)");

			// dead-letter now: the head goes to the DLQ as operator, its key's next
			// record runs
			heldRow("dead").findElement(By.cssSelector("button.dead-letter-now")).click();
			this.browser.switchTo().alert().accept();
			await().atMost(WAIT).until(() -> script.succeeded("D2"));
			assertThat(script.attempts("D1")).isEqualTo(1);
			List<ConsumerRecord<byte[], byte[]>> dlq = SharedBroker.readAll(Names.dlq(topic));
			assertThat(dlq).singleElement()
				.satisfies((letter) -> assertThat(ProtocolHeaders.text(letter.headers(), ProtocolHeaders.DLQ_REASON))
					.isEqualTo("operator"));

			// the DLQ list, filtered by reason and key, and one dead letter in full
			new Select(this.browser.findElement(By.id("dlq-reason"))).selectByVisibleText("operator");
			this.browser.findElement(By.id("dlq-key")).sendKeys("dead");
			this.browser.findElement(By.id("dlq-search")).click();
			waitUntil(ExpectedConditions.numberOfElementsToBe(By.cssSelector("#dead-letters tbody tr"), 1));
			WebElement letter = this.browser.findElement(By.cssSelector("#dead-letters tbody tr"));
			assertThat(letter.findElement(By.cssSelector("td.key")).getText()).isEqualTo("dead");
			assertThat(letter.findElement(By.cssSelector("td.reason")).getText()).isEqualTo("operator");
			letter.click();
			waitUntil(ExpectedConditions.textToBe(By.id("dead-letter-value"), "D1"));
			assertThat(this.browser.findElement(By.id("dead-letter-headers")).getText()).contains("dlq.reason operator")
				.contains("retry.count 1");
			ConsoleBrowser.screenshot(this.browser, "dead-letters");
			// a filter that matches nothing lists nothing
			this.browser.findElement(By.id("dlq-key")).sendKeys("-other");
			this.browser.findElement(By.id("dlq-search")).click();
			waitUntil(ExpectedConditions.numberOfElementsToBe(By.cssSelector("#dead-letters tbody tr"), 0));
			this.browser.findElement(By.id("dlq-key")).clear();
			this.browser.findElement(By.id("dlq-key")).sendKeys("dead");

			// a replay of the selection, after its dry run
			script.succeedFromNowOn("D1");
			assertThat(this.browser.findElement(By.id("replay")).isEnabled()).isFalse();
			this.browser.findElement(By.id("replay-dry-run")).click();
			waitUntil(ExpectedConditions.textToBePresentInElementLocated(By.id("replay-result"),
					"Dry run: 1 dead letters match"));
			assertThat(script.attempts("D1")).as("a dry run sends nothing").isEqualTo(1);
			this.browser.findElement(By.id("replay")).click();
			waitUntil(ExpectedConditions.textToBePresentInElementLocated(By.id("replay-result"), "Replayed 1 of 1"));
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(script.journal())
					.anyMatch((attempt) -> attempt.value().equals("D1") && attempt.replayed() && attempt.succeeded()));

			// pause and resume the listener
			String listener = "it-" + topic;
			ListenerRegistry registry = context.getBean(ListenerRegistry.class);
			listenerRow(listener).findElement(By.cssSelector("button.pause")).click();
			waitUntil(ExpectedConditions.textToBePresentInElementLocated(
					By.cssSelector("#listeners tr[data-listener='" + listener + "'] td.state"), "paused"));
			assertThat(registry.isPauseRequested(listener)).isTrue();
			ConsoleBrowser.screenshot(this.browser, "paused");
			listenerRow(listener).findElement(By.cssSelector("button.resume")).click();
			waitUntil(ExpectedConditions.textToBePresentInElementLocated(
					By.cssSelector("#listeners tr[data-listener='" + listener + "'] td.state"), "running"));
			assertThat(registry.isPauseRequested(listener)).isFalse();
			assertThat(this.browser.findElement(By.id("error")).isDisplayed()).isFalse();
		}
	}

	@Test
	void withoutActionsTheConsoleIsReadOnly() throws Exception {
		String topic = SharedBroker.newTopic(1);
		Script.forTopic(topic).failTransiently("R1", Integer.MAX_VALUE);
		try (ConfigurableApplicationContext context = TestApplication.startWeb(TestApplication.class, topic,
				"kafka.resilience.retry.delays=1h", "management.endpoints.web.exposure.include=kafkaresilience",
				"kafka.resilience.console.enabled=true", "kafka.resilience.console.path=/ops/retries",
				"spring.security.user.name=ops", "spring.security.user.password=secret",
				"spring.security.user.roles=KAFKA_RESILIENCE_OPERATOR")) {
			SharedBroker.send(topic, "r", "R1");
			ConsoleBrowser.logIn(this.browser,
					"http://localhost:" + context.getEnvironment().getProperty("local.server.port") + "/ops/retries/");
			WebElement row = heldRow("r");
			assertThat(this.browser.findElement(By.id("mode")).getText()).isEqualTo("read-only");
			assertThat(row.findElement(By.cssSelector("button.retry-now")).isDisplayed()).isFalse();
			assertThat(this.browser.findElement(By.id("replay-dry-run")).isDisplayed()).isFalse();
			ConsoleBrowser.screenshot(this.browser, "read-only");
		}
	}

	@Test
	void credentialsInADeadLettersHeadersAreMaskedAndHiddenCharactersOfKeysAreShownEscaped() throws Exception {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic).failTransiently("H1", Integer.MAX_VALUE).failPermanently("SECRET1");
		try (ConfigurableApplicationContext context = TestApplication.startWeb(TestApplication.class, topic,
				"kafka.resilience.retry.delays=1h", "management.endpoints.web.exposure.include=kafkaresilience",
				"kafka.resilience.console.enabled=true", "kafka.resilience.console.actions-enabled=true",
				// below the 100 dead letters the page would show: it asks for no more
				// than this
				"kafka.resilience.console.max-page-size=10", "spring.security.user.name=ops",
				"spring.security.user.password=secret", "spring.security.user.roles=KAFKA_RESILIENCE_OPERATOR")) {
			// keys with a line separator and a bidi override, and how the page shows them
			String held = "line\u2028sep";
			String heldShown = "line\\u2028sep";
			SharedBroker.send(topic, held, "H1");
			ProducerRecord<byte[], byte[]> secret = new ProducerRecord<>(topic,
					"bidi\u202Eevil".getBytes(StandardCharsets.UTF_8), "SECRET1".getBytes(StandardCharsets.UTF_8));
			secret.headers().add("Authorization", "Bearer abc.def".getBytes(StandardCharsets.UTF_8));
			secret.headers().add("x-api-token", "t0k3n".getBytes(StandardCharsets.UTF_8));
			SharedBroker.send(secret);
			await().atMost(WAIT).until(() -> SharedBroker.readAll(Names.dlq(topic)).size() == 1);

			ConsoleBrowser.logIn(this.browser, "http://localhost:"
					+ context.getEnvironment().getProperty("local.server.port") + "/kafka-resilience/");
			// a key with a line separator: escaped in the table and in the confirm dialog
			await().atMost(WAIT)
				.until(() -> this.browser.findElements(By.cssSelector("#held tbody td.key")).size() == 1);
			WebElement heldKey = this.browser.findElement(By.cssSelector("#held tbody td.key"));
			waitUntil(
					(browser) -> browser.findElement(By.cssSelector("#held tbody button.dead-letter-now")).isEnabled());
			assertThat(heldKey.getText()).isEqualTo(heldShown);
			this.browser.findElement(By.cssSelector("#held tbody button.dead-letter-now")).click();
			assertThat(this.browser.switchTo().alert().getText())
				.contains("key " + heldShown + " to the dead-letter topic");
			this.browser.switchTo().alert().dismiss();
			assertThat(script.attempts("H1")).isEqualTo(1);

			// a key with a bidi override, escaped; its credentials masked, its value
			// shown to the operator
			this.browser.findElement(By.id("dlq-search")).click();
			waitUntil(ExpectedConditions.numberOfElementsToBe(By.cssSelector("#dead-letters tbody tr"), 1));
			WebElement letter = this.browser.findElement(By.cssSelector("#dead-letters tbody tr"));
			assertThat(letter.findElement(By.cssSelector("td.key")).getText()).isEqualTo("bidi\\u202Eevil");
			letter.click();
			waitUntil(ExpectedConditions.textToBe(By.id("dead-letter-value"), "SECRET1"));
			String headers = this.browser.findElement(By.id("dead-letter-headers")).getText();
			assertThat(headers).contains("Authorization ******", "x-api-token ******", "dlq.reason permanent")
				.doesNotContain("Bearer", "t0k3n");
			assertThat(this.browser.findElement(By.id("error")).isDisplayed()).isFalse();
			ConsoleBrowser.screenshot(this.browser, "masked-headers");
		}
	}

	@Test
	void theTenantsOfAListenerAndItsRateLimitAreShownWithWhatEachTenantHad() throws Exception {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic);
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		try (ConfigurableApplicationContext context = TestApplication.startWeb(TenantsApplication.class, topic,
				"management.endpoints.web.exposure.include=kafkaresilience", "kafka.resilience.console.enabled=true",
				"spring.security.user.name=ops", "spring.security.user.password=secret",
				"spring.security.user.roles=KAFKA_RESILIENCE_OPERATOR")) {
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(meters));
			String listener = "it-" + topic;
			for (int i = 1; i <= 3; i++) {
				sendOfTenant(topic, "acme", "a" + i, "A" + i);
			}
			sendOfTenant(topic, "globex", "g1", "G1");
			sendOfTenant(topic, "globex", "g2", "G2");
			await().atMost(WAIT)
				.until(() -> List.of("A1", "A2", "A3", "G1", "G2").stream().allMatch(script::succeeded));

			// the endpoint: each tenant's figures, most records first, "other" last; none
			// in flight once the records are done
			KafkaResilienceEndpoint endpoint = context.getBean(KafkaResilienceEndpoint.class);
			await().atMost(WAIT).untilAsserted(() -> {
				List<TenantDescriptor> tenants = endpoint.resilience().listeners().get(0).tenants();
				assertThat(tenants).extracting(TenantDescriptor::tenant, TenantDescriptor::records)
					.containsExactly(tuple("acme", 3L), tuple("globex", 2L), tuple(TenantTally.OTHER, 0L));
				assertThat(tenants).allSatisfy((tenant) -> {
					assertThat(tenant.inFlight()).isZero();
					assertThat(tenant.waiting()).isZero();
				});
			});
			ListenerDescriptor described = endpoint.resilience().listeners().get(0);
			assertThat(described.rateLimit()).isNotNull();
			assertThat(described.rateLimit().recordsPerSecond()).isEqualTo(1000);
			assertThat(described.rateLimit().here()).isEqualTo(1000);
			// the meters, bound after the tenants were first counted
			assertThat(meters.get("kafka.resilience.tenant.records").tag("listener", listener).functionCounters())
				.extracting((counter) -> counter.getId().getTag("tenant"), FunctionCounter::count)
				.containsExactlyInAnyOrder(tuple("acme", 3.0), tuple("globex", 2.0), tuple(TenantTally.OTHER, 0.0));
			assertThat(meters.get("kafka.resilience.consumer.rate.limit").tag("listener", listener).gauge().value())
				.isEqualTo(1000);
			assertThat(meters.get("kafka.resilience.consumer.throttled").tag("listener", listener).functionCounter())
				.extracting((counter) -> counter.getId().getBaseUnit())
				.isEqualTo("seconds");

			// the page
			ConsoleBrowser.logIn(this.browser, "http://localhost:"
					+ context.getEnvironment().getProperty("local.server.port") + "/kafka-resilience/");
			String tenants = "#tenants div[data-listener='" + listener + "'] ";
			waitUntil(ExpectedConditions.textToBe(By.cssSelector(tenants + "tr[data-tenant='acme'] td.records"), "3"));
			assertThat(this.browser.findElement(By.id("tenants-section")).isDisplayed()).isTrue();
			assertThat(
					this.browser.findElement(By.cssSelector(tenants + "tr[data-tenant='globex'] td.records")).getText())
				.isEqualTo("2");
			assertThat(this.browser.findElements(By.cssSelector(tenants + "tbody tr")))
				.extracting((row) -> row.findElement(By.cssSelector("td.tenant")).getText())
				.containsExactly("acme", "globex", TenantTally.OTHER);
			assertThat(this.browser.findElement(By.cssSelector(tenants + "tr[data-tenant='acme']")).getText())
				.isEqualTo("acme 3 0 0 0.0");
			assertThat(this.browser.findElement(By.cssSelector(tenants + ".rate-limit")).getText())
				.startsWith("rate limit 1000 records/s;");
			assertThat(this.browser.findElement(By.id("error")).isDisplayed()).isFalse();
			ConsoleBrowser.screenshot(this.browser, "tenants");
		}
	}

	private static void sendOfTenant(String topic, String tenant, String key, String value) {
		ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8),
				value.getBytes(StandardCharsets.UTF_8));
		record.headers().add("tenant", tenant.getBytes(StandardCharsets.UTF_8));
		SharedBroker.send(record);
	}

	private WebElement heldRow(String key) {
		By row = By.cssSelector("#held tbody tr[data-key='" + key + "']");
		waitUntil(ExpectedConditions.presenceOfElementLocated(row));
		// a row whose head is confirmed at its stage (the page refreshes every 5 s)
		waitUntil((browser) -> browser.findElement(row).findElement(By.cssSelector("button.retry-now")).isEnabled());
		return this.browser.findElement(row);
	}

	private WebElement listenerRow(String listener) {
		return this.browser.findElement(By.cssSelector("#listeners tr[data-listener='" + listener + "']"));
	}

	private <T> T waitUntil(Function<WebDriver, T> condition) {
		return ConsoleBrowser.waitUntil(this.browser, condition);
	}

	/**
	 * The test application with a listener whose records have tenants, named by their
	 * {@code tenant} header, and a rate limit.
	 */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TenantsApplication.TenantListener.class)
	static class TenantsApplication {

		static class TenantListener {

			@OrderedRetryListener(id = "it-${test.topic}", topics = "${test.topic}", tenantHeader = "tenant",
					rateLimit = "1000")
			void handle(ConsumerRecord<String, String> record) {
				Script.forTopic(record.topic()).handle(record);
			}

		}

	}

}
