package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.github.kafkaresilience.internal.actuate.HeldKeys;
import io.github.kafkaresilience.internal.actuate.KafkaResilienceEndpoint;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.it.HandlingJournal.Handling;
import io.github.kafkaresilience.it.RebalancingApplications.BatchApplication;
import io.github.kafkaresilience.it.RebalancingApplications.RecordApplication;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.context.ConfigurableApplicationContext;

import static io.github.kafkaresilience.it.Operators.OPERATOR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Incremental rebalances, with the classic protocol's {@code CooperativeStickyAssignor}
 * and with the {@code consumer} group protocol: when a second instance joins, only the
 * partitions that move to it are revoked from the first, and the sync barrier, parking,
 * commits, the outage hold, batch riders and pending operator commands keep every rule
 * both for the partitions that stay and for the ones that arrive.
 * <p>
 * What an application sees of its rebalances it sees through a {@link ResilienceObserver}
 * bean ({@link RebalanceHistory}): which partitions were assigned, revoked or lost, and
 * when each partition's barrier opened.
 */
@UsesSharedBroker
class IncrementalRebalanceTests {

	private static final Duration WAIT = Duration.ofSeconds(90);

	private static final int PARTITIONS = 4;

	/** The classic group protocol with the cooperative assignor. */
	private static final String COOPERATIVE = "cooperative";

	/** The {@code consumer} group protocol (KIP-848) with its default assignor. */
	private static final String CONSUMER = "consumer";

