package io.github.kafkaresilience.it;

import java.io.IOException;
import java.net.CookieManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console and the endpoint's actions behind Spring Security, over HTTP: anonymous
 * requests are refused, a state-changing request without the CSRF token is refused, an
 * authenticated user without the configured role is refused, and one with the role and the
 * token gets through; without {@code kafka.resilience.console.enabled} there is no page.
 */
@UsesSharedBroker
class ConsoleSecurityTests {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	@Test
	void actionsNeedAnAuthenticatedOperatorWithTheRoleAndTheCsrfToken() throws Exception {
		String topic = SharedBroker.newTopic(1);
		try (ConfigurableApplicationContext context = TestApplication.startWeb(TestApplication.class, topic,
				"management.endpoints.web.exposure.include=kafkaresilience", "kafka.resilience.console.enabled=true",
				"kafka.resilience.console.actions-enabled=true", "kafka.resilience.console.role=RETRY_OPERATOR",
				"spring.security.user.name=ops", "spring.security.user.password=secret",
				"spring.security.user.roles=RETRY_OPERATOR,VIEWER")) {
			String base = "http://localhost:" + context.getEnvironment().getProperty("local.server.port");
			String action = base + "/actuator/kafkaresilience/retry-now";
			String body = "{\"listener\":\"it-" + topic + "\",\"topic\":\"" + topic + "\",\"lock\":\"no-such-lock\"}";

			HttpClient anonymous = HttpClient.newHttpClient();
			assertThat(anonymous.send(post(action, body, null, null), HttpResponse.BodyHandlers.ofString()).statusCode())
				.as("anonymous").isEqualTo(401);
			assertThat(anonymous.send(get(base + "/kafka-resilience/", null), HttpResponse.BodyHandlers.ofString())
				.statusCode()).as("the page, anonymous").isEqualTo(401);

			// logged in as a browser is, with a session
			HttpClient session = logIn(base, "ops");
			HttpResponse<String> withoutToken = session.send(post(action, body, null, null),
					HttpResponse.BodyHandlers.ofString());
			assertThat(withoutToken.statusCode()).as("no CSRF token").isEqualTo(403);

			Map<String, Object> settings = settings(session, base);
			assertThat(settings).containsEntry("endpoint", "/actuator/kafkaresilience").containsEntry("actionsEnabled", true);
			@SuppressWarnings("unchecked")
			Map<String, String> csrf = (Map<String, String>) settings.get("csrf");
			assertThat(csrf).containsKey("token").containsEntry("header", "X-CSRF-TOKEN");
			HttpResponse<String> wrongToken = session.send(post(action, body, null,
					Map.of("header", "X-CSRF-TOKEN", "token", "forged")), HttpResponse.BodyHandlers.ofString());
			assertThat(wrongToken.statusCode()).as("a forged CSRF token").isEqualTo(403);

			HttpResponse<String> allowed = session.send(post(action, body, null, csrf), HttpResponse.BodyHandlers.ofString());
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
			String base = "http://localhost:" + context.getEnvironment().getProperty("local.server.port");
			HttpClient session = logIn(base, "viewer");
			assertThat(session.send(get(base + "/actuator/kafkaresilience/held", null), HttpResponse.BodyHandlers.ofString())
				.statusCode()).isEqualTo(200);
			@SuppressWarnings("unchecked")
			Map<String, String> csrf = (Map<String, String>) settings(session, base).get("csrf");
			HttpResponse<String> refused = session.send(post(base + "/actuator/kafkaresilience/pause",
					"{\"listener\":\"it-" + topic + "\"}", null, csrf), HttpResponse.BodyHandlers.ofString());
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
			String base = "http://localhost:" + context.getEnvironment().getProperty("local.server.port");
			String basic = "Basic " + Base64.getEncoder().encodeToString("ops:secret".getBytes(StandardCharsets.UTF_8));
			assertThat(HttpClient.newHttpClient()
				.send(get(base + "/kafka-resilience/", basic), HttpResponse.BodyHandlers.ofString())
				.statusCode()).isEqualTo(404);
		}
	}

	/** A client logged in through Spring Security's login form, as a browser is: a session, and its CSRF token. */
	private static HttpClient logIn(String base, String user) throws Exception {
		HttpClient client = HttpClient.newBuilder().cookieHandler(new CookieManager()).build();
		String page = client.send(HttpRequest.newBuilder(URI.create(base + "/login")).build(),
				HttpResponse.BodyHandlers.ofString()).body();
		java.util.regex.Matcher token = java.util.regex.Pattern.compile("name=\"_csrf\"[^>]*value=\"([^\"]+)\"").matcher(page);
		assertThat(token.find()).as("the login form's CSRF token").isTrue();
		String form = "username=" + user + "&password=secret&_csrf=" + java.net.URLEncoder.encode(token.group(1),
				StandardCharsets.UTF_8);
		HttpResponse<String> loggedIn = client.send(HttpRequest.newBuilder(URI.create(base + "/login"))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString(form))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(loggedIn.statusCode()).as("logged in").isEqualTo(302);
		assertThat(loggedIn.headers().firstValue("Location").orElse("")).doesNotContain("error");
		return client;
	}

	/** The console's settings, read with the session: where the endpoint is, and its CSRF token. */
	private static Map<String, Object> settings(HttpClient session, String base) throws Exception {
		HttpResponse<String> settings = session.send(get(base + "/kafka-resilience/settings", null),
				HttpResponse.BodyHandlers.ofString());
		assertThat(settings.statusCode()).isEqualTo(200);
		return JSON.readValue(settings.body(), Map.class);
	}

	private static HttpRequest get(String url, String authorization) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).header("Accept", "application/json");
		if (authorization != null) {
			request.header("Authorization", authorization);
		}
		return request.build();
	}

	private static HttpRequest post(String url, String body, String authorization, Map<String, String> csrf)
			throws IOException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url))
			.header("Content-Type", "application/json")
			.header("Accept", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		if (authorization != null) {
			request.header("Authorization", authorization);
		}
		if (csrf != null) {
			request.header(csrf.get("header"), csrf.get("token"));
		}
		return request.build();
	}

}
