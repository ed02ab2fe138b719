package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.dlq.ReplayReport;
import io.github.kafkaresilience.dlq.ReplayRequest;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockCodec;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * A ladder belongs to one consumer group (docs/PROTOCOL.md, "Topics"): two groups of one
 * application on one topic retry in ladders of their own; records of another group on a
 * ladder's topics are never acted on but counted; a ladder another group wrote to refuses
 * to start; an application upgraded from the names of earlier releases refuses until its
 * group drained them; a replay reaches the group whose dead letter it is, behind its
 * key's records still in the ladder.
 */
@UsesSharedBroker
class ConsumerGroupsTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	@Test
	void twoGroupsOfOneApplicationOnOneTopicEachRetryInALadderOfTheirOwn() {
		String topic = SharedBroker.newTopic(3);
		Script billing = Script.forTopic(BILLING + topic).failTransiently("k-1", 1);
		Script audit = Script.forTopic(AUDIT + topic);
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		try (ConfigurableApplicationContext context = TestApplication.start(TwoGroupsApplication.class, topic,
				"kafka.resilience.retry.delays=1s")) {
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(meters));
			SharedBroker.sendAll(topic,
					List.of(new String[] { "k", "k-1" }, new String[] { "k", "k-2" }, new String[] { "m", "m-1" }));

			await().atMost(WAIT).untilAsserted(() -> {
				assertThat(billing.firstSuccesses("k")).containsExactly("k-1", "k-2");
				assertThat(audit.firstSuccesses("k")).containsExactly("k-1", "k-2");
				assertThat(audit.succeeded("m-1") && billing.succeeded("m-1")).isTrue();
			});
			await().atMost(WAIT)
				.until(() -> liveLocks(context, BILLING + topic) == 0 && liveLocks(context, AUDIT + topic) == 0);

			// billing retried k-1, with k-2 behind it, in its own ladder; audit never
			// left the main topic
			assertThat(billing.journal()).filteredOn((attempt) -> attempt.key().equals("k"))
				.extracting(Script.Attempt::topic)
				.containsExactly(topic, Names.retry(BILLING + topic, topic, "1s"),
						Names.retry(BILLING + topic, topic, "1s"));
			assertThat(audit.journal()).extracting(Script.Attempt::topic).containsOnly(topic);
			assertThat(audit.journal()).hasSize(3);
			assertThat(SharedBroker.readAll(Names.retry(BILLING + topic, topic, "1s"))).hasSize(2)
				.allSatisfy((record) -> assertThat(owner(record)).isEqualTo(BILLING + topic));
			assertThat(SharedBroker.readAll(Names.locks(BILLING + topic, topic))).isNotEmpty()
				.allSatisfy((record) -> assertThat(owner(record)).isEqualTo(BILLING + topic));
			for (String ofAudit : List.of(Names.retry(AUDIT + topic, topic, "1s"), Names.dlq(AUDIT + topic, topic),
					Names.locks(AUDIT + topic, topic))) {
				assertThat(SharedBroker.readAll(ofAudit)).as(ofAudit).isEmpty();
			}
			// each ladder has its meters, told apart by group
			assertThat(meters.find("kafka.resilience.locks.active").tag("topic", topic).gauges()).hasSize(2);
			assertThat(
					meters.find("kafka.resilience.attempts").tag("group", BILLING + topic).tag("stage", "1").counter())
				.isNotNull();
			assertThat(meters.find("kafka.resilience.attempts").tag("group", AUDIT + topic).tag("stage", "1").counter())
				.isNull();
			assertThat(meters.find("kafka.resilience.consumer.lag")
				.tag("group", BILLING + topic)
				.tag("topic", Names.retry(BILLING + topic, topic, "1s"))
				.gauges()).hasSize(3);
			assertThat(meters.find("kafka.resilience.consumer.lag")
				.tag("group", AUDIT + topic)
				.tag("topic", Names.retry(BILLING + topic, topic, "1s"))
				.gauges()).isEmpty();
		}
	}

	@Test
	void recordsOfAnotherGroupOrWithoutAnOwnerOnALaddersTopicsAreNeverRunAppliedOrDeadLetteredButCounted() {
		String topic = SharedBroker.newTopic(3);
		String stage1 = Names.retry(topic, "1s");
		String lockTopic = Names.locks(topic);
		String key = SharedBroker.keyIn(0, 3, "k-");
		Script script = Script.forTopic(topic);
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		try (ConfigurableApplicationContext context = TestApplication.start(topic)) {
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(meters));
			LockRegistry registry = registry(context, topic);
			await().atMost(WAIT).until(() -> registry.hasCaughtUp());

			// another group's live lock of the key, and one without an owner
			Lock theirs = new Lock(UUID.randomUUID().toString(), bytes(key), 0, 0, 1, 0L, null, 1, null, Instant.now());
			Lock nobodys = new Lock(UUID.randomUUID().toString(), bytes(key), 0, 1, 1, 1L, null, 1, null,
					Instant.now());
			SharedBroker
				.send(new ProducerRecord<>(lockTopic, 0, LockCodec.encodeId(theirs.id()), LockCodec.encode(theirs),
						LockCodec.headers(theirs.key(), "shipping-1", new Ownership("shipping", true, List.of()))));
			RecordHeaders unowned = new RecordHeaders();
			unowned.add(LockCodec.BUSINESS_KEY, bytes(key).get());
			SharedBroker.send(new ProducerRecord<>(lockTopic, 0, LockCodec.encodeId(nobodys.id()),
					LockCodec.encode(nobodys), unowned));
			// their records in our first retry topic, with protocol headers that would
			// run them
			SharedBroker
				.send(stageRecord(stage1, key, "THEIRS", "shipping", "retry.count", "1", "lock.id", theirs.id()));
			SharedBroker.send(stageRecord(stage1, key, "NOBODYS", null, "retry.count", "0", "lock.id", nobodys.id()));
			SharedBroker.send(stageRecord(stage1, null, "THEIRS-KEYLESS", "shipping", "retry.count", "1"));

			await().atMost(WAIT).untilAsserted(() -> {
				assertThat(foreign(meters, topic, stage1)).isEqualTo(3);
				assertThat(foreign(meters, topic, lockTopic)).isEqualTo(2);
			});
			// neither lock holds the key back: its next record runs on the main topic at
			// once
			SharedBroker.send(topic, key, "K1");
			await().atMost(WAIT).until(() -> script.succeeded("K1"));
			assertThat(script.journal()).singleElement()
				.satisfies((attempt) -> assertThat(attempt.topic()).isEqualTo(topic));
			assertThat(registry.find(theirs.id())).isNull();
			assertThat(registry.find(nobodys.id())).isNull();
			assertThat(registry.size()).isZero();
			for (String value : List.of("THEIRS", "NOBODYS", "THEIRS-KEYLESS")) {
				assertThat(script.attempts(value)).as(value).isZero();
			}
			await().atMost(WAIT).until(() -> SharedBroker.committed("g-" + topic, stage1, 0) == 3);
			assertThat(SharedBroker.readAll(Names.dlq(topic))).as("never dead-lettered").isEmpty();
			assertThat(SharedBroker.readAll(Names.retry(topic, "2s"))).as("never moved on").isEmpty();
		}
	}

	@Test
	void aLadderAnotherGroupWroteToRefusesToStartNamingBothGroupsTheTopicsAndTheTemplates() {
		String topic = SharedBroker.newTopic(3);
		String stage1 = Names.retry(topic, "1s");
		String lockTopic = Names.locks(topic);
		SharedBroker.createTopic(stage1, 3, Map.of());
		SharedBroker.createTopic(lockTopic, 3, Map.of("cleanup.policy", "compact"));
		Lock theirs = new Lock(UUID.randomUUID().toString(), bytes("k"), 1, 0, 1, 0L, null, 1, null, Instant.now());
		SharedBroker.send(new ProducerRecord<>(lockTopic, 1, LockCodec.encodeId(theirs.id()), LockCodec.encode(theirs),
				LockCodec.headers(theirs.key(), "shipping-1", new Ownership("shipping", true, List.of()))));
		SharedBroker.send(stageRecord(stage1, "k", "THEIRS", "shipping", "retry.count", "1", "lock.id", theirs.id()));
		Script script = Script.forTopic(topic);

		assertThatException().isThrownBy(() -> TestApplication.start(topic).close())
			.withStackTraceContaining("The ladder of group 'g-" + topic + "' on '" + topic
					+ "' holds records written by group 'shipping'")
			.withStackTraceContaining(lockTopic + " (live locks): 1 of group 'shipping'")
			.withStackTraceContaining(stage1 + " (latest records): 1 of group 'shipping'")
			.withStackTraceContaining(
					"kafka.resilience.topics.retry-template, dlq-template and lock-template must contain " + "{group}")
			.withStackTraceContaining("kafka.resilience.topics.check-owner-at-startup=false");
		assertThat(StartupChecksTests.report(() -> TestApplication.start(topic).close())).satisfies((report) -> {
			assertThat(report.getDescription()).contains("holds records written by group 'shipping'")
				.doesNotContain("check-owner-at-startup");
			assertThat(report.getAction()).startsWith("Give every group topics of its own")
				.contains("kafka.resilience.topics.check-owner-at-startup=false");
		});

		// once told that the other group only left them behind, it starts; they are never
		// run
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		try (ConfigurableApplicationContext context = TestApplication.start(topic,
				"kafka.resilience.topics.check-owner-at-startup=false")) {
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(meters));
			SharedBroker.send(topic, "k", "K1");
			await().atMost(WAIT).until(() -> script.succeeded("K1"));
			await().atMost(WAIT).untilAsserted(() -> {
				assertThat(foreign(meters, topic, stage1)).isOne();
				assertThat(foreign(meters, topic, lockTopic)).isOne();
			});
			assertThat(script.attempts("THEIRS")).isZero();
			assertThat(liveLocks(context, "g-" + topic)).isZero();
		}
	}

	@Test
	void anApplicationUpgradedFromUnscopedNamesIsRefusedUntilItsGroupDrainedThemThenMovesToItsOwnLadder()
			throws Exception {
		String topic = SharedBroker.newTopic(3);
		String earlierStage = topic + ".retry.4s";
		String[] earlierNames = { "kafka.resilience.retry.delays=4s", "kafka.resilience.retry.max-attempts=50",
				"kafka.resilience.topics.retry-template={topic}.retry.{delay}",
				"kafka.resilience.topics.dlq-template={topic}.dlq",
				"kafka.resilience.topics.lock-template={topic}.locks" };
		Script script = Script.forTopic(topic).failTransiently("u-1", Integer.MAX_VALUE);

		// the application ran with the names of an earlier release: u-1 failed, u-2
		// followed it
		try (ConfigurableApplicationContext earlier = TestApplication.start(topic, earlierNames)) {
			SharedBroker.sendAll(topic, List.of(new String[] { "u", "u-1" }, new String[] { "u", "u-2" }));
			await().atMost(WAIT).until(() -> SharedBroker.readAll(earlierStage).size() == 2);
		}

		// the upgrade with the new default names refuses, and creates nothing
		assertThatException().isThrownBy(() -> TestApplication.start(topic, "kafka.resilience.retry.delays=4s").close())
			.withStackTraceContaining(
					"Consumer group 'g-" + topic + "' read '" + topic + "' before, and 2 record(s) wait")
			.withStackTraceContaining(earlierStage + " (2)")
			.withStackTraceContaining("kafka.resilience.topics.retry-template={topic}.retry.{delay}")
			.withStackTraceContaining("replay --from " + topic + ".dlq --to " + topic + " --group g-" + topic);
		assertThat(StartupChecksTests
			.report(() -> TestApplication.start(topic, "kafka.resilience.retry.delays=4s").close()))
			.satisfies((report) -> {
				assertThat(report.getDescription()).contains(earlierStage + " (2)").doesNotContain("replay --from");
				assertThat(report.getAction()).startsWith("Drain them under the earlier names first")
					.contains("replay --from " + topic + ".dlq --to " + topic + " --group g-" + topic);
			});
		assertThat(topics()).doesNotContain(Names.retry(topic, "4s"), Names.dlq(topic), Names.locks(topic));

		// drained under the earlier names...
		script.succeedFromNowOn("u-1");
		try (ConfigurableApplicationContext draining = TestApplication.start(topic, earlierNames)) {
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(script.firstSuccesses("u")).containsExactly("u-1", "u-2"));
			await().atMost(WAIT).until(() -> liveLocks(draining, "g-" + topic) == 0);
			await().atMost(WAIT).until(() -> totalCommitted("g-" + topic, earlierStage) == 2);
		}
		// ...the group moves to its own ladder, and leaves the earlier topics
		try (ConfigurableApplicationContext upgraded = TestApplication.start(topic,
				"kafka.resilience.retry.delays=4s")) {
			assertThat(committedTopics("g-" + topic)).doesNotContain(earlierStage).contains(Names.retry(topic, "4s"));
			SharedBroker.send(topic, "u", "u-3");
			await().atMost(WAIT).until(() -> script.succeeded("u-3"));
		}
		// another group still on an earlier release writes to the earlier topics: it is
		// none of this group's business
		SharedBroker.send(earlierStage, "v", "THEIRS");
		try (ConfigurableApplicationContext again = TestApplication.start(topic, "kafka.resilience.retry.delays=4s")) {
			SharedBroker.send(topic, "u", "u-4");
			await().atMost(WAIT).until(() -> script.succeeded("u-4"));
		}
		assertThat(script.firstSuccesses("u")).containsExactly("u-1", "u-2", "u-3", "u-4");
		assertThat(script.attempts("THEIRS")).isZero();
	}

	@Test
	void aReplayReachesOnlyTheGroupWhoseDeadLetterItIsBehindItsKeysRecordsStillInTheLadder() {
		String topic = SharedBroker.newTopic(3);
		Script billing = Script.forTopic(BILLING + topic)
			.failPermanently("k-1")
			.failTransiently("k-2", Integer.MAX_VALUE);
		Script audit = Script.forTopic(AUDIT + topic);
		try (ConfigurableApplicationContext context = TestApplication.start(TwoGroupsApplication.class, topic,
				"kafka.resilience.retry.delays=2s", "kafka.resilience.retry.max-attempts=100")) {
			SharedBroker.sendAll(topic,
					List.of(new String[] { "k", "k-1" }, new String[] { "k", "k-2" }, new String[] { "k", "k-3" }));
			// billing: k-1 is a dead letter, k-2 keeps failing in the ladder with k-3
			// behind it
			await().atMost(WAIT)
				.until(() -> SharedBroker.readAll(Names.dlq(BILLING + topic, topic)).size() == 1
						&& liveLocks(context, BILLING + topic) == 2);
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(audit.firstSuccesses("k")).containsExactly("k-1", "k-2", "k-3"));

			billing.failPermanently("nothing");
			ReplayReport report = context.getBean(DlqReplayer.class)
				.replay(ReplayRequest.of(Names.dlq(BILLING + topic, topic), topic).withGroup(BILLING + topic));
			assertThat(report.published()).isOne();
			assertThat(report.target()).isEqualTo(Names.retry(BILLING + topic, topic, "2s"));
			// the replay waits behind k-2 and k-3, which are still in the ladder
			await().atMost(WAIT).until(() -> liveLocks(context, BILLING + topic) == 3);
			assertThat(replays(billing)).isZero();
			billing.succeedFromNowOn("k-2");
			billing.succeedFromNowOn("k-1");

			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(billing.firstSuccesses("k")).containsExactly("k-2", "k-3", "k-1"));
			await().atMost(WAIT).until(() -> liveLocks(context, BILLING + topic) == 0);
			assertThat(replays(billing)).isOne();
			// audit read every record once, from the main topic, and never the replay
			assertThat(audit.journal()).extracting(Script.Attempt::value).containsExactly("k-1", "k-2", "k-3");
			assertThat(audit.journal()).extracting(Script.Attempt::topic).containsOnly(topic);
			assertThat(SharedBroker.readAll(topic)).as("the replay never reached the main topic").hasSize(3);
			assertThat(SharedBroker.readAll(Names.dlq(BILLING + topic, topic))).hasSize(1);
		}
	}

	private static final String BILLING = "billing-";

	private static final String AUDIT = "audit-";

	private static long replays(Script script) {
		return script.journal().stream().filter((attempt) -> attempt.replayed()).count();
	}

	private static String owner(ConsumerRecord<byte[], byte[]> record) {
		return Ownership.ownerOf(record.headers());
	}

	private static double foreign(SimpleMeterRegistry meters, String topic, String ladderTopic) {
		FunctionCounter counter = meters.find("kafka.resilience.foreign.records")
			.tag("group", "g-" + topic)
			.tag("topic", ladderTopic)
			.functionCounter();
		assertThat(counter).as("kafka.resilience.foreign.records of " + ladderTopic).isNotNull();
		return counter.count();
	}

	private static int liveLocks(ConfigurableApplicationContext context, String group) {
		return context.getBean(LockCoordinator.class)
			.registries()
			.stream()
			.filter((registry) -> registry.ownership().group().equals(group))
			.mapToInt((registry) -> registry.size())
			.sum();
	}

	private static LockRegistry registry(ConfigurableApplicationContext context, String topic) {
		return context.getBean(LockCoordinator.class).registryOf(Names.locks(topic));
	}

	/**
	 * A record on partition 0 of a retry topic, written by someone else than this group's
	 * instances.
	 */
	private static ProducerRecord<byte[], byte[]> stageRecord(String stage, String key, String value, String owner,
			String... headerPairs) {
		Headers headers = new RecordHeaders();
		for (int i = 0; i < headerPairs.length; i += 2) {
			headers.add(headerPairs[i], headerPairs[i + 1].getBytes(StandardCharsets.UTF_8));
		}
		if (owner != null) {
			headers.add(Ownership.HEADER, owner.getBytes(StandardCharsets.UTF_8));
		}
		return new ProducerRecord<>(stage, 0, (key != null) ? key.getBytes(StandardCharsets.UTF_8) : null,
				value.getBytes(StandardCharsets.UTF_8), headers);
	}

	private static long totalCommitted(String group, String topic) {
		long total = 0;
		for (int p = 0; p < 3; p++) {
			total += Math.max(0, SharedBroker.committed(group, topic, p));
		}
		return total;
	}

	private static Set<String> committedTopics(String group) throws Exception {
		try (Admin admin = Admin
			.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers()))) {
			Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
				.partitionsToOffsetAndMetadata()
				.get(30, TimeUnit.SECONDS);
			return offsets.keySet().stream().map(TopicPartition::topic).collect(Collectors.toSet());
		}
	}

	private static Set<String> topics() throws Exception {
		try (Admin admin = Admin
			.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers()))) {
			return admin.listTopics().names().get(30, TimeUnit.SECONDS);
		}
	}

	private static Bytes bytes(String key) {
		return Bytes.wrap(key.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Two services in one application on the same topic: billing and audit, each a group
	 * of its own ({@code billing-<topic>}, {@code audit-<topic>}), each with its own
	 * script.
	 */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ BillingListener.class, AuditListener.class })
	static class TwoGroupsApplication {

	}

	static class BillingListener {

		@OrderedRetryListener(id = "billing-${test.topic}", topics = "${test.topic}", groupId = "billing-${test.topic}")
		void handle(ConsumerRecord<String, String> record) {
			Script.forTopic(BILLING + mainTopic(record)).handle(record);
		}

	}

	static class AuditListener {

		@OrderedRetryListener(id = "audit-${test.topic}", topics = "${test.topic}", groupId = "audit-${test.topic}")
		void handle(ConsumerRecord<String, String> record) {
			Script.forTopic(AUDIT + mainTopic(record)).handle(record);
		}

	}

	private static String mainTopic(ConsumerRecord<String, String> record) {
		String original = ProtocolHeaders.text(record.headers(), ProtocolHeaders.ORIGINAL_TOPIC);
		return (original != null) ? original : record.topic();
	}

}
