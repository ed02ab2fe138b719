package io.github.kafkaresilience.it;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console and the endpoint's actions behind Spring Security, over HTTP: anonymous
 * requests are refused, a state-changing request without the CSRF token is refused, an
 * authenticated user without the configured role is refused, and one with the role and
 * the token gets through; without {@code kafka.resilience.console.enabled} there is no
 * page.
 */
@UsesSharedBroker
class ConsoleSecurityTests {

	@Test
	void actionsNeedAnAuthenticatedOperatorWithTheRoleAndTheCsrfToken() throws Exception {
		String topic = SharedBroker.newTopic(1);
		try (ConfigurableApplicationContext context = TestApplication.startWeb(TestApplication.class, topic,
				"management.endpoints.web.exposure.include=kafkaresilience", "kafka.resilience.console.enabled=true",
				"kafka.resilience.console.actions-enabled=true", "kafka.resilience.console.role=RETRY_OPERATOR",
				"spring.security.user.name=ops", "spring.security.user.password=secret",
				"spring.security.user.roles=RETRY_OPERATOR,VIEWER")) {
			String action = "/actuator/kafkaresilience/retry-now";
			String body = "{\"listener\":\"it-" + topic + "\",\"topic\":\"" + topic + "\",\"lock\":\"no-such-lock\"}";

			ConsoleHttp anonymous = ConsoleHttp.anonymous(context);
			assertThat(anonymous.post(action, body, null).statusCode()).as("anonymous").isEqualTo(401);
			assertThat(anonymous.get("/kafka-resilience/").statusCode()).as("the page, anonymous").isEqualTo(401);

			// logged in as a browser is, with a session
			ConsoleHttp session = ConsoleHttp.logIn(context, "ops");
			assertThat(session.post(action, body, null).statusCode()).as("no CSRF token").isEqualTo(403);

			Map<String, Object> settings = session.settings();
			assertThat(settings).containsEntry("endpoint", "/actuator/kafkaresilience")
				.containsEntry("actionsEnabled", true);
			@SuppressWarnings("unchecked")
			Map<String, String> csrf = (Map<String, String>) settings.get("csrf");
			assertThat(csrf).containsKey("token").containsEntry("header", "X-CSRF-TOKEN");
			assertThat(session.post(action, body, Map.of("header", "X-CSRF-TOKEN", "token", "forged")).statusCode())
				.as("a forged CSRF token")
				.isEqualTo(403);

			HttpResponse<String> allowed = session.post(action, body, csrf);
			assertThat(allowed.statusCode()).as("through security; the lock is unknown").isEqualTo(404);
			assertThat(allowed.body()).contains("no such live lock");
		}
	}

	@Test
	void aUserWithoutTheRoleMayReadButNotAct() throws Exception {
		String topic = SharedBroker.newTopic(1);
		try (ConfigurableApplicationContext context = TestApplication.startWeb(TestApplication.class, topic,
				"management.endpoints.web.exposure.include=kafkaresilience", "kafka.resilience.console.enabled=true",
				"kafka.resilience.console.actions-enabled=true", "spring.security.user.name=viewer",
				"spring.security.user.password=secret", "spring.security.user.roles=VIEWER")) {
			ConsoleHttp session = ConsoleHttp.logIn(context, "viewer");
			assertThat(session.get("/actuator/kafkaresilience/held").statusCode()).isEqualTo(200);
			HttpResponse<String> refused = session.post("/actuator/kafkaresilience/pause",
					"{\"listener\":\"it-" + topic + "\"}");
			assertThat(refused.statusCode()).isEqualTo(403);
			assertThat(refused.body()).contains("needs role KAFKA_RESILIENCE_OPERATOR");
		}
	}

	@Test
	void withoutTheConsoleEnabledThereIsNoPage() throws Exception {
		String topic = SharedBroker.newTopic(1);
		try (ConfigurableApplicationContext context = TestApplication.startWeb(TestApplication.class, topic,
				"management.endpoints.web.exposure.include=kafkaresilience", "spring.security.user.name=ops",
				"spring.security.user.password=secret")) {
			String basic = "Basic " + Base64.getEncoder().encodeToString("ops:secret".getBytes(StandardCharsets.UTF_8));
			assertThat(ConsoleHttp.anonymous(context).get("/kafka-resilience/", basic).statusCode()).isEqualTo(404);
		}
	}

}
