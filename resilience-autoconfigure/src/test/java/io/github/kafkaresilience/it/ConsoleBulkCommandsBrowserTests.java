package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An operator clears a backlog from the console in a real browser (headless Chromium):
 * retry now and dead-letter now clicked on six held keys of one partition, one after the
 * other without waiting for any to act, and every one acts, once.
 */
@UsesSharedBroker
class ConsoleBulkCommandsBrowserTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final List<String> KEYS = List.of("k0", "k1", "k2", "k3", "k4", "k5");

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
	void everyCommandClickedOnHeldKeysOfOnePartitionActs() throws Exception {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic);
		for (int i = 0; i < KEYS.size(); i++) {
			script.failTransiently(KEYS.get(i) + "-0", retried(i) ? 1 : Integer.MAX_VALUE);
		}
		try (ConfigurableApplicationContext context = TestApplication.startWeb(TestApplication.class, topic,
				"kafka.resilience.retry.delays=1h", "management.endpoints.web.exposure.include=kafkaresilience",
				"kafka.resilience.console.enabled=true", "kafka.resilience.console.actions-enabled=true",
				"spring.security.user.name=ops", "spring.security.user.password=secret",
				"spring.security.user.roles=KAFKA_RESILIENCE_OPERATOR")) {
			for (String key : KEYS) {
				SharedBroker.send(topic, key, key + "-0");
				SharedBroker.send(topic, key, key + "-1");
			}
			ConsoleBrowser.logIn(this.browser, "http://localhost:"
					+ context.getEnvironment().getProperty("local.server.port") + "/kafka-resilience/");
			// every head confirmed at its stage, parked an hour before its due time
			waitUntil((browser) -> KEYS.stream().allMatch((key) -> actionable(key)));

			for (int i = 0; i < KEYS.size(); i++) {
				String key = KEYS.get(i);
				if (retried(i)) {
					click(key, "button.retry-now");
				}
				else {
					click(key, "button.dead-letter-now");
					this.browser.switchTo().alert().accept();
				}
			}

			await().atMost(WAIT).until(() -> KEYS.stream().allMatch((key) -> script.succeeded(key + "-1")));
			waitUntil(ExpectedConditions.numberOfElementsToBe(By.cssSelector("#held tbody tr"), 0));
			ConsoleBrowser.screenshot(this.browser, "backlog-cleared");
			Map<String, List<String>> dlq = SharedBroker.readAll(Names.dlq(topic))
				.stream()
				.collect(
						Collectors
							.groupingBy(
									(letter) -> new String(
											letter.key()),
									Collectors.mapping(
											(letter) -> new String(letter.value()) + "/" + ProtocolHeaders
												.text(letter.headers(), ProtocolHeaders.DLQ_REASON),
											Collectors.toList())));
			for (int i = 0; i < KEYS.size(); i++) {
				String key = KEYS.get(i);
				assertThat(script.firstSuccesses(key)).endsWith(key + "-1");
				if (retried(i)) {
					assertThat(script.attempts(key + "-0")).as(key + "-0 run again once").isEqualTo(2);
					assertThat(dlq).doesNotContainKey(key);
				}
				else {
					assertThat(script.attempts(key + "-0")).as(key + "-0 not run again").isEqualTo(1);
					assertThat(dlq.get(key)).containsExactly(key + "-0/operator");
				}
			}
		}
	}

	private static boolean retried(int key) {
		return key % 2 == 0;
	}

	private boolean actionable(String key) {
		List<WebElement> rows = this.browser.findElements(By.cssSelector("#held tbody tr[data-key='" + key + "']"));
		return !rows.isEmpty() && rows.get(0).findElement(By.cssSelector("button.retry-now")).isEnabled();
	}

	/** Clicks a button of a held key's row, found again: the page refreshes its rows. */
	private void click(String key, String button) {
		waitUntil((browser) -> {
			browser.findElement(By.cssSelector("#held tbody tr[data-key='" + key + "'] " + button)).click();
			return true;
		});
	}

	private <T> T waitUntil(Function<WebDriver, T> condition) {
		return ConsoleBrowser.waitUntil(this.browser, condition);
	}

}
