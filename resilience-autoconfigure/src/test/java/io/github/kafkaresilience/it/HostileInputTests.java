package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockCodec;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.metrics.LockMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static io.github.kafkaresilience.it.OrderedRetryLadderTests.headers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Records nobody should have written, on a real broker: protocol headers forged on the
 * main topic, garbage on the lock topic and garbage on a retry topic. None of them stops
 * a partition, moves or releases a lock it does not own, or changes the order of a key.
 */
@UsesSharedBroker
class HostileInputTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	/** The protocol headers the library writes on retry records and dead letters. */
	private static final List<String> PROTOCOL_HEADERS = List.of("retry.count", "error.class", "error.message",
			"error.exception", "error.timestamp", "previous.topic", "original.topic", "original.partition",
			"original.offset", "lock.id", "dlq.reason");

	@Test
	void forgedProtocolHeadersOnTheMainTopicAreIgnoredAndCannotTouchTheLockTheyName() {
		String topic = SharedBroker.newTopic(3);
		String stage1 = Names.retry(topic, "1s");
		String victim = SharedBroker.keyIn(0, 3, "victim-");
		String forged = SharedBroker.keyIn(0, 3, "forged-");
		String permanent = SharedBroker.keyIn(0, 3, "permanent-");
		String poison = SharedBroker.keyIn(0, 3, "poison-");
		Script script = Script.forTopic(topic)
			.failTransiently("V1", Integer.MAX_VALUE)
			.failTransiently("F1", 1)
			.failTransiently("N1", 1)
			.failPermanently("FP");
		try (ConfigurableApplicationContext context = TestApplication.start(HostileApplication.class, topic,
				"kafka.resilience.retry.max-attempts=100",
				"spring.kafka.consumer.value-deserializer=" + StrictStringDeserializer.class.getName())) {
			LockRegistry registry = registry(context, topic);
			SharedBroker.send(topic, victim, "V1"); // offset 0: keeps failing until the
													// test lets it pass
			SharedBroker.send(topic, victim, "V2"); // offset 1: its follower
			await().atMost(WAIT).until(() -> confirmedLocks(registry, victim) == 2);
			String victimLock = registry.locksOf(bytes(victim)).get(0).id();

			// forged headers, and lock.id names the victim's head lock
			SharedBroker.send(forgedRecord(topic, forged, "F1", victimLock)); // offset 2
			SharedBroker.send(topic, forged, "F2"); // offset 3
			SharedBroker.send(forgedRecord(topic, permanent, "FP", victimLock)); // offset
																					// 4
			SharedBroker.send(forgedRecord(topic, poison, "POISON-F", victimLock)); // offset
																					// 5
			SharedBroker.send(forgedRecord(topic, null, "N1", victimLock)); // offset 6,
																			// no key

			await().atMost(WAIT).untilAsserted(() -> {
				assertThat(script.firstSuccesses(forged)).containsExactly("F1", "F2");
				assertThat(script.succeeded("N1")).isTrue();
			});
			assertThat(script.attempts("F1")).as("a fresh record: its failure on the main topic was its first")
				.isEqualTo(2);
			assertThat(script.attempts("N1")).isEqualTo(2);

			Map<String, ConsumerRecord<byte[], byte[]>> retried = byValue(SharedBroker.readAll(stage1));
			Map<String, String> f1 = headers(retried.get("F1"));
			assertThat(f1).containsEntry("retry.count", "1")
				.containsEntry("error.class", "transient")
				.containsEntry("error.message", "attempt 1 of F1 fails")
				.containsEntry("error.exception", IllegalStateException.class.getName())
				.containsEntry("previous.topic", topic)
				.containsEntry("original.topic", topic)
				.containsEntry("original.partition", "0")
				.containsEntry("original.offset", "2")
				.containsEntry("trace-id", "forged-1")
				.doesNotContainKey("dlq.reason");
			assertThat(f1.get("error.timestamp")).isNotEqualTo("2001-01-01T00:00:00.000000000Z");
			assertThat(f1.get("lock.id")).as("its own lock, not the one it named").isNotEqualTo(victimLock);
			assertThat(UUID.fromString(f1.get("lock.id"))).isNotNull();
			assertNoProtocolHeaderTwice(retried.get("F1"));
			assertThat(headers(retried.get("N1"))).containsEntry("retry.count", "1")
				.containsEntry("previous.topic", topic)
				.containsEntry("original.topic", topic)
				.containsEntry("original.offset", "6")
				.containsEntry("error.message", "attempt 1 of N1 fails")
				.doesNotContainKeys("lock.id", "dlq.reason");

			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(byValue(SharedBroker.readAll(Names.dlq(topic)))).containsOnlyKeys("FP",
						"POISON-F"));
			Map<String, ConsumerRecord<byte[], byte[]>> dead = byValue(SharedBroker.readAll(Names.dlq(topic)));
			assertThat(headers(dead.get("FP"))).containsEntry("dlq.reason", "permanent")
				.containsEntry("retry.count", "1")
				.containsEntry("error.class", "permanent")
				.containsEntry("error.message", "cannot handle FP")
				.containsEntry("previous.topic", topic)
				.containsEntry("original.topic", topic)
				.containsEntry("original.offset", "4")
				.containsEntry("trace-id", "forged-1")
				.doesNotContainKey("lock.id");
			assertThat(headers(dead.get("POISON-F"))).containsEntry("dlq.reason", "poison")
				.containsEntry("retry.count", "0")
				.containsEntry("previous.topic", topic)
				.containsEntry("original.offset", "5")
				.containsEntry("error.exception", "org.apache.kafka.common.errors.SerializationException")
				.doesNotContainKey("lock.id");
			dead.values().forEach(HostileInputTests::assertNoProtocolHeaderTwice);

			assertTheVictimsLockSurvivedAndItsKeyDrainsInOrder(context, topic, registry, victimLock, victim, script,
					"the lock the forged records named");
			await().atMost(WAIT).until(() -> SharedBroker.committed("g-" + topic, topic, 0) == 7);
			assertThat(SharedBroker.readAll(Names.dlq(topic))).hasSize(2);
		}
	}

	@Test
	void garbageOnTheLockTopicIsSkippedAndCountedWhileLocksWrittenAfterItStillHoldTheirKey() {
		String topic = SharedBroker.newTopic(3);
		String lockTopic = Names.locks(topic);
		SharedBroker.createTopic(lockTopic, 3, Map.of("cleanup.policy", "compact"));
		String key = SharedBroker.keyIn(0, 3, "k-");
		String other = SharedBroker.keyIn(0, 3, "o-");
		Headers lockHeaders = LockCodec.headers(bytes(key), "other-instance", Names.owner(topic));
		String validLock = new String(
				LockCodec.encode(new Lock("sample", bytes(key), 0, 0, 1, 0L, null, 1, null, Instant.now())),
				StandardCharsets.UTF_8);
		RecordHeaders withoutBusinessKey = new RecordHeaders();
		withoutBusinessKey.add(LockCodec.COORDINATOR_ID, utf8("other-instance"));
		Names.owner(topic).stamp(withoutBusinessKey); // garbage of its own group: records
														// of others are not read at all

		// already in the lock topic when the instance starts
		sendLockRecord(lockTopic, "g-1", utf8("{not json"), lockHeaders);
		sendLockRecord(lockTopic, "g-2", utf8(validLock.replace("\"v\":1", "\"v\":2")), lockHeaders);
		sendLockRecord(lockTopic, "g-3", utf8(validLock), withoutBusinessKey);
		sendLockRecord(lockTopic, "", null, lockHeaders); // an empty key: a compacted
															// topic refuses none at all
		sendLockRecord(lockTopic, "g-5", new byte[0], lockHeaders);

		Script script = Script.forTopic(topic);
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		try (ConfigurableApplicationContext context = TestApplication.start(HostileApplication.class, topic)) {
			context.getBean(LockMetrics.class).bindTo(meters);
			LockRegistry registry = registry(context, topic);
			await().atMost(WAIT).until(() -> registry.hasCaughtUp());
			assertThat(skipped(meters, topic)).isEqualTo(5);
			SharedBroker.send(topic, key, "K0"); // offset 0
			await().atMost(WAIT).until(() -> script.succeeded("K0"));

			// written while it runs, followed by a lock of another instance on the same
			// partition
			sendLockRecord(lockTopic, "", utf8(validLock), lockHeaders);
			sendLockRecord(lockTopic, "g-7", utf8("[1,2,3]"), lockHeaders);
			sendLockRecord(lockTopic, "g-8",
					utf8(validLock.replace("\"at\":0", "\"at\":0,\"from\":{\"stage\":0,\"offset\":0}")), lockHeaders);
			sendLockRecord(lockTopic, "g-9", utf8(validLock.replace("\"stage\":1,", "")), lockHeaders);
			sendLockRecord(lockTopic, "never-written", null, lockHeaders); // as
																			// compaction
																			// leaves
																			// releases
																			// behind
			Lock foreign = new Lock(UUID.randomUUID().toString(), bytes(key), 0, 0, 1, 0L, null, 1, null,
					Instant.now());
			sendLockRecord(lockTopic, foreign.id(), LockCodec.encode(foreign), lockHeaders);

			await().atMost(WAIT).until(() -> registry.find(foreign.id()) != null);
			SharedBroker.send(topic, key, "K1"); // offset 1: a follower of the foreign
													// lock
			SharedBroker.send(topic, other, "O1"); // offset 2
			await().atMost(WAIT).until(() -> script.succeeded("O1") && confirmedLocks(registry, key) == 2);
			assertThat(script.attempts("K1")).as("held back by a lock read after the garbage").isZero();
			assertThat(skipped(meters, topic)).as("a tombstone of an unknown lock is not garbage").isEqualTo(9);

			sendLockRecord(lockTopic, foreign.id(), null, lockHeaders); // the other
																		// instance
																		// releases it
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(script.firstSuccesses(key)).containsExactly("K0", "K1"));
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
			await().atMost(WAIT).until(() -> SharedBroker.committed("g-" + topic, topic, 0) == 3);
			assertThat(skipped(meters, topic)).isEqualTo(9);
			assertThat(SharedBroker.readAll(Names.dlq(topic))).isEmpty();
		}
	}

	@Test
	void garbageOnARetryTopicIsDeadLetteredOrSkippedWithoutBlockingItsPartitionOrTouchingAnotherKeysLock() {
		String topic = SharedBroker.newTopic(3);
		String stage1 = Names.retry(topic, "1s");
		String victim = SharedBroker.keyIn(0, 3, "victim-");
		Script script = Script.forTopic(topic).failTransiently("V1", Integer.MAX_VALUE).failTransiently("R1", 1);
		try (ConfigurableApplicationContext context = TestApplication.start(HostileApplication.class, topic,
				"kafka.resilience.retry.max-attempts=100")) {
			LockRegistry registry = registry(context, topic);
			SharedBroker.send(topic, victim, "V1"); // keeps failing until the test lets
													// it pass
			SharedBroker.send(topic, victim, "V2");
			await().atMost(WAIT).until(() -> confirmedLocks(registry, victim) == 2);
			String victimLock = registry.locksOf(bytes(victim)).get(0).id();
			String unknownLock = UUID.randomUUID().toString();

			// unreadable protocol headers: dead letters (docs/PROTOCOL.md, rule 2.1)
			sendToStage(stage1, "a-", "G-NO-LOCK", "retry.count", "1");
			sendToStage(stage1, "b-", "G-NO-COUNT", "lock.id", unknownLock);
			sendToStage(stage1, "c-", "G-TEXT-COUNT", "retry.count", "abc", "lock.id", unknownLock);
			sendToStage(stage1, "d-", "G-NEGATIVE-COUNT", "retry.count", "-3", "lock.id", unknownLock);
			sendToStage(stage1, "e-", "G-OTHER-KEY", "retry.count", "1", "lock.id", victimLock);
			sendToStage(stage1, null, "G-KEYLESS-LOCK", "retry.count", "0", "lock.id", unknownLock);
			// a lock that does not exist (released) or is carried elsewhere: stale
			// copies, skipped
			// (docs/PROTOCOL.md, rules 2.2 and 2.4)
			sendToStage(stage1, "f-", "G-RELEASED", "retry.count", "1", "lock.id", unknownLock);
			SharedBroker.send(stageRecord(stage1, victim, "G-COPY", "retry.count", "0", "lock.id", victimLock));

			String retried = SharedBroker.keyIn(0, 3, "r-");
			String plain = SharedBroker.keyIn(0, 3, "m-");
			SharedBroker.send(topic, retried, "R1"); // fails once: retried after the
														// garbage on the same stage
														// partition
			SharedBroker.send(topic, plain, "M1");

			List<String> malformed = List.of("G-NO-LOCK", "G-NO-COUNT", "G-TEXT-COUNT", "G-NEGATIVE-COUNT",
					"G-OTHER-KEY", "G-KEYLESS-LOCK");
			await().atMost(WAIT).untilAsserted(() -> {
				assertThat(script.firstSuccesses(retried)).containsExactly("R1");
				assertThat(script.succeeded("M1")).isTrue();
				assertThat(byValue(SharedBroker.readAll(Names.dlq(topic)))).containsOnlyKeys(malformed);
			});
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(SharedBroker.committed("g-" + topic, stage1, 0))
					.as("every record of the stage partition is done")
					.isEqualTo(
							SharedBroker.readAll(stage1).stream().filter((record) -> record.partition() == 0).count()));
			await().atMost(WAIT).until(() -> SharedBroker.committed("g-" + topic, topic, 0) == 4);
			assertThat(script.journal()
				.stream()
				.filter((attempt) -> attempt.value().equals("R1"))
				.map(Script.Attempt::topic)).containsExactly(topic, stage1);
			for (String value : List.of("G-NO-LOCK", "G-NO-COUNT", "G-TEXT-COUNT", "G-NEGATIVE-COUNT", "G-OTHER-KEY",
					"G-KEYLESS-LOCK", "G-RELEASED", "G-COPY")) {
				assertThat(script.attempts(value)).as("handler runs of " + value).isZero();
			}

			Map<String, ConsumerRecord<byte[], byte[]>> dead = byValue(SharedBroker.readAll(Names.dlq(topic)));
			assertThat(dead).as("stale copies are skipped, not dead-lettered").containsOnlyKeys(malformed);
			for (String value : malformed) {
				ConsumerRecord<byte[], byte[]> record = dead.get(value);
				assertThat(headers(record)).as(value)
					.containsEntry("dlq.reason", "poison")
					.containsEntry("error.class", "permanent")
					.containsEntry("error.exception", IllegalStateException.class.getName())
					.containsEntry("previous.topic", stage1)
					.doesNotContainKey("lock.id");
				assertThat(record.partition()).isZero();
				assertNoProtocolHeaderTwice(record);
			}
			assertThat(headers(dead.get("G-NO-LOCK"))).containsEntry("retry.count", "1");
			assertThat(headers(dead.get("G-NO-LOCK")).get("error.message")).contains("lock.id=null");
			assertThat(headers(dead.get("G-NO-COUNT")).get("error.message")).contains("retry.count=null");
			assertThat(headers(dead.get("G-TEXT-COUNT"))).containsEntry("retry.count", "0");
			assertThat(headers(dead.get("G-NEGATIVE-COUNT"))).containsEntry("retry.count", "0");
			assertThat(headers(dead.get("G-OTHER-KEY")).get("error.message")).contains("another key");
			assertThat(headers(dead.get("G-KEYLESS-LOCK")).get("error.message")).contains("lock.id=" + unknownLock);

			assertTheVictimsLockSurvivedAndItsKeyDrainsInOrder(context, topic, registry, victimLock, victim, script,
					"the lock the garbage named");
			assertThat(SharedBroker.readAll(Names.dlq(topic))).hasSize(malformed.size());
		}
	}

	@Test
	void aKeylessRetryRecordWithTheLargestRetryCountIsExhaustedWhereItFailsInsteadOfOverflowing() {
		String topic = SharedBroker.newTopic(3);
		String stage1 = Names.retry(topic, "1s");
		Script script = Script.forTopic(topic).failTransiently("N-MAX", Integer.MAX_VALUE);
		try (ConfigurableApplicationContext context = TestApplication.start(HostileApplication.class, topic)) {
			// a record without a key takes no lock, so nothing but its header says how
			// often it failed
			SharedBroker.send(stageRecord(stage1, null, "N-MAX", "retry.count", Integer.toString(Integer.MAX_VALUE)));
			SharedBroker.send(topic, "m", "M1");

			await().atMost(WAIT).untilAsserted(() -> assertThat(SharedBroker.readAll(Names.dlq(topic))).hasSize(1));
			ConsumerRecord<byte[], byte[]> dead = SharedBroker.readAll(Names.dlq(topic)).get(0);
			assertThat(headers(dead)).containsEntry("dlq.reason", "exhausted")
				.containsEntry("previous.topic", stage1)
				.containsEntry("error.class", "transient")
				.containsEntry("error.message", "attempt 1 of N-MAX fails");
			assertThat(Long.parseLong(headers(dead).get("retry.count"))).as("retry.count").isNotNegative();
			assertThat(script.attempts("N-MAX")).isEqualTo(1);
			assertThat(SharedBroker.readAll(Names.retry(topic, "2s"))).as("no further hop").isEmpty();
			await().atMost(WAIT).until(() -> script.succeeded("M1"));
		}
	}

	private static LockRegistry registry(ConfigurableApplicationContext context, String topic) {
		return context.getBean(LockCoordinator.class)
			.registries()
			.stream()
			.filter((registry) -> registry.mainTopic().equals(topic))
			.findFirst()
			.orElseThrow();
	}

	/**
	 * The locks of a key whose move is confirmed: the records carrying them sit in a
	 * stage.
	 */
	private static long confirmedLocks(LockRegistry registry, String key) {
		return registry.locksOf(bytes(key)).stream().filter((lock) -> !lock.isMoving()).count();
	}

	/**
	 * A main-topic record (partition 0) carrying a user header and every protocol header,
	 * forged: {@code retry.count=99} would exhaust its first failure, {@code dlq.reason}
	 * and {@code error.*} describe a failure that never happened, {@code original.*} name
	 * another place and {@code lock.id} names a lock of another key.
	 */
	private static ProducerRecord<byte[], byte[]> forgedRecord(String topic, String key, String value, String lockId) {
		RecordHeaders headers = new RecordHeaders();
		headers.add("trace-id", utf8("forged-1"));
		headers.add("retry.count", utf8("99"));
		headers.add("error.class", utf8("permanent"));
		headers.add("error.message", utf8("forged"));
		headers.add("error.exception", utf8("com.example.ForgedException"));
		headers.add("error.timestamp", utf8("2001-01-01T00:00:00.000000000Z"));
		headers.add("previous.topic", utf8(Names.retry(topic, "2s")));
		headers.add("original.topic", utf8("elsewhere"));
		headers.add("original.partition", utf8("2"));
		headers.add("original.offset", utf8("4242"));
		headers.add("lock.id", utf8(lockId));
		headers.add("dlq.reason", utf8("exhausted"));
		return new ProducerRecord<>(topic, 0, (key != null) ? utf8(key) : null, utf8(value), headers);
	}

	/**
	 * No protocol header is on a record twice: forged copies were dropped, not kept
	 * beside the library's.
	 */
	/**
	 * The victim's head lock is still live on its own key and its records have not run;
	 * once its head may succeed, the key runs V1 then V2 and no lock is left.
	 */
	private static void assertTheVictimsLockSurvivedAndItsKeyDrainsInOrder(ConfigurableApplicationContext context,
			String topic, LockRegistry registry, String victimLock, String victim, Script script, String what) {
		Lock stillHeld = registry.find(victimLock);
		assertThat(stillHeld).as(what).isNotNull();
		assertThat(stillHeld.key()).isEqualTo(bytes(victim));
		assertThat(registry.locksOf(bytes(victim))).hasSize(2);
		assertThat(script.firstSuccesses(victim)).isEmpty();

		script.failTransiently("V1", script.attempts("V1")); // its next attempt succeeds
		await().atMost(WAIT).untilAsserted(() -> assertThat(script.firstSuccesses(victim)).containsExactly("V1", "V2"));
		await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
	}

	private static void assertNoProtocolHeaderTwice(ConsumerRecord<byte[], byte[]> record) {
		for (String name : PROTOCOL_HEADERS) {
			assertThat(record.headers().headers(name))
				.as(name + " on " + new String(record.value(), StandardCharsets.UTF_8))
				.hasSizeLessThanOrEqualTo(1);
		}
	}

	/**
	 * Sends a record to partition 0 of a retry topic with a key from {@code keyPrefix}
	 * ({@code null}: no key).
	 */
	private static void sendToStage(String stageTopic, String keyPrefix, String value, String... headerPairs) {
		String key = (keyPrefix != null) ? SharedBroker.keyIn(0, 3, keyPrefix) : null;
		SharedBroker.send(stageRecord(stageTopic, key, value, headerPairs));
	}

	/**
	 * A record written to a retry topic by someone else than the library, but in the name
	 * of the ladder's group (its {@code owner.group}): garbage the group reads. A record
	 * of another group is never read at all.
	 */
	private static ProducerRecord<byte[], byte[]> stageRecord(String stageTopic, String key, String value,
			String... headerPairs) {
		RecordHeaders headers = new RecordHeaders();
		for (int i = 0; i < headerPairs.length; i += 2) {
			headers.add(headerPairs[i], utf8(headerPairs[i + 1]));
		}
		headers.add("owner.group", utf8(stageTopic.substring(0, stageTopic.indexOf('.'))));
		return new ProducerRecord<>(stageTopic, 0, (key != null) ? utf8(key) : null, utf8(value), headers);
	}

	private static void sendLockRecord(String lockTopic, String id, byte[] value, Headers headers) {
		SharedBroker.send(new ProducerRecord<>(lockTopic, 0, LockCodec.encodeId(id), value, headers));
	}

	private static double skipped(SimpleMeterRegistry meters, String topic) {
		FunctionCounter counter = meters.find("kafka.resilience.locks.skipped").tag("topic", topic).functionCounter();
		assertThat(counter).as("kafka.resilience.locks.skipped").isNotNull();
		return counter.count();
	}

	private static Map<String, ConsumerRecord<byte[], byte[]>> byValue(List<ConsumerRecord<byte[], byte[]>> records) {
		return records.stream()
			.collect(Collectors.toMap((record) -> new String(record.value(), StandardCharsets.UTF_8),
					(record) -> record));
	}

	private static Bytes bytes(String key) {
		return Bytes.wrap(utf8(key));
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(MainTopicScript.class)
	static class HostileApplication {

	}

	/**
	 * Runs the script of the listener's main topic for every record. Unlike
	 * {@link TestApplication.ScriptedListener} it does not pick the script by the
	 * {@code original.topic} header, which a forged main-topic record may carry.
	 */
	static class MainTopicScript {

		private final String topic;

		MainTopicScript(@Value("${test.topic}") String topic) {
			this.topic = topic;
		}

		@OrderedRetryListener(id = "it-${test.topic}", topics = "${test.topic}")
		void handle(ConsumerRecord<String, String> record) {
			Script.forTopic(this.topic).handle(record);
		}

	}

}
