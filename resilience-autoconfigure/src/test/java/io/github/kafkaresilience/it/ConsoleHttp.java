package io.github.kafkaresilience.it;

import java.io.IOException;
import java.net.CookieManager;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client of the console and the endpoint over HTTP, as a browser is: anonymous, or
 * logged in through Spring Security's login form with a session, sending the CSRF token
 * the console's settings give with its POSTs.
 */
final class ConsoleHttp {

	static final JsonMapper JSON = JsonMapper.builder().build();

	private final HttpClient client;

	private final String base;

	private Map<String, String> csrf;

	private ConsoleHttp(HttpClient client, String base) {
		this.client = client;
		this.base = base;
	}

	/** The address of a web application started on a free port. */
	static String base(ConfigurableApplicationContext context) {
		return "http://localhost:" + context.getEnvironment().getProperty("local.server.port");
	}

	/** A client without a session or credentials. */
	static ConsoleHttp anonymous(ConfigurableApplicationContext context) {
		return new ConsoleHttp(HttpClient.newHttpClient(), base(context));
	}

	/**
	 * A client logged in through the login form as {@code user} (password
	 * {@code secret}).
	 */
	static ConsoleHttp logIn(ConfigurableApplicationContext context, String user) throws Exception {
		String base = base(context);
		HttpClient client = HttpClient.newBuilder().cookieHandler(new CookieManager()).build();
		String page = client
			.send(HttpRequest.newBuilder(URI.create(base + "/login")).build(), HttpResponse.BodyHandlers.ofString())
			.body();
		Matcher token = Pattern.compile("name=\"_csrf\"[^>]*value=\"([^\"]+)\"").matcher(page);
		assertThat(token.find()).as("the login form's CSRF token").isTrue();
		String form = "username=" + user + "&password=secret&_csrf="
				+ URLEncoder.encode(token.group(1), StandardCharsets.UTF_8);
		HttpResponse<String> loggedIn = client.send(HttpRequest.newBuilder(URI.create(base + "/login"))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString(form))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(loggedIn.statusCode()).as("logged in").isEqualTo(302);
		assertThat(loggedIn.headers().firstValue("Location").orElse("")).doesNotContain("error");
		return new ConsoleHttp(client, base);
	}

	/**
	 * The console's settings, read with this client's session: where the endpoint is, and
	 * its CSRF token.
	 */
	@SuppressWarnings("unchecked")
	Map<String, Object> settings() throws Exception {
		HttpResponse<String> settings = get("/kafka-resilience/settings");
		assertThat(settings.statusCode()).isEqualTo(200);
		Map<String, Object> json = JSON.readValue(settings.body(), Map.class);
		this.csrf = (Map<String, String>) json.get("csrf");
		return json;
	}

	HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return get(path, null);
	}

	HttpResponse<String> get(String path, String authorization) throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.base + path))
			.header("Accept", "application/json");
		if (authorization != null) {
			request.header("Authorization", authorization);
		}
		return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * A POST with the CSRF token of the console's settings (read first), as the page
	 * sends it.
	 */
	HttpResponse<String> post(String path, String body) throws Exception {
		if (this.csrf == null) {
			settings();
		}
		return post(path, body, this.csrf);
	}

	/** A POST with the given CSRF header and token, or none. */
	HttpResponse<String> post(String path, String body, Map<String, String> csrf)
			throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.base + path))
			.header("Content-Type", "application/json")
			.header("Accept", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		if (csrf != null) {
			request.header(csrf.get("header"), csrf.get("token"));
		}
		return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * The newest dead letter of the test application's ladder on {@code topic}, in full,
	 * as the endpoint shows it.
	 */
	@SuppressWarnings("unchecked")
	Map<String, Object> firstDeadLetter(String topic) throws Exception {
		String ladder = "?listener=it-" + topic + "&topic=" + topic;
		HttpResponse<String> list = get("/actuator/kafkaresilience/dead-letters" + ladder);
		assertThat(list.statusCode()).isEqualTo(200);
		Map<String, Object> row = ((List<Map<String, Object>>) json(list).get("deadLetters")).get(0);
		HttpResponse<String> letter = get("/actuator/kafkaresilience/dead-letter" + ladder + "&partition="
				+ row.get("partition") + "&offset=" + row.get("offset"));
		assertThat(letter.statusCode()).isEqualTo(200);
		return json(letter);
	}

	@SuppressWarnings("unchecked")
	static Map<String, Object> json(HttpResponse<String> response) {
		return JSON.readValue(response.body(), Map.class);
	}

}