	/**
	 * Instance A alone holds four keys mid-ladder (a head in the 1 h stage with two
	 * followers behind it, one key per partition) while steady traffic of other keys
	 * flows; instance B joins. A gives up exactly the partitions B gets and never
	 * revokes, nor reopens the barrier of, a partition it keeps; A keeps handling the
	 * records of the partitions it keeps while the rebalance is under way, each of them
	 * once; the records of the partitions that moved are handled by B from then on; every
	 * key's records run in order and none is lost; and the held keys stay held: the same
	 * live locks on both instances, every held record parked by whichever instance now
	 * owns its stage partition, nothing run again and nothing dead-lettered.
	 */
	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { COOPERATIVE, CONSUMER })
	void onlyTheMovingPartitionsAreRevokedAndTheOnesThatStayKeepRunning(String setup) {
		String topic = SharedBroker.newTopic(PARTITIONS);
		HandlingJournal journal = HandlingJournal.forTopic(topic);
		List<String[]> held = new ArrayList<>();
		List<String> heldKeys = new ArrayList<>();
		for (int p = 0; p < PARTITIONS; p++) {
			String key = SharedBroker.keyIn(p, PARTITIONS, "held-");
			heldKeys.add(key);
			held.add(new String[] { key, "X" + key + ":0" });
			held.add(new String[] { key, key + ":1" });
			held.add(new String[] { key, key + ":2" });
		}
		try (ConfigurableApplicationContext a = start(RecordApplication.class, topic, setup, "a",
				"kafka.resilience.retry.delays=1h")) {
			awaitOwner(List.of(a), 2 * PARTITIONS);
			SharedBroker.sendAll(topic, held);
			await().atMost(WAIT).until(() -> container(a).load().parked() == held.size());
			assertThat(liveLocks(a, topic)).isEqualTo(held.size());
			Map<String, List<String>> sent;
			SteadySender sender = new SteadySender(topic, 16, SteadySender.pace(100), "ok");
			ConfigurableApplicationContext b = null;
			try {
				await().atMost(WAIT).until(() -> sender.sent().size() > 50);
				b = start(RecordApplication.class, topic, setup, "b", "kafka.resilience.retry.delays=1h");
				ConfigurableApplicationContext joined = b;
				awaitOwner(List.of(a, joined), 2 * PARTITIONS);
				int sentWhenSettled = sender.sent().size();
				await().atMost(WAIT).until(() -> sender.sent().size() > sentWhenSettled + 100);
			}
			finally {
				sender.close();
			}
			try {
				sent = sender.sentByKey();
				await().atMost(WAIT)
					.untilAsserted(() -> assertThat(journal.firstSuccessesByKey(sent.keySet()))
						.as("every record handled, in order per key")
						.isEqualTo(sent));

				Set<TopicPartition> kept = assignment(a);
				RebalanceHistory historyOfA = a.getBean(RebalanceHistory.class);
				RebalanceHistory historyOfB = b.getBean(RebalanceHistory.class);
				assertOnlyTheMovedPartitionsWereRevoked(historyOfA, kept, assignment(b), historyOfB);

				Set<Integer> stayed = mainPartitions(kept, topic);
				long from = historyOfA.firstRevoked();
				long to = historyOfB.lastOpened();
				assertThat(journal.handlings())
					.as("records of the partitions A kept, handled by A while the rebalance was under way")
					.anyMatch((h) -> h.instance().equals("a") && stayed.contains(h.partition()) && h.nanos() > from
							&& h.nanos() < to);
				for (Map.Entry<String, List<String>> key : sent.entrySet()) {
					int partition = partitionOf(key.getKey());
					List<Handling> handlings = journal.handlingsOf(key.getKey());
					if (stayed.contains(partition)) {
						assertThat(handlings).as("records of " + key.getKey() + ", on a partition A kept")
							.allMatch((h) -> h.instance().equals("a"))
							.extracting(Handling::value)
							.as("each handled once: the partition was not read again")
							.containsExactlyElementsOf(key.getValue());
					}
					else {
						assertThat(handlings).as("records of " + key.getKey() + " after B's barriers opened")
							.filteredOn((h) -> h.nanos() > to)
							.isNotEmpty()
							.allMatch((h) -> h.instance().equals("b"));
					}
				}

				for (ConfigurableApplicationContext instance : List.of(a, b)) {
					assertThat(liveLocks(instance, topic)).as("live locks, as before").isEqualTo(held.size());
				}
				assertThat(SharedBroker.readAll(Names.dlq(topic))).as("nothing dead-lettered").isEmpty();
				for (String key : heldKeys) {
					assertThat(journal.handlingsOf(key)).as("the held key " + key + " ran its head once, nothing else")
						.extracting(Handling::value)
						.containsExactly("X" + key + ":0");
				}
				String stage = Names.retry(topic, "1h");
				for (ConfigurableApplicationContext instance : List.of(a, b)) {
					Set<Integer> stagePartitions = assignment(instance).stream()
						.filter((tp) -> tp.topic().equals(stage))
						.map(TopicPartition::partition)
						.collect(Collectors.toSet());
					long heldHere = heldKeys.stream()
						.filter((key) -> stagePartitions.contains(partitionOf(key)))
						.count();
					await().atMost(WAIT)
						.untilAsserted(() -> assertThat(container(instance).load().parked())
							.as("held records parked where their stage partition is now: " + stagePartitions)
							.isEqualTo(3 * heldHere));
				}
			}
			finally {
				b.close();
			}
		}
	}

	/**
	 * Instance A holds its records for an outage of every key (docs/OPERATIONS.md, "A
	 * dependency is down") under steady traffic; instance B joins. A gives up only the
	 * partitions B gets and keeps holding the ones it keeps (its breaker stays open, it
	 * opened once); B takes the records A held of the moved partitions, which A never
	 * committed, and holds them too. For longer than the whole ladder (1 s + 2 s) no
	 * stage record is written and nothing is dead-lettered; once the dependency is back
	 * every record is handled once, in order per key, each by the instance that owns its
	 * partition.
	 */
	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { COOPERATIVE, CONSUMER })
	void anOutageHoldKeepsHoldingOnThePartitionsThatStayAndHoldsOnTheOnesThatArrive(String setup) {
		String topic = SharedBroker.newTopic(PARTITIONS);
		HandlingJournal journal = HandlingJournal.forTopic(topic);
		journal.down(true);
		String[] outage = { "kafka.resilience.outage.enabled=true", "kafka.resilience.outage.probe-interval=200ms",
				"kafka.resilience.outage.max-probe-interval=1s", "kafka.resilience.outage.minimum-attempts=10" };
		try (ConfigurableApplicationContext a = start(RecordApplication.class, topic, setup, "a", outage)) {
			awaitOwner(List.of(a), 3 * PARTITIONS);
			Map<String, List<String>> sent;
			SteadySender sender = new SteadySender(topic, 40, SteadySender.pace(200), "ok");
			ConfigurableApplicationContext b = null;
			try {
				await().atMost(WAIT).until(() -> container(a).outageBreaker().isOpen());
				int ladder = ladderRecords(topic);
				b = start(RecordApplication.class, topic, setup, "b", outage);
				ConfigurableApplicationContext joined = b;
				awaitOwner(List.of(a, joined), 3 * PARTITIONS);
				await().atMost(WAIT)
					.until(() -> container(joined).outageBreaker().isOpen() && container(joined).heldRecords() > 0);
				await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
					assertThat(container(a).outageBreaker().isOpen()).as("A holds").isTrue();
					assertThat(container(joined).outageBreaker().isOpen()).as("B holds").isTrue();
					assertThat(ladderRecords(topic)).as("stage records").isEqualTo(ladder);
					assertThat(SharedBroker.readAll(Names.dlq(topic))).as("dead letters").isEmpty();
				});
				assertThat(container(a).outageBreaker().timesOpened()).as("A held throughout").isOne();
				assertThat(container(a).heldRecords()).as("records A holds").isPositive();
				assertOnlyTheMovedPartitionsWereRevoked(a.getBean(RebalanceHistory.class), assignment(a), assignment(b),
						b.getBean(RebalanceHistory.class));
			}
			finally {
				sender.close();
			}
			try {
				sent = sender.sentByKey();
				journal.down(false);
				await().atMost(WAIT)
					.untilAsserted(() -> assertThat(journal.firstSuccessesByKey(sent.keySet()))
						.as("every record handled, in order per key")
						.isEqualTo(sent));
				Set<TopicPartition> ofA = assignment(a);
				for (Map.Entry<String, List<String>> key : sent.entrySet()) {
					assertThat(journal.handlingsOf(key.getKey())).filteredOn(Handling::succeeded)
						.as("successes of " + key.getKey() + ", each once, by the owner of its partition")
						.allMatch((h) -> h.instance()
							.equals(ofA.contains(new TopicPartition(h.topic(), h.partition())) ? "a" : "b"))
						.extracting(Handling::value)
						.containsExactlyElementsOf(key.getValue());
				}
				assertThat(SharedBroker.readAll(Names.dlq(topic))).as("nothing dead-lettered").isEmpty();
				for (ConfigurableApplicationContext instance : List.of(a, b)) {
					await().atMost(WAIT).until(() -> liveLocks(instance, topic) == 0);
				}
			}
			finally {
				b.close();
			}
		}
	}

	/**
	 * A batch listener: on instance A, the first records of a key ride in its head's
	 * batch; the head fails, and the key's records go into the ladder behind it (a head
	 * that succeeds on its first retry, one that fails until its attempts are used up,
	 * one record that fails permanently, one key per partition of each). Instance B joins
	 * while they wait there, and more records of the same keys arrive. Every key's
	 * records succeed in the order they were sent, whichever instance ran them, and the
	 * dead-letter topic holds exactly the two kinds of records that fail for good, each
	 * once.
	 */
	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { COOPERATIVE, CONSUMER })
	void batchRidersKeepTheirKeysOrderAndTheDeadLettersAreExactAcrossARebalance(String setup) {
		String topic = SharedBroker.newTopic(PARTITIONS);
		HandlingJournal journal = HandlingJournal.forTopic(topic);
		String[] ladder = { "kafka.resilience.retry.delays=4s,6s", "kafka.resilience.retry.max-attempts=3",
				"kafka.resilience.consumer.batch-size=20" };
		List<String> keys = new ArrayList<>();
		for (int p = 0; p < PARTITIONS; p++) {
			keys.add(SharedBroker.keyIn(p, PARTITIONS, "retried-"));
			keys.add(SharedBroker.keyIn(p, PARTITIONS, "exhausted-"));
			keys.add(SharedBroker.keyIn(p, PARTITIONS, "permanent-"));
		}
		List<String[]> first = new ArrayList<>();
		for (int seq = 0; seq < 5; seq++) {
			for (String key : keys) {
				String marker = (seq == 0 && key.startsWith("retried-")) ? "F"
						: (seq == 0 && key.startsWith("exhausted-")) ? "X"
								: (seq == 1 && key.startsWith("permanent-")) ? "P" : "";
				first.add(new String[] { key, marker + key + ":" + seq });
			}
		}
		List<String[]> then = new ArrayList<>();
		for (int seq = 5; seq < 8; seq++) {
			for (String key : keys) {
				then.add(new String[] { key, key + ":" + seq });
			}
		}
		try (ConfigurableApplicationContext a = start(BatchApplication.class, topic, setup, "a",
				with(ladder, "test.autostartup=false"))) {
			SharedBroker.sendAll(topic, first); // a backlog: the key's records come in
												// one poll
			a.getBean(ListenerRegistry.class).start("incr-" + topic);
			awaitOwner(List.of(a), 3 * PARTITIONS);
			await().atMost(WAIT)
				.until(() -> first.stream()
					.filter((record) -> record[1].startsWith("F") || record[1].startsWith("X"))
					.allMatch((record) -> journal.handlingsOf(record[0])
						.stream()
						.anyMatch((h) -> h.value().equals(record[1]))));
			assertThat(journal.sameKeyInOneBatch()).as("batches in which a key's records rode behind its head")
				.isPositive();
			try (ConfigurableApplicationContext b = start(BatchApplication.class, topic, setup, "b", ladder)) {
				awaitOwner(List.of(a, b), 3 * PARTITIONS);
				assertThat(liveLocks(b, topic)).as("keys in the ladder when the rebalance is over").isPositive();
				assertOnlyTheMovedPartitionsWereRevoked(a.getBean(RebalanceHistory.class), assignment(a), assignment(b),
						b.getBean(RebalanceHistory.class));
				SharedBroker.sendAll(topic, then);

				Map<String, List<String>> expected = new LinkedHashMap<>();
				List<String> dead = new ArrayList<>();
				for (String[] record : with(first, then)) {
					if (record[1].startsWith("X") || record[1].startsWith("P")) {
						dead.add(record[1] + "/" + (record[1].startsWith("X") ? "exhausted" : "permanent"));
					}
					else {
						expected.computeIfAbsent(record[0], (key) -> new ArrayList<>()).add(record[1]);
					}
				}
				await().atMost(WAIT)
					.untilAsserted(
							() -> assertThat(journal.firstSuccessesByKey(keys)).as("every key's records, in order")
								.isEqualTo(expected));
				await().atMost(WAIT)
					.untilAsserted(() -> assertThat(deadLetters(topic)).as("dead letters, each once")
						.containsExactlyInAnyOrderElementsOf(dead));
				for (ConfigurableApplicationContext instance : List.of(a, b)) {
					await().atMost(WAIT).until(() -> liveLocks(instance, topic) == 0);
				}
				assertThat(deadLetters(topic)).as("dead letters, each once").containsExactlyInAnyOrderElementsOf(dead);
				assertThat(journal.outOfOrderInOneBatch()).as("batches that held records of one key out of order")
					.isZero();
				assertThat(journal.handlings()).as("records B ran").anyMatch((h) -> h.instance().equals("b"));
			}
		}
	}

	/**
	 * Instance A holds eight keys in the 1 h stage, two per partition; an operator pauses
	 * A's listener and asks for retry now on one head of each partition and dead-letter
	 * now on the other, so that the commands are still pending when instance B joins. The
	 * commands of the stage partitions that moved are acted on by B, after its barrier,
	 * while A is still paused; those of the partitions A kept once A resumes. Each acts
	 * exactly once: a retried head runs once more, a dead-lettered one not at all and is
	 * dead-lettered once, and each key's next record runs after it.
	 */
	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { COOPERATIVE, CONSUMER })
	void pendingOperatorCommandsActOnceOnWhicheverInstanceOwnsTheKeyAfterTheRebalance(String setup) {
		String topic = SharedBroker.newTopic(PARTITIONS);
		HandlingJournal journal = HandlingJournal.forTopic(topic);
		String[] operated = { "kafka.resilience.retry.delays=1h",
				"management.endpoints.web.exposure.include=kafkaresilience",
				"kafka.resilience.console.actions-enabled=true" };
		List<String> retried = new ArrayList<>();
		List<String> deadLettered = new ArrayList<>();
		List<String[]> records = new ArrayList<>();
		for (int p = 0; p < PARTITIONS; p++) {
			retried.add(SharedBroker.keyIn(p, PARTITIONS, "retried-"));
			deadLettered.add(SharedBroker.keyIn(p, PARTITIONS, "dead-"));
		}
		for (int p = 0; p < PARTITIONS; p++) {
			records.add(new String[] { retried.get(p), "F" + retried.get(p) + ":0" });
			records.add(new String[] { deadLettered.get(p), "X" + deadLettered.get(p) + ":0" });
		}
		for (int p = 0; p < PARTITIONS; p++) {
			records.add(new String[] { retried.get(p), retried.get(p) + ":1" });
			records.add(new String[] { deadLettered.get(p), deadLettered.get(p) + ":1" });
		}
		try (ConfigurableApplicationContext a = start(RecordApplication.class, topic, setup, "a", operated)) {
			awaitOwner(List.of(a), 2 * PARTITIONS);
			SharedBroker.sendAll(topic, records);
			KafkaResilienceEndpoint endpoint = a.getBean(KafkaResilienceEndpoint.class);
			await().atMost(WAIT)
				.until(() -> heads(endpoint, topic).size() == 2 * PARTITIONS
						&& container(a).load().parked() == records.size());
			Map<String, HeldKeys.HeldKey> heads = heads(endpoint, topic);
			a.getBean(ListenerRegistry.class).pause("incr-" + topic);
			for (String key : retried) {
				assertThat(endpoint.act("retry-now", "incr-" + topic, topic, heads.get(key).lockId(), OPERATOR)
					.getStatus()).isEqualTo(200);
			}
			for (String key : deadLettered) {
				assertThat(endpoint.act("dead-letter-now", "incr-" + topic, topic, heads.get(key).lockId(), OPERATOR)
					.getStatus()).isEqualTo(200);
			}
			int handled = journal.handlings().size();
			await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
				assertThat(commands(a, topic)).as("pending commands").isEqualTo(2 * PARTITIONS);
				assertThat(journal.handlings()).as("handlings while paused").hasSize(handled);
			});

			try (ConfigurableApplicationContext b = start(RecordApplication.class, topic, setup, "b", operated)) {
				awaitOwner(List.of(a, b), 2 * PARTITIONS);
				assertOnlyTheMovedPartitionsWereRevoked(a.getBean(RebalanceHistory.class), assignment(a), assignment(b),
						b.getBean(RebalanceHistory.class));
				String stage = Names.retry(topic, "1h");
				Set<Integer> ofB = assignment(b).stream()
					.filter((tp) -> tp.topic().equals(stage))
					.map(TopicPartition::partition)
					.collect(Collectors.toSet());
				assertThat(ofB).as("stage partitions that moved").isNotEmpty().hasSizeLessThan(PARTITIONS);
				// B acts on the commands of its partitions while A, paused, acts on none
				await().atMost(WAIT).untilAsserted(() -> {
					for (int p : ofB) {
						assertThat(journal.successes(retried.get(p) + ":1")).isOne();
						assertThat(journal.successes(deadLettered.get(p) + ":1")).isOne();
					}
					assertThat(commands(b, topic)).as("commands pending on A's partitions")
						.isEqualTo(2 * (PARTITIONS - ofB.size()));
				});
				for (int p = 0; p < PARTITIONS; p++) {
					if (!ofB.contains(p)) {
						assertThat(journal.handlingsOf(retried.get(p))).as("handlings of a key of paused A").hasSize(1);
					}
				}

				a.getBean(ListenerRegistry.class).resume("incr-" + topic);
				await().atMost(WAIT)
					.until(() -> Stream.concat(retried.stream(), deadLettered.stream())
						.allMatch((key) -> journal.successes(key + ":1") == 1));
				// a little longer: a second run, or a second dead letter, would come now
				// if a command acted twice
				await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
					Map<String, List<String>> letters = deadLetters(topic).stream()
						.collect(Collectors.groupingBy((letter) -> letter.substring(1, letter.indexOf(':'))));
					for (int p = 0; p < PARTITIONS; p++) {
						String owner = ofB.contains(p) ? "b" : "a";
						String key = retried.get(p);
						assertThat(journal.handlingsOf(key)).as("runs of " + key)
							.extracting(Handling::value, Handling::succeeded, Handling::instance)
							.containsExactly(Tuple.tuple("F" + key + ":0", false, "a"),
									Tuple.tuple("F" + key + ":0", true, owner), Tuple.tuple(key + ":1", true, owner));
						assertThat(letters).doesNotContainKey(key);
						String dead = deadLettered.get(p);
						assertThat(journal.handlingsOf(dead)).as("runs of " + dead)
							.extracting(Handling::value, Handling::succeeded, Handling::instance)
							.containsExactly(Tuple.tuple("X" + dead + ":0", false, "a"),
									Tuple.tuple(dead + ":1", true, owner));
						assertThat(letters.get(dead)).containsExactly("X" + dead + ":0/operator");
					}
				});
				assertThat(operatorDeadLetters(b)).as("dead-lettered by B").isEqualTo(ofB.size());
				assertThat(operatorDeadLetters(a)).as("dead-lettered by A").isEqualTo(PARTITIONS - ofB.size());
				for (ConfigurableApplicationContext instance : List.of(a, b)) {
					await().atMost(WAIT).untilAsserted(() -> {
						assertThat(liveLocks(instance, topic)).as("live locks").isZero();
						assertThat(commands(instance, topic)).as("pending commands").isZero();
					});
				}
			}
		}
	}

	/**
	 * The heads of the held keys that show their head and one record behind it, by key.
	 */
	@SuppressWarnings("unchecked")
	private static Map<String, HeldKeys.HeldKey> heads(KafkaResilienceEndpoint endpoint, String topic) {
		var response = endpoint.view("held", "incr-" + topic, topic, null, null, 50, null, null, null, null, null, null,
				null);
		List<HeldKeys.HeldPage> pages = (List<HeldKeys.HeldPage>) response.getBody();
		if (pages == null || pages.isEmpty()) {
			return Map.of();
		}
		return pages.get(0)
			.held()
			.stream()
			.filter((row) -> row.records() == 2 && row.actionable())
			.collect(Collectors.toMap(HeldKeys.HeldKey::key, (row) -> row));
	}

	private static int commands(ConfigurableApplicationContext context, String topic) {
		return context.getBean(LockCoordinator.class).registryOf(Names.locks(topic)).commands().size();
	}

	/** The heads an instance dead-lettered for an operator, as its meters count them. */
	private static double operatorDeadLetters(ConfigurableApplicationContext context) {
		return context.getBean(MeterRegistry.class)
			.find("kafka.resilience.dlq.records")
			.tag("reason", "operator")
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum();
	}

	/** The dead letters of the test's ladder: value and {@code dlq.reason}. */
	private static List<String> deadLetters(String topic) {
		return SharedBroker.readAll(Names.dlq(topic))
			.stream()
			.map((letter) -> new String(letter.value()) + "/"
					+ ProtocolHeaders.text(letter.headers(), ProtocolHeaders.DLQ_REASON))
			.toList();
	}

	@SafeVarargs
	private static <T> T[] with(T[] first, T... more) {
		T[] all = Arrays.copyOf(first, first.length + more.length);
		System.arraycopy(more, 0, all, first.length, more.length);
		return all;
	}

	private static List<String[]> with(List<String[]> first, List<String[]> then) {
		List<String[]> all = new ArrayList<>(first);
		all.addAll(then);
		return all;
	}

	/** Records in the stage topics of the test's ladder (delays 1 s and 2 s). */
	private static int ladderRecords(String topic) {
		return SharedBroker.readAll(Names.retry(topic, "1s")).size()
				+ SharedBroker.readAll(Names.retry(topic, "2s")).size();
	}

	private static void assertOnlyTheMovedPartitionsWereRevoked(RebalanceHistory historyOfA, Set<TopicPartition> kept,
			Set<TopicPartition> moved, RebalanceHistory historyOfB) {
		assertThat(kept).as("A keeps partitions").isNotEmpty();
		assertThat(moved).as("B got partitions").isNotEmpty();
		assertThat(historyOfA.given()).as("what A gave up: exactly what B got (history of A: %s)", historyOfA.events())
			.isEqualTo(moved);
		for (TopicPartition partition : kept) {
			assertThat(historyOfA.openings(partition)).as("barriers that opened on A for %s, which it kept", partition)
				.isEqualTo(1);
		}
		assertThat(historyOfB.given()).as("what B gave up").isEmpty();
	}

	private static int partitionOf(String key) {
		return Utils.toPositive(Utils.murmur2(key.getBytes())) % PARTITIONS;
	}

	private static Set<Integer> mainPartitions(Set<TopicPartition> assignment, String topic) {
		return assignment.stream()
			.filter((tp) -> tp.topic().equals(topic))
			.map(TopicPartition::partition)
			.collect(Collectors.toSet());
	}

	/**
	 * Starts an instance ({@code a} or {@code b}) of an application on a topic with one
	 * of the incremental setups.
	 */
	private static ConfigurableApplicationContext start(Class<?> application, String topic, String setup,
			String instance, String... more) {
		List<String> properties = new ArrayList<>(
				List.of("kafka.resilience.instance-id=" + instance + "-" + topic, "test.instance=" + instance));
		properties.add(setup.equals(CONSUMER) ? "spring.kafka.consumer.properties.group.protocol=consumer"
				: "spring.kafka.consumer.properties.partition.assignment.strategy="
						+ "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
		properties.addAll(List.of(more));
		ConfigurableApplicationContext context = TestApplication.start(application, topic,
				properties.toArray(String[]::new));
		MeterRegistry registry = context.getBean(MeterRegistry.class);
		context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(registry));
		return context;
	}

	/**
	 * Waits until the instances hold {@code partitions} partitions between them, each its
	 * own, every instance some of the main topic's, with every barrier open.
	 */
	private static void awaitOwner(List<ConfigurableApplicationContext> instances, int partitions) {
		await().atMost(WAIT).untilAsserted(() -> {
			List<Set<TopicPartition>> assignments = instances.stream()
				.map(IncrementalRebalanceTests::assignment)
				.toList();
			Set<TopicPartition> all = new HashSet<>();
			assignments.forEach(all::addAll);
			assertThat(assignments.stream().mapToInt(Set::size).sum()).as("assignments " + assignments)
				.isEqualTo(partitions);
			assertThat(all).hasSize(partitions);
			for (ConfigurableApplicationContext instance : instances) {
				RetryContainer container = container(instance);
				assertThat(container.assignment()).as("assignments " + assignments)
					.anyMatch((tp) -> container.topics().contains(tp.topic()));
				assertThat(container.closedBarriers()).isEmpty();
			}
		});
	}

	private static RetryContainer container(ConfigurableApplicationContext context) {
		ListenerRegistry listeners = context.getBean(ListenerRegistry.class);
		return listeners.container(listeners.endpoints().get(0).id());
	}

	private static Set<TopicPartition> assignment(ConfigurableApplicationContext context) {
		RetryContainer container = container(context);
		return (container != null) ? container.assignment() : Set.of();
	}

	private static int liveLocks(ConfigurableApplicationContext context, String topic) {
		return context.getBean(LockCoordinator.class).registryOf(Names.locks(topic)).size();
	}

}
