package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.internal.support.StartupFailures;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Misconfigured topics and listeners fail the application's startup, with a message that
 * names the topic, what is wrong and the exact property or command that fixes it.
 */
@UsesSharedBroker
class StartupChecksTests {

	@Test
	void aDeadLetterOrLockTopicWithAnotherPartitionCountFailsStartupNamingBothCountsAndHowToMatchThem() {
		String topic = SharedBroker.newTopic(3);
		SharedBroker.createTopic(Names.dlq(topic), 2, Map.of());
		assertThatThrownBy(() -> TestApplication.start(topic).close()).rootCause()
			.hasMessageContaining("Topic '" + Names.dlq(topic) + "' has 2 partitions but '" + topic + "' has 3")
			.hasMessageContaining(
					"kafka-topics --bootstrap-server <broker> --alter --topic " + Names.dlq(topic) + " --partitions 3");
		assertThat(report(() -> TestApplication.start(topic).close())).satisfies((report) -> {
			assertThat(report.getDescription())
				.startsWith("Topic '" + Names.dlq(topic) + "' has 2 partitions but '" + topic + "' has 3")
				.doesNotContain("kafka-topics");
			assertThat(report.getAction()).contains(
					"kafka-topics --bootstrap-server <broker> --alter --topic " + Names.dlq(topic) + " --partitions 3");
		});

		String other = SharedBroker.newTopic(3);
		SharedBroker.createTopic(Names.locks(other), 4, Map.of("cleanup.policy", "compact"));
		assertThatThrownBy(() -> TestApplication.start(other).close()).rootCause()
			.hasMessageContaining("Topic '" + Names.locks(other) + "' has 4 partitions but '" + other + "' has 3")
			.hasMessageContaining("A topic cannot lose partitions")
			.hasMessageContaining("let the library create it again with 3 partitions");
	}

	@Test
	void aGroupThatCannotBePartOfATopicNameFailsStartupNamingTheGroupAndTheTemplatesAndCreatesNothing() {
		String topic = SharedBroker.newTopic(3);
		assertThatThrownBy(
				() -> TestApplication.start(topic, "spring.kafka.consumer.group-id=billing service/eu").close())
			.rootCause()
			.hasMessageContaining(
					"Consumer group 'billing service/eu' (topic '" + topic + "') cannot be part of a topic name")
			.hasMessageContaining("kafka.resilience.topics.retry-template, dlq-template and lock-template");
		assertThat(
				report(() -> TestApplication.start(topic, "spring.kafka.consumer.group-id=billing service/eu").close()))
			.satisfies((report) -> {
				assertThat(report.getDescription()).contains("cannot be part of a topic name");
				assertThat(report.getAction()).startsWith("Give the listener a group id made of those characters");
			});
		assertThat(topics()).noneMatch((name) -> name.contains(topic + ".retry.") || name.endsWith(topic + ".dlq"));

		// with the group replaced by a fixed name of its own in the templates, the same
		// group starts
		Script script = Script.forTopic(topic);
		try (ConfigurableApplicationContext context = TestApplication.start(topic,
				"spring.kafka.consumer.group-id=billing service/eu",
				"kafka.resilience.topics.retry-template=billing-eu.{topic}.retry.{delay}",
				"kafka.resilience.topics.dlq-template=billing-eu.{topic}.dlq",
				"kafka.resilience.topics.lock-template=billing-eu.{topic}.locks")) {
			SharedBroker.send(topic, "k", "V");
			await().atMost(Duration.ofSeconds(60)).until(() -> script.succeeded("V"));
			assertThat(topics()).contains("billing-eu." + topic + ".dlq", "billing-eu." + topic + ".locks");
		}
	}

	@Test
	void aLockTopicThatAlsoDeletesFailsStartupWithTheCommandThatMakesItCompactOnly() {
		String topic = SharedBroker.newTopic(3);
		SharedBroker.createTopic(Names.locks(topic), 3, Map.of("cleanup.policy", "compact,delete"));
		assertThatThrownBy(() -> TestApplication.start(topic).close()).rootCause()
			.hasMessageContaining("Lock topic '" + Names.locks(topic)
					+ "' has cleanup.policy=compact,delete but must be " + "compacted only (cleanup.policy=compact)")
			.hasMessageContaining(
					"kafka-configs --bootstrap-server <broker> --alter --entity-type topics --entity-name "
							+ Names.locks(topic) + " --add-config cleanup.policy=compact");
	}

