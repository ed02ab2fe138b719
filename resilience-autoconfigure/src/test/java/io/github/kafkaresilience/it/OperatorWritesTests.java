package io.github.kafkaresilience.it;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.Map;

import io.github.kafkaresilience.internal.support.StartupFailures;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Every write of the endpoint goes through one gate, over HTTP, with Spring Security and
 * without: a replay that sends needs {@code actions-enabled}, the role and the CSRF token
 * as the other actions do, and is audited with who asked, the filter and how many were
 * sent; a dry run is a read. Without Spring Security, enabled actions need the explicit
 * {@code allow-anonymous-actions}. A request's text reaches the audit log escaped, and a
 * listener it makes up is counted as {@code unknown}.
 */
@UsesSharedBroker
class OperatorWritesTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final String ENDPOINT = "/actuator/kafkaresilience";

	private static final String[] CONSOLE = { "management.endpoints.web.exposure.include=kafkaresilience",
			"kafka.resilience.console.enabled=true", "kafka.resilience.retry.delays=1s" };

	private static final String ACTIONS = "kafka.resilience.console.actions-enabled=true";

	@Test
	void aReplayThatSendsNeedsTheRoleAndTheCsrfTokenAndIsAuditedWhileADryRunIsARead() throws Exception {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic).failPermanently("P1");
		try (ConfigurableApplicationContext context = TestApplication.startWeb(SecuredApplication.class, topic,
				with(CONSOLE, ACTIONS)); AuditLines audit = AuditLines.capture()) {
			deadLetter(topic, script);
			String dryRun = "{\"from\":\"" + Names.dlq(topic) + "\"}";
			String send = "{\"from\":\"" + Names.dlq(topic) + "\",\"dryRun\":false}";

			ConsoleHttp viewer = ConsoleHttp.logIn(context, "viewer");
			HttpResponse<String> counted = viewer.post(ENDPOINT, dryRun);
			assertThat(counted.statusCode()).as("a dry run is a read").isEqualTo(200);
			assertThat(ConsoleHttp.json(counted)).containsEntry("matched", 1)
				.containsEntry("published", 0)
				.containsEntry("complete", true);
			HttpResponse<String> withoutRole = viewer.post(ENDPOINT, send);
			assertThat(withoutRole.statusCode()).isEqualTo(403);
			assertThat(withoutRole.body()).contains("needs role KAFKA_RESILIENCE_OPERATOR");

			ConsoleHttp ops = ConsoleHttp.logIn(context, "ops");
			assertThat(ops.post(ENDPOINT, send, null).statusCode()).as("no CSRF token").isEqualTo(403);
			HttpResponse<String> elsewhere = ops.post(ENDPOINT,
					"{\"from\":\"" + Names.dlq(topic) + "\",\"to\":\"other\",\"dryRun\":false}");
			assertThat(elsewhere.statusCode()).isEqualTo(400);
			assertThat(elsewhere.body()).contains("replay into another with the replay command");
			assertThat(script.attempts("P1")).as("nothing sent yet").isEqualTo(1);

			script.succeedFromNowOn("P1");
			HttpResponse<String> sent = ops.post(ENDPOINT, send);
			assertThat(sent.statusCode()).isEqualTo(200);
			assertThat(ConsoleHttp.json(sent)).containsEntry("published", 1);
			await().atMost(WAIT).until(() -> script.succeeded("P1"));

			assertThat(audit.lines()).as("dry runs are reads, not audited").hasSize(3);
			assertThat(audit.lines().get(0)).startsWith("WARN Operator 'viewer' was refused replay on dead letters of '"
					+ Names.dlq(topic) + "': needs role");
			assertThat(audit.lines().get(1)).startsWith("WARN Operator 'ops' was refused replay")
				.contains("replay command");
			assertThat(audit.lines().get(2))
				.startsWith("INFO Operator 'ops' replayed " + Names.dlq(topic) + " -> " + topic)
				.endsWith("matched 1, sent 1 into '" + Names.retry(topic, "1s") + "'");
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(actions(meters, "replay", "accepted", "it-" + topic)).isEqualTo(1);
			assertThat(actions(meters, "replay", "refused", "it-" + topic)).isEqualTo(2);
		}
	}

	@Test
	void withActionsOffAReplayThatSendsIsRefusedAndADryRunStillReads() throws Exception {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic).failPermanently("P1");
		try (ConfigurableApplicationContext context = TestApplication.startWeb(SecuredApplication.class, topic,
				CONSOLE)) {
			deadLetter(topic, script);
			ConsoleHttp ops = ConsoleHttp.logIn(context, "ops");
			HttpResponse<String> refused = ops.post(ENDPOINT,
					"{\"from\":\"" + Names.dlq(topic) + "\",\"dryRun\":false}");
			assertThat(refused.statusCode()).isEqualTo(403);
			assertThat(refused.body()).contains("kafka.resilience.console.actions-enabled=true");
			HttpResponse<String> counted = ops.post(ENDPOINT, "{\"from\":\"" + Names.dlq(topic) + "\"}");
			assertThat(counted.statusCode()).isEqualTo(200);
			assertThat(ConsoleHttp.json(counted)).containsEntry("matched", 1);
			assertThat(SharedBroker.readAll(Names.retry(topic, "1s"))).as("nothing sent back").isEmpty();
		}
	}

	@Test
	void aForgedOrMadeUpListenerIsAuditedOnceEscapedAndCountedAsUnknown() throws Exception {
		String topic = SharedBroker.newTopic(1);
		try (ConfigurableApplicationContext context = TestApplication.startWeb(SecuredApplication.class, topic,
				with(CONSOLE, ACTIONS)); AuditLines audit = AuditLines.capture()) {
			ConsoleHttp ops = ConsoleHttp.logIn(context, "ops");
			String forged = "it-" + topic + "\r\n2026-11-28T12:00:00Z INFO Operator 'admin' asked retry-now";
			HttpResponse<String> first = ops.post(ENDPOINT + "/retry-now", "{\"listener\":"
					+ ConsoleHttp.JSON.writeValueAsString(forged) + ",\"topic\":\"" + topic + "\",\"lock\":\"x\"}");
			assertThat(first.statusCode()).isEqualTo(404);
			HttpResponse<String> second = ops.post(ENDPOINT + "/pause", "{\"listener\":\"made-up-listener\"}");
			assertThat(second.statusCode()).isEqualTo(404);

			assertThat(audit.lines()).hasSize(2).allSatisfy((line) -> assertThat(line).doesNotContain("\r", "\n"));
			assertThat(audit.lines().get(0))
				.startsWith("WARN Operator 'ops' was refused retry-now on lock 'x' of " + "listener 'it-" + topic
						+ "\\u000D\\u000A2026-11-28T12:00:00Z INFO Operator 'admin' asked retry-now' " + "(unknown)");
			assertThat(audit.lines().get(1))
				.startsWith("WARN Operator 'ops' was refused pause on listener 'made-up-listener' (unknown)");
			Collection<Meter> series = context.getBean(MeterRegistry.class)
				.find("kafka.resilience.operator.actions")
				.meters();
			assertThat(series).extracting((meter) -> meter.getId().getTag("listener")).containsOnly("unknown");
			assertThat(series).hasSize(2); // retry-now and pause, refused
		}
	}

	@Test
	void withoutSpringSecurityEnabledActionsDoNotStartWithoutTheExplicitProperty() {
		String topic = SharedBroker.newTopic(1);
		assertThatThrownBy(() -> UnsecuredApplication.start(topic, with(CONSOLE, ACTIONS)).close())
			.satisfies((failure) -> {
				FailureAnalysis analysis = StartupFailures.analysis(failure);
				assertThat(analysis).isNotNull();
				assertThat(analysis.getDescription()).contains("Spring Security is not on the class path");
				assertThat(analysis.getAction()).contains("kafka.resilience.console.allow-anonymous-actions=true",
						"docs/SECURITY.md");
			});
	}

	@Test
	@SuppressWarnings("unchecked")
	void withoutSpringSecurityAndAnonymousActionsAllowedAReplayIsAuditedAsAnonymous() throws Exception {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic).failPermanently("P1");
		try (ConfigurableApplicationContext context = UnsecuredApplication.start(topic,
				with(CONSOLE, ACTIONS, "kafka.resilience.console.allow-anonymous-actions=true"));
				AuditLines audit = AuditLines.capture()) {
			deadLetter(topic, script);
			ConsoleHttp anyone = ConsoleHttp.anonymous(context);
			assertThat(anyone.settings()).containsEntry("csrf", null).containsEntry("actionsEnabled", true);
			script.succeedFromNowOn("P1");
			HttpResponse<String> sent = anyone.post(ENDPOINT,
					"{\"from\":\"" + Names.dlq(topic) + "\",\"dryRun\":false}");
			assertThat(sent.statusCode()).isEqualTo(200);
			assertThat(ConsoleHttp.json(sent)).containsEntry("published", 1);
			await().atMost(WAIT).until(() -> script.succeeded("P1"));
			assertThat(audit.lines()).singleElement()
				.satisfies((line) -> assertThat(line).startsWith("INFO Operator 'anonymous' replayed"));
			assertThat(actions(context.getBean(MeterRegistry.class), "replay", "accepted", "it-" + topic)).isEqualTo(1);

			// without roles to check, values are shown to no one by default
			Map<String, Object> letter = anyone.firstDeadLetter(topic);
			assertThat((Map<String, Object>) letter.get("value")).containsEntry("format", "hidden");
			// the browser does not guess a response's type, with or without Spring
			// Security
			assertThat(anyone.get(ENDPOINT).headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
			HttpResponse<String> page = anyone.get("/kafka-resilience/");
			assertThat(page.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
			assertThat(page.headers().firstValue("Content-Security-Policy").orElseThrow())
				.contains("default-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'self'",
						"frame-ancestors 'none'")
				.doesNotContain("unsafe-inline");
		}
	}

	@Test
	void withoutSpringSecurityAndActionsOffAReplayThatSendsIsRefused() throws Exception {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic).failPermanently("P1");
		try (ConfigurableApplicationContext context = UnsecuredApplication.start(topic, CONSOLE)) {
			deadLetter(topic, script);
			ConsoleHttp anyone = ConsoleHttp.anonymous(context);
			HttpResponse<String> refused = anyone.post(ENDPOINT,
					"{\"from\":\"" + Names.dlq(topic) + "\",\"dryRun\":false}");
			assertThat(refused.statusCode()).isEqualTo(403);
			assertThat(anyone.post(ENDPOINT, "{\"from\":\"" + Names.dlq(topic) + "\"}").statusCode()).isEqualTo(200);
			assertThat(anyone.post(ENDPOINT + "/pause", "{\"listener\":\"it-" + topic + "\"}").statusCode())
				.isEqualTo(403);
			assertThat(SharedBroker.readAll(Names.retry(topic, "1s"))).isEmpty();
		}
	}

	/**
	 * Sends a record that fails permanently and waits until it is in the dead-letter
	 * topic.
	 */
	private static void deadLetter(String topic, Script script) {
		SharedBroker.send(topic, "p", "P1");
		await().atMost(WAIT).until(() -> SharedBroker.readAll(Names.dlq(topic)).size() == 1);
		assertThat(script.attempts("P1")).isEqualTo(1);
	}

	private static double actions(MeterRegistry meters, String action, String outcome, String listener) {
		Counter counter = meters.find("kafka.resilience.operator.actions")
			.tags("action", action, "outcome", outcome, "listener", listener)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static String[] with(String[] properties, String... more) {
		String[] all = Arrays.copyOf(properties, properties.length + more.length);
		System.arraycopy(more, 0, all, properties.length, more.length);
		return all;
	}

}
