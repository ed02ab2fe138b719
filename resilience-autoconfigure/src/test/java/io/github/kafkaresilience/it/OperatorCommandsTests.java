package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.kafkaresilience.internal.actuate.HeldKeys;
import io.github.kafkaresilience.internal.actuate.KafkaResilienceEndpoint;
import io.github.kafkaresilience.internal.actuate.OperatorActions;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

import static io.github.kafkaresilience.it.Operators.OPERATOR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Operators' commands on held keys (docs/PROTOCOL.md, rule 11) on a real broker, through
 * the {@code kafkaresilience} endpoint's actions: retry now runs a key's head before its
 * due time, dead-letter now sends it to the DLQ with {@code dlq.reason=operator} and lets
 * the key's next record run, actions are refused unless enabled, and a command accepted
 * by one instance is acted on, once, by the instance that holds the record.
 */
@UsesSharedBroker
class OperatorCommandsTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	/** A delay no test waits out: whatever runs before it was run by a command. */
	private static final String HOUR = "kafka.resilience.retry.delays=1h";

	private static final String EXPOSED = "management.endpoints.web.exposure.include=kafkaresilience";

	@Test
	void retryNowRunsAHeldKeyBeforeItsDueTimeAndItsNextRecordFollows() {
		String topic = SharedBroker.newTopic(2);
		Script script = Script.forTopic(topic).failTransiently("A1", 1);
		try (ConfigurableApplicationContext context = start(topic, HOUR, EXPOSED,
				"kafka.resilience.console.actions-enabled=true")) {
			SharedBroker.send(topic, "a", "A1");
			SharedBroker.send(topic, "a", "A2");
			SharedBroker.send(topic, "b", "B1");
			KafkaResilienceEndpoint endpoint = context.getBean(KafkaResilienceEndpoint.class);
			HeldKeys.HeldKey held = awaitHead(endpoint, topic, "a", 2);
			assertThat(held.stage()).isEqualTo(1);
			assertThat(held.attempts()).isEqualTo(1);
			assertThat(held.errorClass()).as("read from the record the head waits in")
				.isEqualTo("java.lang.IllegalStateException");
			assertThat(held.errorMessage()).isEqualTo("attempt 1 of A1 fails");
			assertThat(held.due()).isAfter(held.since().plus(Duration.ofMinutes(59)));
			assertThat(script.succeeded("B1")).as("another key is not held").isTrue();
			assertThat(script.attempts("A2")).as("the key's next record waits behind its head").isZero();

			WebEndpointResponse<Object> accepted = endpoint.act("retry-now", "it-" + topic, topic, held.lockId(),
					OPERATOR);
			assertThat(accepted.getStatus()).isEqualTo(200);
			assertThat((OperatorActions.ActionReport) accepted.getBody()).satisfies((report) -> {
				assertThat(report.by()).isEqualTo("ops");
				assertThat(report.key()).isEqualTo("a");
			});

			await().atMost(WAIT).until(() -> script.succeeded("A2"));
			assertThat(script.firstSuccesses("a")).containsExactly("A1", "A2");
			assertThat(script.journal()).filteredOn((attempt) -> attempt.value().equals("A1"))
				.extracting(Script.Attempt::retryCount, Script.Attempt::succeeded)
				.containsExactly(Tuple.tuple(0, false), Tuple.tuple(1, true));
			LockCoordinator locks = context.getBean(LockCoordinator.class);
			await().atMost(WAIT).untilAsserted(() -> {
				assertThat(locks.registryOf(Names.locks(topic)).size()).as("live locks").isZero();
				assertThat(locks.registryOf(Names.locks(topic)).commands()).as("the command is ended").isEmpty();
			});
			assertThat(actions(context, "retry-now", "accepted")).isEqualTo(1);
		}
	}

	@Test
	void deadLetterNowSendsTheHeadToTheDlqWithReasonOperatorAndTheKeysNextRecordRuns() {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic).failTransiently("D1", Integer.MAX_VALUE);
		try (ConfigurableApplicationContext context = start(topic, HOUR, EXPOSED,
				"kafka.resilience.console.actions-enabled=true")) {
			SharedBroker.send(topic, "d", "D1");
			SharedBroker.send(topic, "d", "D2");
			KafkaResilienceEndpoint endpoint = context.getBean(KafkaResilienceEndpoint.class);
			HeldKeys.HeldKey held = awaitHead(endpoint, topic, "d", 2);

			assertThat(endpoint.act("dead-letter-now", "it-" + topic, topic, held.lockId(), OPERATOR).getStatus())
				.isEqualTo(200);

			await().atMost(WAIT).until(() -> script.succeeded("D2"));
			List<ConsumerRecord<byte[], byte[]>> dlq = SharedBroker.readAll(Names.dlq(topic));
			assertThat(dlq).singleElement().satisfies((letter) -> {
				assertThat(new String(letter.value())).isEqualTo("D1");
				assertThat(ProtocolHeaders.text(letter.headers(), ProtocolHeaders.DLQ_REASON)).isEqualTo("operator");
				assertThat(ProtocolHeaders.text(letter.headers(), ProtocolHeaders.RETRY_COUNT)).isEqualTo("1");
				assertThat(ProtocolHeaders.text(letter.headers(), ProtocolHeaders.ERROR_MESSAGE))
					.isEqualTo("attempt 1 of D1 fails");
			});
			assertThat(script.attempts("D1")).as("not run again").isEqualTo(1);
			await().atMost(WAIT).untilAsserted(() -> assertThat(held(endpoint, topic, null)).isEmpty());
			assertThat(meters(context).find("kafka.resilience.dlq.records").tag("reason", "operator").counter().count())
				.isEqualTo(1);
		}
	}

	@Test
	void actionsAreRefusedUnlessEnabledAndALockThatIsNotAHeadIsRefused() {
		String topic = SharedBroker.newTopic(1);
		Script.forTopic(topic).failTransiently("R1", Integer.MAX_VALUE);
		try (ConfigurableApplicationContext context = start(topic, HOUR, EXPOSED)) {
			SharedBroker.send(topic, "r", "R1");
			KafkaResilienceEndpoint endpoint = context.getBean(KafkaResilienceEndpoint.class);
			HeldKeys.HeldKey held = awaitHead(endpoint, topic, "r", 1);
			WebEndpointResponse<Object> refused = endpoint.act("retry-now", "it-" + topic, topic, held.lockId(),
					OPERATOR);
			assertThat(refused.getStatus()).isEqualTo(403);
			assertThat(refused.getBody().toString()).contains("kafka.resilience.console.actions-enabled=true");
			assertThat(endpoint.act("pause", "it-" + topic, null, null, OPERATOR).getStatus()).isEqualTo(403);
			assertThat(actions(context, "retry-now", "refused")).isEqualTo(1);
			assertThat(context.getBean(LockCoordinator.class).registryOf(Names.locks(topic)).commands()).isEmpty();
		}
		try (ConfigurableApplicationContext context = start(topic, HOUR, EXPOSED,
				"kafka.resilience.console.actions-enabled=true")) {
			SharedBroker.send(topic, "r", "R2");
			KafkaResilienceEndpoint endpoint = context.getBean(KafkaResilienceEndpoint.class);
			HeldKeys.HeldKey head = awaitHead(endpoint, topic, "r", 2);
			LockRegistry registry = context.getBean(LockCoordinator.class).registryOf(Names.locks(topic));
			await().atMost(WAIT)
				.until(() -> registry.snapshot()
					.stream()
					.anyMatch((lock) -> !lock.id().equals(head.lockId()) && !lock.isMoving()));
			String follower = registry.snapshot()
				.stream()
				.filter((lock) -> !lock.id().equals(head.lockId()) && !lock.isMoving())
				.findFirst()
				.orElseThrow()
				.id();
			WebEndpointResponse<Object> notHead = endpoint.act("dead-letter-now", "it-" + topic, topic, follower,
					OPERATOR);
			assertThat(notHead.getStatus()).isEqualTo(409);
			WebEndpointResponse<Object> withoutRole = endpoint.act("dead-letter-now", "it-" + topic, topic,
					head.lockId(), SecurityContext.NONE);
			assertThat(withoutRole.getStatus()).isEqualTo(403);
			assertThat(withoutRole.getBody().toString()).contains("needs role KAFKA_RESILIENCE_OPERATOR");
			assertThat(notHead.getBody().toString()).contains("is not the head of its key");
			assertThat(endpoint.act("retry-now", "it-" + topic, topic, "no-such-lock", OPERATOR).getStatus())
				.isEqualTo(404);
			assertThat(endpoint.act("skip", "it-" + topic, topic, head.lockId(), OPERATOR).getStatus()).isEqualTo(404);
		}
	}

	/**
	 * Two instances of one group: the command is accepted by the instance that does not
	 * hold the key's partition; the one that does runs the record, once, before its due
	 * time.
	 */
	@Test
	void aCommandAcceptedByOneInstanceIsActedOnOnceByTheInstanceThatHoldsTheRecord() {
		String topic = SharedBroker.newTopic(2);
		Script script = Script.forTopic(topic);
		try (ConfigurableApplicationContext first = start(topic, HOUR, EXPOSED,
				"kafka.resilience.console.actions-enabled=true", "kafka.resilience.instance-id=first-" + topic);
				ConfigurableApplicationContext second = start(topic, HOUR, EXPOSED,
						"kafka.resilience.console.actions-enabled=true",
						"kafka.resilience.instance-id=second-" + topic)) {
			await().atMost(WAIT).until(() -> assignment(first).size() == 2 && assignment(second).size() == 2);
			int partitionOfSecond = assignment(second).stream()
				.filter((tp) -> tp.topic().equals(topic))
				.findFirst()
				.orElseThrow()
				.partition();
			String key = SharedBroker.keyIn(partitionOfSecond, 2, "k");
			script.failTransiently("K1", 1);
			SharedBroker.send(topic, key, "K1");
			KafkaResilienceEndpoint accepting = first.getBean(KafkaResilienceEndpoint.class);
			HeldKeys.HeldKey held = awaitHead(accepting, topic, key, 1);

			assertThat(accepting.act("retry-now", "it-" + topic, topic, held.lockId(), OPERATOR).getStatus())
				.isEqualTo(200);

			await().atMost(WAIT).until(() -> script.succeeded("K1"));
			LockCoordinator locks = second.getBean(LockCoordinator.class);
			await().atMost(WAIT).untilAsserted(() -> {
				assertThat(locks.registryOf(Names.locks(topic)).size()).isZero();
				assertThat(locks.registryOf(Names.locks(topic)).commands()).isEmpty();
			});
			// a little longer: a second run would come now if the command were acted on
			// twice
			await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(() -> script.attempts("K1") == 2);
			assertThat(actions(first, "retry-now", "accepted")).isEqualTo(1);
		}
	}

	/**
	 * The test application with a meter registry, the meter binders of the library bound
	 * to it as Boot's metrics support binds them.
	 */
	private static ConfigurableApplicationContext start(String topic, String... properties) {
		ConfigurableApplicationContext context = TestApplication.start(MeteredApplication.class, topic, properties);
		MeterRegistry registry = context.getBean(MeterRegistry.class);
		context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(registry));
		return context;
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TestApplication.ScriptedListener.class)
	static class MeteredApplication {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	private static HeldKeys.HeldKey awaitHead(KafkaResilienceEndpoint endpoint, String topic, String key, int records) {
		await().atMost(WAIT)
			.until(() -> held(endpoint, topic, key).stream()
				.anyMatch((row) -> row.key().equals(key) && row.records() == records && row.actionable()));
		return held(endpoint, topic, key).stream().filter((row) -> row.key().equals(key)).findFirst().orElseThrow();
	}

	@SuppressWarnings("unchecked")
	private static List<HeldKeys.HeldKey> held(KafkaResilienceEndpoint endpoint, String topic, String key) {
		WebEndpointResponse<Object> response = endpoint.view("held", "it-" + topic, topic, key, null, null, null, null,
				null, null, null, null, null);
		assertThat(response.getStatus()).isEqualTo(200);
		List<HeldKeys.HeldPage> pages = (List<HeldKeys.HeldPage>) response.getBody();
		return pages.isEmpty() ? List.of() : pages.get(0).held();
	}

	private static Set<TopicPartition> assignment(ConfigurableApplicationContext context) {
		ListenerRegistry listeners = context.getBean(ListenerRegistry.class);
		RetryContainer container = listeners.container(listeners.endpoints().get(0).id());
		return (container != null) ? container.assignment() : Set.of();
	}

	private static double actions(ConfigurableApplicationContext context, String action, String outcome) {
		var counter = meters(context).find("kafka.resilience.operator.actions")
			.tags("action", action, "outcome", outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static MeterRegistry meters(ConfigurableApplicationContext context) {
		return context.getBean(MeterRegistry.class);
	}

}