	@Test
	void anExistingRetryTopicKeepingRecordsForLessThanTwiceItsOwnDelayFailsStartup() {
		String topic = SharedBroker.newTopic(3);
		// twice 1s is 2s: enough for the first stage; not for the second, whose delay is
		// 2s
		SharedBroker.createTopic(Names.retry(topic, "1s"), 3, Map.of("retention.ms", "3000"));
		SharedBroker.createTopic(Names.retry(topic, "2s"), 3, Map.of("retention.ms", "3000"));
		assertThatThrownBy(() -> TestApplication.start(topic, "kafka.resilience.retry.delays=1s,2s").close())
			.rootCause()
			.hasMessageContaining(
					"Retry topic '" + Names.retry(topic, "2s") + "' has retention.ms=3000 (3s) but its delay is 2s")
			.hasMessageContaining(
					"kafka-configs --bootstrap-server <broker> --alter --entity-type topics --entity-name "
							+ Names.retry(topic, "2s") + " --add-config retention.ms=604800000");
		assertThat(topics()).as("nothing is created before every check passed")
			.doesNotContain(Names.dlq(topic), Names.locks(topic));
	}

	@Test
	void aCompactedRetryTopicFailsStartupAsItWouldDropTheEarlierRecordsOfAKey() {
		String topic = SharedBroker.newTopic(3);
		SharedBroker.createTopic(Names.retry(topic, "1s"), 3, Map.of("cleanup.policy", "compact"));
		assertThatThrownBy(() -> TestApplication.start(topic, "kafka.resilience.retry.delays=1s").close()).rootCause()
			.hasMessageContaining("Retry topic '" + Names.retry(topic, "1s")
					+ "' has cleanup.policy=compact but must have " + "cleanup.policy=delete")
			.hasMessageContaining("--entity-name " + Names.retry(topic, "1s") + " --add-config cleanup.policy=delete");
	}

	@Test
	void aRetryRetentionSettingShorterThanTwiceADelayFailsStartupOnlyWhenItWouldCreateThatRetryTopic() {
		String topic = SharedBroker.newTopic(3);
		assertThatThrownBy(() -> TestApplication
			.start(topic, "kafka.resilience.retry.delays=1s,2s", "kafka.resilience.topics.retry-retention=3s")
			.close()).rootCause()
			.hasMessageContaining("kafka.resilience.topics.retry-retention (3s)")
			.hasMessageContaining("retry topic '" + Names.retry(topic, "2s") + "' has a delay of 2s")
			.hasMessageContaining("Set kafka.resilience.topics.retry-retention to 4s or more");

		// the setting only applies to retry topics the library creates: existing ones
		// keep theirs
		String existing = SharedBroker.newTopic(3);
		SharedBroker.createTopic(Names.retry(existing, "1s"), 3, Map.of("retention.ms", "86400000"));
		SharedBroker.createTopic(Names.retry(existing, "2s"), 3, Map.of("retention.ms", "86400000"));
		try (ConfigurableApplicationContext context = TestApplication.start(existing,
				"kafka.resilience.retry.delays=1s,2s", "kafka.resilience.topics.retry-retention=3s")) {
			assertThat(context.isRunning()).isTrue();
		}
	}

	@Test
	void twoListenersConsumingTheSameTopicInOneGroupFailStartup() {
		String topic = SharedBroker.newTopic(1);
		assertThatThrownBy(
				() -> TestApplication.start(TwoListeners.class, topic, "test.first=" + topic, "test.second=" + topic)
					.close())
			.rootCause()
			.hasMessageContaining("Topic '" + topic + "' is consumed twice in consumer group 'g-" + topic + "'")
			.hasMessageContaining("Consume it with one of them");
	}

	@Test
	void templatesThatGiveTwoLaddersOneDeadLetterTopicFailStartupBeforeAnyTopicIsCreated() {
		String first = SharedBroker.newTopic(1);
		String second = SharedBroker.newTopic(1);
		assertThatThrownBy(() -> TestApplication
			.start(TwoListeners.class, first, "test.first=" + first, "test.second=" + second,
					"kafka.resilience.topics.dlq-template=all-dead-letters")
			.close())
			.rootCause()
			.hasMessageContaining("Topic 'all-dead-letters' is both the dead-letter topic of '" + first
					+ "' (listener 'first-" + first + "', group 'g-" + first + "') and the dead-letter topic of '"
					+ second + "' (listener 'second-" + first + "', group 'g-" + first + "')")
			.hasMessageContaining("kafka.resilience.topics.retry-template, dlq-template and lock-template must each "
					+ "contain {group}, {topic}");
		assertThat(topics()).doesNotContain("all-dead-letters", Names.locks(first), Names.locks(second));
	}

