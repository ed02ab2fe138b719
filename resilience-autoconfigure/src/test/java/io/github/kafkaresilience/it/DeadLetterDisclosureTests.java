package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What the endpoint shows of a dead letter over HTTP, behind Spring Security: headers
 * that carry credentials are masked for every reader, and its value and the application's
 * headers are shown only to a reader with the operator role
 * ({@code show-values: when-authorized}), or to no one ({@code never}).
 */
@UsesSharedBroker
class DeadLetterDisclosureTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final String[] CONSOLE = { "management.endpoints.web.exposure.include=kafkaresilience",
			"kafka.resilience.console.enabled=true" };

	@Test
	void aReaderWithoutTheRoleSeesNeitherTheValueNorTheHeadersAndCredentialsAreMaskedForAll() throws Exception {
		String topic = SharedBroker.newTopic(1);
		try (ConfigurableApplicationContext context = TestApplication.startWeb(SecuredApplication.class, topic,
				CONSOLE)) {
			deadLetterWithCredentials(topic);

			Map<String, Object> asViewer = ConsoleHttp.logIn(context, "viewer").firstDeadLetter(topic);
			assertThat(headers(asViewer)).containsEntry("Authorization", "******")
				.containsEntry("x-api-token", "******")
				.containsEntry("x-request-id", "******")
				.containsEntry("dlq.reason", "permanent");
			assertThat(value(asViewer)).containsEntry("format", "hidden")
				.containsEntry("content", null)
				.containsEntry("bytes", 7);
			assertThat(asViewer.toString()).doesNotContain("Bearer", "t0k3n", "req-1");

			Map<String, Object> asOperator = ConsoleHttp.logIn(context, "ops").firstDeadLetter(topic);
			assertThat(headers(asOperator)).containsEntry("Authorization", "******")
				.containsEntry("x-api-token", "******")
				.containsEntry("x-request-id", "req-1");
			assertThat(value(asOperator)).containsEntry("format", "text").containsEntry("content", "SECRET1");
			assertThat(asOperator.toString()).doesNotContain("Bearer", "t0k3n");
		}
	}

	@Test
	void underNeverNoReaderSeesTheValue() throws Exception {
		String topic = SharedBroker.newTopic(1);
		try (ConfigurableApplicationContext context = TestApplication.startWeb(SecuredApplication.class, topic,
				"management.endpoints.web.exposure.include=kafkaresilience", "kafka.resilience.console.enabled=true",
				"kafka.resilience.console.show-values=never")) {
			deadLetterWithCredentials(topic);
			Map<String, Object> asOperator = ConsoleHttp.logIn(context, "ops").firstDeadLetter(topic);
			assertThat(value(asOperator)).containsEntry("format", "hidden").containsEntry("content", null);
			assertThat(headers(asOperator)).containsEntry("x-request-id", "******")
				.containsEntry("Authorization", "******");
		}
	}

	/**
	 * A record with credentials in its headers, which fails permanently: a dead letter
	 * that keeps them.
	 */
	static void deadLetterWithCredentials(String topic) {
		Script.forTopic(topic).failPermanently("SECRET1");
		ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, "k".getBytes(StandardCharsets.UTF_8),
				"SECRET1".getBytes(StandardCharsets.UTF_8));
		record.headers().add("Authorization", "Bearer abc.def".getBytes(StandardCharsets.UTF_8));
		record.headers().add("x-api-token", "t0k3n".getBytes(StandardCharsets.UTF_8));
		record.headers().add("x-request-id", "req-1".getBytes(StandardCharsets.UTF_8));
		SharedBroker.send(record);
		await().atMost(WAIT).until(() -> SharedBroker.readAll(Names.dlq(topic)).size() == 1);
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> headers(Map<String, Object> letter) {
		Map<String, Object> byName = new LinkedHashMap<>();
		((List<Map<String, Object>>) letter.get("headers"))
			.forEach((header) -> byName.put((String) header.get("name"), header.get("value")));
		return byName;
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> value(Map<String, Object> letter) {
		return (Map<String, Object>) letter.get("value");
	}

}
