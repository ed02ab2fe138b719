package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.kafkaresilience.dlq.DeadLetter;
import io.github.kafkaresilience.dlq.DlqHandler;
import io.github.kafkaresilience.dlq.IncidentLogDlqHandler;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dead-letter handler on a real broker: the default writes one incident line per dead
 * letter with every field and without the payload; an application's handler replaces it.
 */
@UsesSharedBroker
class DlqHandlerTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final String PAYLOAD = "card=4111111111111111";

	@Test
	void theDefaultHandlerWritesOneIncidentLineWithEveryFieldAndNoPayload() {
		String topic = SharedBroker.newTopic(3);
		Script.forTopic(topic).failTransiently(PAYLOAD, Integer.MAX_VALUE);
		ListAppender<ILoggingEvent> incidents = new ListAppender<>();
		try (ConfigurableApplicationContext context = TestApplication.start(topic, "kafka.resilience.retry.delays=1s",
				"kafka.resilience.retry.max-attempts=2")) {
			Logger logger = (Logger) LoggerFactory.getLogger(IncidentLogDlqHandler.LOGGER);
			incidents.start();
			logger.addAppender(incidents);
			RecordHeaders headers = new RecordHeaders();
			headers.add("trace-id", "t-1".getBytes(StandardCharsets.UTF_8));
			SharedBroker.send(new ProducerRecord<>(topic, null, "customer-7".getBytes(StandardCharsets.UTF_8),
					PAYLOAD.getBytes(StandardCharsets.UTF_8), headers));
			await().atMost(WAIT).until(() -> incidentsOf(incidents, topic).size() == 1);
			ConsumerRecord<byte[], byte[]> dead = SharedBroker.readAll(Names.dlq(topic)).get(0);
			String line = incidentsOf(incidents, topic).get(0);

			assertThat(line).doesNotContain("\n");
			Map<String, Object> fields = JsonMapper.builder().build().readValue(line, Map.class);
			// the payload is nowhere but in the handler's own exception message, which
			// quotes it
			Map<String, Object> withoutMessage = new HashMap<>(fields);
			withoutMessage.remove("error.message");
			assertThat(withoutMessage.toString()).doesNotContain("4111");
			assertThat(fields).containsOnlyKeys("event", "dlq.topic", "dlq.partition", "dlq.offset", "dlq.timestamp",
					"key", "original.topic", "original.partition", "original.offset", "previous.topic", "retry.count",
					"error.class", "error.exception", "error.message", "error.timestamp", "dlq.reason", "payload.size");
			assertThat(fields).containsEntry("event", "dead-letter")
				.containsEntry("dlq.topic", Names.dlq(topic))
				.containsEntry("dlq.partition", dead.partition())
				.containsEntry("dlq.offset", (int) dead.offset())
				.containsEntry("dlq.timestamp", Instant.ofEpochMilli(dead.timestamp()).toString())
				.containsEntry("key", "customer-7")
				.containsEntry("original.topic", topic)
				.containsEntry("original.partition", dead.partition())
				.containsEntry("original.offset", 0)
				.containsEntry("previous.topic", Names.retry(topic, "1s"))
				.containsEntry("retry.count", 2)
				.containsEntry("error.class", "transient")
				.containsEntry("error.exception", IllegalStateException.class.getName())
				.containsEntry("error.message", "attempt 2 of " + PAYLOAD + " fails")
				.containsEntry("dlq.reason", "exhausted")
				.containsEntry("payload.size", PAYLOAD.length());
			assertThat((String) fields.get("error.timestamp")).matches("\\d{4}-\\d{2}-\\d{2}T.*Z");
		}
		finally {
			((Logger) LoggerFactory.getLogger(IncidentLogDlqHandler.LOGGER)).detachAppender(incidents);
		}
	}

	@Test
	void anApplicationsHandlerReplacesTheDefaultAndSeesEveryDeadLetterOfItsGroupOnce() {
		String topic = SharedBroker.newTopic(3);
		Script.forTopic(topic).failPermanently("P-1").failPermanently("P-2").failPermanently("P-3");
		try (ConfigurableApplicationContext context = TestApplication.start(HandlerApplication.class, topic,
				"kafka.resilience.retry.delays=1s")) {
			List<DeadLetter> seen = context.getBean(HandlerApplication.class).seen;
			assertThat(context.getBean(DlqHandler.class)).isNotInstanceOf(IncidentLogDlqHandler.class);
			SharedBroker.send(topic, "a", "P-1");
			SharedBroker.send(topic, "b", "P-2");
			SharedBroker.send(topic, "a", "P-3");
			await().atMost(WAIT).until(() -> seen.size() >= 3);
			assertThat(seen).extracting((letter) -> new String(letter.value(), StandardCharsets.UTF_8))
				.containsExactlyInAnyOrder("P-1", "P-2", "P-3");
			assertThat(seen).allSatisfy((letter) -> {
				assertThat(letter.topic()).isEqualTo(Names.dlq(topic));
				assertThat(letter.dlqReason()).isEqualTo("permanent");
				assertThat(letter.originalTopic()).isEqualTo(topic);
				assertThat(letter.retryCount()).isEqualTo(1);
			});
			// dead letters another group wrote to this group's dead-letter topic are not
			// this
			// group's to report: skipped and counted, never handed to the handler
			SharedBroker.send(new ProducerRecord<>(Names.dlq(topic), 0, "x".getBytes(StandardCharsets.UTF_8),
					"THEIRS".getBytes(StandardCharsets.UTF_8),
					new RecordHeaders().add("owner.group", "shipping".getBytes(StandardCharsets.UTF_8))));
			SharedBroker.send(new ProducerRecord<>(Names.dlq(topic), 1, "y".getBytes(StandardCharsets.UTF_8),
					"NOBODYS".getBytes(StandardCharsets.UTF_8), new RecordHeaders()));
			// a fourth dead letter after those shows nothing was handled twice meanwhile
			Script.forTopic(topic).failPermanently("P-4");
			SharedBroker.send(topic, "c", "P-4");
			await().atMost(WAIT).until(() -> seen.size() >= 4);
			LockRegistry registry = context.getBean(LockCoordinator.class).registryOf(Names.locks(topic));
			await().atMost(WAIT).until(() -> registry.ownership().foreignRecords(Names.dlq(topic)) == 2);
			assertThat(seen).hasSize(4)
				.extracting((letter) -> new String(letter.value(), StandardCharsets.UTF_8))
				.doesNotContain("THEIRS", "NOBODYS");
		}
	}

	private static List<String> incidentsOf(ListAppender<ILoggingEvent> appender, String topic) {
		return appender.list.stream()
			.map(ILoggingEvent::getFormattedMessage)
			.filter((line) -> line.contains("\"dlq.topic\":\"" + Names.dlq(topic) + "\""))
			.toList();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TestApplication.ScriptedListener.class)
	static class HandlerApplication {

		final List<DeadLetter> seen = new CopyOnWriteArrayList<>();

		@Bean
		DlqHandler collectingDlqHandler() {
			return this.seen::add;
		}

	}

}
