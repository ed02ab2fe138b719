package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
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

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The operator's console in a real browser (headless Chromium), behind Spring Security's
 * form login, on a real broker: it lists held keys while they are held, retry now runs
 * one before its due time, dead-letter now sends one to the DLQ with
 * {@code dlq.reason=operator} and lets the key's next record run, the DLQ list filters
 * and shows one dead letter, a replay of the selection follows a dry run, and a listener
 * is paused and resumed. Screenshots are kept in {@code target/console-screenshots}.
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

}
