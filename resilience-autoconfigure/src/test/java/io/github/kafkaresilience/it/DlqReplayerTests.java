package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.internal.dlq.TopicDlqReplayer;
import io.github.kafkaresilience.dlq.ReplayReport;
import io.github.kafkaresilience.dlq.ReplayRequest;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.support.ConsumerClients;
import io.github.kafkaresilience.internal.support.ProducerClients;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Utils;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.ProducerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Replays of dead letters on a real broker: which dead letters each filter selects, that
 * only the group's own dead letters go back, into stage 1 of its ladder and never to the
 * main topic, the headers and partition of a replayed record, dry runs, unknown topics,
 * and a replayed record running through the listener again.
 */
@UsesSharedBroker
class DlqReplayerTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final Instant REPLAYED_AT = Instant.parse("2030-01-02T03:04:05.123456789Z");

	private static final String KEY_A = SharedBroker.keyIn(0, 3, "a-");

	private static final String KEY_B = SharedBroker.keyIn(1, 3, "b-");

	private static final String KEY_C = SharedBroker.keyIn(2, 3, "c-");

	private static final String KEY_D = SharedBroker.keyIn(0, 3, "d-");

	private static final String KEY_E = SharedBroker.keyIn(1, 3, "e-");

	private static final String KEY_F = SharedBroker.keyIn(2, 3, "f-");

	private static final String STATE = IllegalStateException.class.getName();

	private static final String ARGUMENT = IllegalArgumentException.class.getName();

	/**
	 * The dead letters every test starts from, written to the partition of their key as
	 * the ladder writes them ({@code null} original topic: the replay's target). V7
	 * claims another original partition than its key's, V8 comes from another topic and
	 * V9 names a partition the target does not have: those show how the partition of a
	 * replayed record is chosen.
	 */
	private static final List<Letter> LETTERS = List.of(
			new Letter("V1", KEY_A, null, 0, 10, "transient", STATE, "exhausted", 0),
			new Letter("V2", KEY_A, null, 0, 11, "permanent", PermanentFailureException.class.getName(), "permanent",
					1),
			new Letter("V3", KEY_B, null, 1, 5, "transient", "java.net.SocketTimeoutException", "exhausted", 2),
			new Letter("V4", KEY_B, null, 1, 6, "permanent", ARGUMENT, "permanent", 3),
			new Letter("V5", KEY_C, null, 2, 10, "permanent", "org.apache.kafka.common.errors.SerializationException",
					"poison", 4),
			new Letter("V6", KEY_C, null, 2, 11, "transient", STATE, "exhausted", 5),
			new Letter("V7", KEY_D, null, 2, 99, "transient", "java.util.concurrent.TimeoutException", "exhausted", 6),
			new Letter("V8", KEY_E, "elsewhere", 2, 10, "permanent", ARGUMENT, "permanent", 7),
			new Letter("V9", KEY_F, null, 9, 12, "transient", STATE, "exhausted", 8));

	@Test
	void eachFilterReplaysExactlyTheDeadLettersItMatches() {
		DeadLetters letters = DeadLetters.write();
		Instant t0 = letters.t0;
		DlqReplayer replayer = replayer(1000);
		List<Case> cases = List
			.of(new Case("no filter", (r) -> r, 9, "V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8", "V9"),
					// since seeks each partition to its first dead letter at or after it:
					// fewer are read
					new Case("since", (r) -> r.withSince(t0.plus(3, ChronoUnit.MINUTES)), 6, "V4", "V5", "V6", "V7",
							"V8", "V9"),
					new Case("until", (r) -> r.withUntil(t0.plus(2, ChronoUnit.MINUTES)), 9, "V1", "V2"),
					new Case("since and until",
							(r) -> r.withSince(t0.plus(1, ChronoUnit.MINUTES))
								.withUntil(t0.plus(5, ChronoUnit.MINUTES)),
							8, "V2", "V3", "V4", "V5"),
					new Case("error class transient", (r) -> r.withErrorClass("transient"), 9, "V1", "V3", "V6", "V7",
							"V9"),
					new Case("error class permanent", (r) -> r.withErrorClass("permanent"), 9, "V2", "V4", "V5", "V8"),
					new Case("exception", (r) -> r.withException(STATE), 9, "V1", "V6", "V9"),
					new Case("reason poison", (r) -> r.withReason("poison"), 9, "V5"),
					new Case("reason permanent", (r) -> r.withReason("permanent"), 9, "V2", "V4", "V8"),
					new Case("key", (r) -> r.withKey(KEY_A), 9, "V1", "V2"),
					new Case("original partition", (r) -> r.withOriginalPartition(2), 9, "V5", "V6", "V7", "V8"),
					new Case("original offset", (r) -> r.withOriginalOffset(10L), 9, "V1", "V5", "V8"),
					new Case("original partition and offset", (r) -> r.withOriginalPartition(2).withOriginalOffset(10L),
							9, "V5", "V8"),
					new Case("combined",
							(r) -> r.withSince(t0.plus(1, ChronoUnit.MINUTES))
								.withUntil(t0.plus(8, ChronoUnit.MINUTES))
								.withErrorClass("permanent")
								.withReason("permanent"),
							8, "V2", "V4", "V8"),
					new Case("key and exception", (r) -> r.withKey(KEY_C).withException(STATE), 9, "V6"),
					new Case("no match", (r) -> r.withKey("nobody"), 9));
		try (TopicTail target = new TopicTail(SharedBroker.bootstrapServers(), letters.target, false)) {
			for (Case test : cases) {
				ReplayReport report = replayer.replay(test.filter.apply(ReplayRequest.of(letters.from, letters.to)));

				List<String> arrived = target.readNew().stream().map((record) -> text(record.value())).toList();
				assertThat(arrived).as(test.name).containsExactlyInAnyOrder(test.expected);
				assertThat(report.scanned()).as(test.name + ": scanned").isEqualTo(test.scanned);
				assertThat(report.matched()).as(test.name + ": matched").isEqualTo(test.expected.length);
				assertThat(report.published()).as(test.name + ": published").isEqualTo(test.expected.length);
				assertThat(report.target()).as(test.name + ": target").isEqualTo(letters.target);
			}
		}
		assertThat(SharedBroker.readAll(letters.to)).as("nothing is written to the main topic").isEmpty();
	}

	@Test
	void onlyTheGroupsOwnDeadLettersGoBackAndTheOthersAreCounted() {
		DeadLetters letters = DeadLetters.write();
		SharedBroker.send(new ProducerRecord<>(letters.from, 0, bytes(KEY_A), bytes("shipping's"),
				new RecordHeaders().add("owner.group", bytes("shipping"))));
		SharedBroker.send(new ProducerRecord<>(letters.from, 1, bytes(KEY_B), bytes("nobody's"), new RecordHeaders()));

		ReplayReport report = replayer(1000).replay(ReplayRequest.of(letters.from, letters.to));

		assertThat(report.scanned()).isEqualTo(LETTERS.size() + 2);
		assertThat(report.foreign()).isEqualTo(2);
		assertThat(report.matched()).isEqualTo(LETTERS.size());
		assertThat(SharedBroker.readAll(letters.target)).extracting((record) -> text(record.value()))
			.hasSize(LETTERS.size())
			.doesNotContain("shipping's", "nobody's");
	}

	@Test
	void deadLettersWithoutAnOwnerOnADeadLetterTopicOfAnEarlierReleaseGoBackIntoTheNamedGroupsLadder() {
		String to = SharedBroker.newTopic(1);
		String unscoped = to + ".dlq";
		SharedBroker.createTopic(unscoped, 1, Map.of());
		SharedBroker.createTopic(Names.retry(to, "1s"), 1, Map.of());
		SharedBroker.send(new ProducerRecord<>(unscoped, 0, bytes("k"), bytes("before groups"), new RecordHeaders()));
		SharedBroker.send(new ProducerRecord<>(unscoped, 0, bytes("k"), bytes("shipping's"),
				new RecordHeaders().add("owner.group", bytes("shipping"))));

		ReplayReport report = replayer(1000).replay(ReplayRequest.of(unscoped, to).withGroup(Names.group(to)));

		assertThat(report.foreign()).isOne();
		assertThat(report.published()).isOne();
		List<ConsumerRecord<byte[], byte[]>> entered = SharedBroker.readAll(Names.retry(to, "1s"));
		assertThat(entered).extracting((record) -> text(record.value())).containsExactly("before groups");
		assertThat(OrderedRetryLadderTests.headers(entered.get(0))).containsEntry("owner.group", Names.group(to));
	}

	@Test
	void aReplayedRecordKeepsKeyValueUserAndOriginalHeadersAndEntersStageOneInItsOwnPartition() {
		DeadLetters letters = DeadLetters.write();

		ReplayReport report = replayer(1000).replay(ReplayRequest.of(letters.from, letters.to));

		assertThat(report.published()).isEqualTo(LETTERS.size());
		Map<String, ConsumerRecord<byte[], byte[]>> replayed = SharedBroker.readAll(letters.target)
			.stream()
			.collect(Collectors.toMap((record) -> text(record.value()), (record) -> record));
		assertThat(replayed).hasSize(LETTERS.size());
		for (Letter letter : LETTERS) {
			ConsumerRecord<byte[], byte[]> record = replayed.get(letter.value);
			String about = letter.value;
			Map<String, String> headers = OrderedRetryLadderTests.headers(record);
			assertThat(text(record.key())).as(about).isEqualTo(letter.key);
			assertThat(userHeaders(record)).as(about).isEqualTo(letter.userHeaders());
			assertThat(headers).as(about)
				.containsEntry("original.topic", letter.originalTopic(letters.to))
				.containsEntry("original.partition", Integer.toString(letter.originalPartition))
				.containsEntry("original.offset", Long.toString(letter.originalOffset))
				.containsEntry("retry.count", "0")
				.containsEntry("replay.from-dlq", letters.coordinates.get(letter.value))
				.containsEntry("replay.timestamp", "2030-01-02T03:04:05.123456789Z")
				.containsEntry("previous.topic", letters.from)
				.containsEntry("owner.group", Names.group(letters.to))
				.doesNotContainKeys("error.class", "error.message", "error.exception", "error.timestamp", "dlq.reason",
						"lock.id");
			assertThat(record.headers().headers("replay.from-dlq")).as(about).hasSize(1);
			assertThat(record.headers().headers("retry.count")).as(about).hasSize(1);
			assertThat(record.timestamp()).as(about + ": written now")
				.isGreaterThan(letters.t0.plus(letter.minute, ChronoUnit.MINUTES).toEpochMilli());
		}
		// always the dead letter's own partition, where its key lives, whatever
		// original.* claims
		for (Letter letter : LETTERS) {
			assertThat(replayed.get(letter.value).partition()).as(letter.value).isEqualTo(letter.partition());
		}
		assertThat(replayed.get("V7").partition()).as("V7 claims partition 2").isZero();
		assertThat(replayed.get("V9").partition()).as("V9 claims partition 9").isEqualTo(2);
	}

	@Test
	void aDryRunCountsTheMatchingDeadLettersAndPublishesNothing() {
		DeadLetters letters = DeadLetters.write();
		SharedBroker.send(letters.target, "x", "already there");
		Map<TopicPartition, Long> before = endOffsets(letters.target);

		ReplayReport report = replayer(1000)
			.replay(ReplayRequest.of(letters.from, letters.to).withErrorClass("transient").withDryRun(true));

		assertThat(report.scanned()).isEqualTo(9);
		assertThat(report.matched()).isEqualTo(5);
		assertThat(report.published()).isZero();
		assertThat(endOffsets(letters.target)).isEqualTo(before);
	}

	@Test
	void anEmptyDeadLetterTopicOrASinceAfterTheLastDeadLetterReplaysNothing() {
		String to = SharedBroker.newTopic(3);
		SharedBroker.createTopic(Names.retry(to, "1s"), 3, Map.of());
		String empty = SharedBroker.newTopic(3);
		DeadLetters letters = DeadLetters.write();
		DlqReplayer replayer = replayer(1000);

		ReplayReport fromEmpty = replayer.replay(ReplayRequest.of(empty, to));
		ReplayReport afterTheLast = replayer.replay(ReplayRequest.of(letters.from, to).withSince(Instant.now()));

		for (ReplayReport report : List.of(fromEmpty, afterTheLast)) {
			assertThat(report.scanned()).isZero();
			assertThat(report.matched()).isZero();
			assertThat(report.published()).isZero();
		}
		assertThat(SharedBroker.readAll(Names.retry(to, "1s"))).isEmpty();
	}

	@Test
	void anUnknownTopicIsRejectedByNameAndNotCreated() {
		String existing = SharedBroker.newTopic(3);
		SharedBroker.createTopic(Names.retry(existing, "1s"), 3, Map.of());
		String other = SharedBroker.newTopic(3);
		String missingFrom = "missing-" + UUID.randomUUID();
		String missingTo = "missing-" + UUID.randomUUID();
		DlqReplayer replayer = replayer(1000);

		assertThatIllegalArgumentException().isThrownBy(() -> replayer.replay(ReplayRequest.of(missingFrom, existing)))
			.withMessageContaining("'" + missingFrom + "'");
		assertThatIllegalArgumentException().isThrownBy(() -> replayer.replay(ReplayRequest.of(other, missingTo)))
			.withMessageContaining("'" + Names.retry(missingTo, "1s") + "'")
			.withMessageContaining("start the listener once");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> replayer.replay(ReplayRequest.of(other, missingTo).withDryRun(true)))
			.withMessageContaining("'" + Names.retry(missingTo, "1s") + "'");
		assertThat(topics()).contains(existing, other).doesNotContain(missingFrom, Names.retry(missingTo, "1s"));
	}

	@Test
	void aSlowReplayStillSendsEveryMatchingDeadLetter() {
		DeadLetters letters = DeadLetters.write();

		ReplayReport report = replayer(4).replay(ReplayRequest.of(letters.from, letters.to).withException(STATE));

		assertThat(report.matched()).isEqualTo(3);
		assertThat(report.published()).isEqualTo(3);
		assertThat(SharedBroker.readAll(letters.target)).extracting((record) -> text(record.value()))
			.containsExactlyInAnyOrder("V1", "V6", "V9");
	}

	@Test
	void aFailedSendStopsTheReplayAndSaysWhichDeadLetterFailedAndHowManyWereSentBefore() {
		String to = SharedBroker.newTopic(1);
		String from = Names.dlq(to);
		SharedBroker.createTopic(from, 1, Map.of());
		SharedBroker.createTopic(Names.retry(to, "1s"), 1, Map.of());
		for (String value : List.of("small", "x".repeat(20_000), "small again")) {
			SharedBroker.send(new ProducerRecord<>(from, 0, bytes("k"), bytes(value),
					new RecordHeaders().add("owner.group", bytes(Names.group(to)))));
		}
		DlqReplayer replayer = new TopicDlqReplayer(
				ConsumerClients.of(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers())),
				ProducerClients.of(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers(),
						ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 10_000)),
				1000, Clock.systemUTC(), DlqReplayerTests::ladder);

		assertThatIllegalStateException().isThrownBy(() -> replayer.replay(ReplayRequest.of(from, to)))
			.withMessageContaining("dead letter " + from + "/0/1 ")
			.withMessageContaining("acknowledged 1 dead letter(s) before it")
			.withCauseInstanceOf(RecordTooLargeException.class);
		assertThat(SharedBroker.readAll(Names.retry(to, "1s"))).extracting((record) -> text(record.value()))
			.contains("small")
			.doesNotContain("x".repeat(20_000));
	}

	@Test
	void anInterruptedReplayStopsAndKeepsTheInterruptFlag() {
		DeadLetters letters = DeadLetters.write();
		AtomicReference<Throwable> failure = new AtomicReference<>();
		AtomicBoolean interruptFlag = new AtomicBoolean();
		// one dead letter every 1000 s: the replay waits for the second one until
		// interrupted
		Thread replay = new Thread(() -> {
			try {
				replayer(0.001).replay(ReplayRequest.of(letters.from, letters.to));
			}
			catch (RuntimeException ex) {
				failure.set(ex);
			}
			interruptFlag.set(Thread.currentThread().isInterrupted());
		});
		replay.start();
		await().atMost(WAIT).until(() -> SharedBroker.readAll(letters.target).size() == 1);

		replay.interrupt();

		await().atMost(WAIT).until(() -> !replay.isAlive());
		assertThat(failure.get()).isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("was interrupted")
			.hasMessageContaining("sent and had acknowledged 1;");
		assertThat(interruptFlag).isTrue();
		assertThat(SharedBroker.readAll(letters.target)).hasSize(1);
	}

	@Test
	void aRateOfZeroOrLessIsRejected() {
		Map<String, Object> config = Map.of();
		for (double rate : new double[] { 0, -1, Double.NaN }) {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> new TopicDlqReplayer(ConsumerClients.of(config), ProducerClients.of(config), rate,
						Clock.systemUTC(), DlqReplayerTests::ladder))
				.withMessageContaining("rate");
		}
	}

	@Test
	void aReplayedDeadLetterRunsThroughTheListenerAgain() {
		String topic = SharedBroker.newTopic(3);
		Handled handled = Handled.forTopic(topic);
		handled.failing = true;
		try (ConfigurableApplicationContext context = TestApplication.start(ReplayApplication.class, topic,
				"kafka.resilience.retry.delays=1s", "kafka.resilience.retry.max-attempts=2")) {
			RecordHeaders userHeaders = new RecordHeaders();
			userHeaders.add("trace-id", "t-1".getBytes(StandardCharsets.UTF_8));
			SharedBroker.send(new ProducerRecord<>(topic, null, bytes("k"), bytes("V"), userHeaders));
			await().atMost(WAIT).until(() -> SharedBroker.readAll(Names.dlq(topic)).size() == 1);
			ConsumerRecord<byte[], byte[]> dead = SharedBroker.readAll(Names.dlq(topic)).get(0);
			assertThat(OrderedRetryLadderTests.headers(dead)).containsEntry("dlq.reason", "permanent")
				.containsEntry("original.topic", topic);
			handled.failing = false;
			DlqReplayer replayer = context.getBean(DlqReplayer.class);

			ReplayReport report = replayer.replay(ReplayRequest.of(Names.dlq(topic), topic));

			assertThat(report.matched()).isEqualTo(1);
			assertThat(report.published()).isEqualTo(1);
			await().atMost(WAIT).until(() -> replayed(handled).size() == 1);
			ConsumerRecord<String, String> first = handled.records.get(0);
			ConsumerRecord<String, String> again = replayed(handled).get(0);
			assertThat(again.key()).isEqualTo("k");
			assertThat(again.value()).isEqualTo("V");
			assertThat(again.topic()).as("back through the group's own first stage")
				.isEqualTo(Names.retry(topic, "1s"));
			assertThat(again.partition()).isEqualTo(first.partition());
			assertThat(text(again.headers().lastHeader("replay.from-dlq").value()))
				.isEqualTo(Names.dlq(topic) + "/" + dead.partition() + "/" + dead.offset());
			assertThat(text(again.headers().lastHeader("trace-id").value())).isEqualTo("t-1");
			// the replayed record is done once the listener committed past it (the entry,
			// and the
			// copy its admission wrote at the end of the stage); nothing died again
			await().atMost(WAIT)
				.until(() -> SharedBroker.committed("g-" + topic, Names.retry(topic, "1s"), first.partition()) == 2);
			assertThat(SharedBroker.readAll(Names.dlq(topic))).hasSize(1);
			assertThat(replayed(handled)).hasSize(1);
			assertThat(SharedBroker.readAll(topic)).as("nothing was written to the main topic").hasSize(1);
			assertThat(ChaosRun.liveLocks(topic)).isZero();
		}
	}

	private static List<ConsumerRecord<String, String>> replayed(Handled handled) {
		return handled.records.stream()
			.filter((record) -> record.headers().lastHeader("replay.from-dlq") != null)
			.toList();
	}

	private static DlqReplayer replayer(double ratePerSecond) {
		Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers());
		return new TopicDlqReplayer(ConsumerClients.of(config),
				ProducerClients.of(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers())),
				ratePerSecond, Clock.fixed(REPLAYED_AT, ZoneOffset.UTC), DlqReplayerTests::ladder);
	}

	/**
	 * The ladder of the test listener's group on a topic (one stage of 1s), or of the
	 * group named.
	 */
	private static LadderPlan ladder(@Nullable String group, String topic) {
		return LadderPlan.of((group != null) ? group : Names.group(topic), topic, List.of(Duration.ofSeconds(1)), null,
				LadderPlan.DEFAULT_RETRY_TEMPLATE, LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE);
	}

	private static Letter letter(String value) {
		return LETTERS.stream().filter((letter) -> letter.value.equals(value)).findFirst().orElseThrow();
	}

	private static List<String> userHeaders(ConsumerRecord<byte[], byte[]> record) {
		Set<String> protocol = Set.of("retry.count", "error.class", "error.message", "error.exception",
				"error.timestamp", "previous.topic", "original.topic", "original.partition", "original.offset",
				"lock.id", "dlq.reason", "replay.from-dlq", "replay.timestamp", "owner.group");
		return Arrays.stream(record.headers().toArray())
			.filter((header) -> !protocol.contains(header.key()))
			.map((header) -> header.key() + "=" + text(header.value()))
			.toList();
	}

	private static Map<TopicPartition, Long> endOffsets(String topic) {
		Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers());
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer())) {
			List<TopicPartition> partitions = consumer.partitionsFor(topic)
				.stream()
				.map((info) -> new TopicPartition(topic, info.partition()))
				.toList();
			return consumer.endOffsets(partitions);
		}
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

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private static String text(byte[] bytes) {
		return new String(bytes, StandardCharsets.UTF_8);
	}

	/**
	 * A crafted dead letter, written {@code minute} minutes after the first one; its
	 * original topic is the replay's target unless {@code otherOriginalTopic} is set.
	 */
	private record Letter(String value, String key, @Nullable String otherOriginalTopic, int originalPartition,
			long originalOffset, String errorClass, String exception, String reason, int minute) {

		String originalTopic(String to) {
			return (this.otherOriginalTopic != null) ? this.otherOriginalTopic : to;
		}

		/** The user's headers, in order: a trace id on each, a tenant on some. */
		List<String> userHeaders() {
			List<String> headers = new ArrayList<>();
			headers.add("trace-id=trace-" + this.value);
			if (this.minute % 2 == 0) {
				headers.add("tenant=tenant-" + this.minute);
			}
			return headers;
		}

		/** The partition of the key, where the ladder writes its dead letters. */
		int partition() {
			return Utils.toPositive(Utils.murmur2(bytes(this.key))) % 3;
		}

		ProducerRecord<byte[], byte[]> toRecord(String dlq, String to, Instant t0) {
			Headers headers = new RecordHeaders();
			List<String> user = userHeaders();
			add(headers, user.get(0));
			add(headers, "original.topic=" + originalTopic(to));
			add(headers, "original.partition=" + this.originalPartition);
			add(headers, "original.offset=" + this.originalOffset);
			if (user.size() > 1) {
				add(headers, user.get(1));
			}
			add(headers, "retry.count=" + ("exhausted".equals(this.reason) ? "2" : "1"));
			add(headers, "previous.topic=" + ("exhausted".equals(this.reason) ? Names.retry(to, "1s") : to));
			add(headers, "lock.id=" + UUID.randomUUID());
			add(headers, "error.class=" + this.errorClass);
			add(headers, "error.message=cannot handle " + this.value);
			add(headers, "error.exception=" + this.exception);
			add(headers, "error.timestamp=2025-03-04T05:06:07.123456789Z");
			add(headers, "dlq.reason=" + this.reason);
			add(headers, "owner.group=" + Names.group(to));
			if (this.minute == 3) { // died again after an earlier replay
				add(headers, "replay.from-dlq=" + dlq + "/1/0");
				add(headers, "replay.timestamp=2025-03-04T05:06:07.000000000Z");
			}
			return new ProducerRecord<>(dlq, partition(), t0.plus(this.minute, ChronoUnit.MINUTES).toEpochMilli(),
					bytes(this.key), bytes(this.value), headers);
		}

		private static void add(Headers headers, String nameAndValue) {
			int equals = nameAndValue.indexOf('=');
			headers.add(nameAndValue.substring(0, equals), bytes(nameAndValue.substring(equals + 1)));
		}

	}

	/**
	 * The dead letters of {@link #LETTERS} on the dead-letter topic of the test group's
	 * ladder on a main topic of their own, and the ladder's first retry topic they go
	 * back to.
	 */
	private static final class DeadLetters {

		final String to;

		final String from;

		final String target;

		/** The time of the first dead letter: an hour ago. */
		final Instant t0 = Instant.now().minus(1, ChronoUnit.HOURS).truncatedTo(ChronoUnit.MILLIS);

		/** {@code topic/partition/offset} of each dead letter, by value. */
		final Map<String, String> coordinates = new HashMap<>();

		private DeadLetters() {
			this.to = SharedBroker.newTopic(3);
			this.from = Names.dlq(this.to);
			this.target = Names.retry(this.to, "1s");
			SharedBroker.createTopic(this.from, 3, Map.of());
			SharedBroker.createTopic(this.target, 3, Map.of());
			for (Letter letter : LETTERS) {
				SharedBroker.send(letter.toRecord(this.from, this.to, this.t0));
			}
			for (ConsumerRecord<byte[], byte[]> record : SharedBroker.readAll(this.from)) {
				this.coordinates.put(text(record.value()),
						this.from + "/" + record.partition() + "/" + record.offset());
			}
		}

		static DeadLetters write() {
			return new DeadLetters();
		}

	}

	private record Case(String name, UnaryOperator<ReplayRequest> filter, long scanned, String... expected) {
	}

	/**
	 * What the listener of {@link ReplayApplication} handled, per topic, and whether it
	 * fails.
	 */
	static final class Handled {

		private static final Map<String, Handled> BY_TOPIC = new ConcurrentHashMap<>();

		final List<ConsumerRecord<String, String>> records = new CopyOnWriteArrayList<>();

		volatile boolean failing;

		static Handled forTopic(String topic) {
			return BY_TOPIC.computeIfAbsent(topic, (t) -> new Handled());
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(ReplayListener.class)
	static class ReplayApplication {

	}

	static class ReplayListener {

		@OrderedRetryListener(id = "it-${test.topic}", topics = "${test.topic}")
		void handle(ConsumerRecord<String, String> record) {
			String original = ProtocolHeaders.text(record.headers(), ProtocolHeaders.ORIGINAL_TOPIC);
			Handled handled = Handled.forTopic((original != null) ? original : record.topic());
			handled.records.add(record);
			if (handled.failing) {
				throw new PermanentFailureException("cannot handle " + record.value() + " yet");
			}
		}

	}

}