	@Test
	void aListenerConsumingAnotherLaddersRetryTopicFailsStartup() {
		String first = SharedBroker.newTopic(1);
		assertThatThrownBy(() -> TestApplication
			.start(TwoListeners.class, first, "test.first=" + first, "test.second=" + Names.retry(first, "1s"),
					"kafka.resilience.retry.delays=1s")
			.close())
			.rootCause()
			.hasMessageContaining("Topic '" + Names.retry(first, "1s") + "' is both the retry topic (stage 1) of '"
					+ first + "' (listener 'first-" + first + "', group 'g-" + first
					+ "') and the main topic of listener 'second-" + first + "'")
			.hasMessageContaining("Do not consume another ladder's retry, dead-letter or lock topic");
	}

	@Test
	void aMissingMainTopicFailsStartupNamingItAndNothingIsCreated() {
		String topic = "missing-" + UUID.randomUUID().toString().substring(0, 8);
		assertThatThrownBy(() -> TestApplication.start(topic, "kafka.resilience.topics.create=false").close())
			.rootCause()
			.hasMessageContaining("Topic '" + topic + "' does not exist")
			.hasMessageContaining("kafka-topics --bootstrap-server <broker> --create --topic " + topic)
			.hasMessageContaining("As kafka.resilience.topics.create is false, also create [" + Names.retry(topic, "1s")
					+ ", " + Names.retry(topic, "2s") + ", " + Names.dlq(topic) + ", " + Names.locks(topic) + "]");
		assertThatThrownBy(() -> TestApplication.start(topic, "kafka.resilience.topics.create=true").close())
			.rootCause()
			.hasMessageContaining("Topic '" + topic + "' does not exist. The library never creates a main topic")
			.hasMessageContaining("kafka-topics --bootstrap-server <broker> --create --topic " + topic);
		assertThat(topics()).as("neither the main topic nor its ladder was created")
			.doesNotContain(topic, Names.retry(topic, "1s"), Names.dlq(topic), Names.locks(topic));
	}

	@Test
	void missingLadderTopicsFailStartupWhenTheLibraryMayNotCreateThem() {
		String topic = SharedBroker.newTopic(3);
		SharedBroker.createTopic(Names.retry(topic, "1s"), 3, Map.of());
		assertThatThrownBy(() -> TestApplication
			.start(topic, "kafka.resilience.retry.delays=1s", "kafka.resilience.topics.create=false")
			.close())
			.rootCause()
			.hasMessageContaining("Topics [" + Names.dlq(topic) + ", " + Names.locks(topic) + "] of '" + topic
					+ "' do not exist and " + "kafka.resilience.topics.create is false.")
			.hasMessageContaining("Create them with 3 partitions")
			.hasMessageContaining("--config cleanup.policy=compact for the lock topic '" + Names.locks(topic) + "'");
		assertThat(report(() -> TestApplication
			.start(topic, "kafka.resilience.retry.delays=1s", "kafka.resilience.topics.create=false")
			.close())).satisfies((report) -> {
				assertThat(report.getDescription()).isEqualTo("Topics [" + Names.dlq(topic) + ", " + Names.locks(topic)
						+ "] of '" + topic + "' do not exist and kafka.resilience.topics.create is false.");
				assertThat(report.getAction()).startsWith("Create them with 3 partitions")
					.endsWith("or set kafka.resilience.topics.create=true");
			});
	}

	/** What Spring Boot reports when the application fails to start. */
	static FailureAnalysis report(ThrowingCallable start) {
		FailureAnalysis analysis = StartupFailures.analysis(catchThrowable(start));
		assertThat(analysis).as("Boot's failure analysis").isNotNull();
		return analysis;
	}

	private static Set<String> topics() {
		try (Admin admin = Admin
			.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers()))) {
			return admin.listTopics().names().get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TwoListeners.Listeners.class)
	static class TwoListeners {

		static class Listeners {

			@OrderedRetryListener(id = "first-${test.topic}", topics = "${test.first}")
			void first(ConsumerRecord<String, String> record) {
			}

			@OrderedRetryListener(id = "second-${test.topic}", topics = "${test.second}")
			void second(ConsumerRecord<String, String> record) {
			}

		}

	}

}
