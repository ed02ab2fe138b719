package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import io.github.kafkaresilience.internal.actuate.HeldKeys;
import io.github.kafkaresilience.internal.actuate.KafkaResilienceEndpoint;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static io.github.kafkaresilience.it.Operators.OPERATOR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An operator clearing a backlog (docs/PROTOCOL.md, rule 11): many commands on many held
 * keys, several on one partition, sent together, each acted on once and at once.
 */
@UsesSharedBroker
class OperatorCommandsInBulkTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	/**
	 * How long an operator may wait for accepted commands to act, from the first one
	 * sent: they take about 2 s here, and a command that does not act never does.
	 */
	private static final Duration PROMPTLY = Duration.ofSeconds(10);

	/**
	 * Two instances, 4 partitions, stages of an hour: one parks its waiting heads (the
	 * default park-after), the other keeps them in memory (park-after of 3 hours). 50
	 * held keys, each a head with 2 records behind it; 50 commands, retry now and
	 * dead-letter now in turn, sent back to back and each accepted by either instance in
	 * turn, so that commands arrive while earlier ones of the same partition are acted
	 * on, and half of them reach the instance holding the record through the lock topic.
	 * Each acts exactly once, within seconds.
	 */
	@Test
	void fiftyCommandsOverFourPartitionsAndTwoInstancesEachActOnceWithinSeconds() {
		String topic = SharedBroker.newTopic(4);
		Script script = Script.forTopic(topic);
		int keys = 50;
		for (int i = 0; i < keys; i++) {
			script.failTransiently("k" + i + "-0", retried(i) ? 1 : Integer.MAX_VALUE);
		}
		String[] common = { "kafka.resilience.retry.delays=1h,2h",
				"management.endpoints.web.exposure.include=kafkaresilience",
				"kafka.resilience.console.actions-enabled=true" };
		try (ConfigurableApplicationContext parking = TestApplication.start(topic,
				with(common, "kafka.resilience.instance-id=parking-" + topic));
				ConfigurableApplicationContext inMemory = TestApplication.start(topic,
						with(common, "kafka.resilience.instance-id=in-memory-" + topic,
								"kafka.resilience.consumer.park-after=3h"))) {
			List<ConfigurableApplicationContext> instances = List.of(parking, inMemory);
			await().atMost(WAIT)
				.until(() -> mainPartitions(parking, topic) == 2 && mainPartitions(inMemory, topic) == 2);
			List<String[]> records = new ArrayList<>();
			for (int seq = 0; seq < 3; seq++) {
				for (int i = 0; i < keys; i++) {
					records.add(new String[] { "k" + i, "k" + i + "-" + seq });
				}
			}
			SharedBroker.sendAll(topic, records);
			KafkaResilienceEndpoint first = parking.getBean(KafkaResilienceEndpoint.class);
			await().atMost(WAIT).until(() -> heads(first, topic, 3).size() == keys);
			Map<String, HeldKeys.HeldKey> heads = heads(first, topic, 3);
			assertThat(heads.values().stream().map((head) -> head.stageTopic() + "-" + partitionOf(head)).distinct())
				.as("heads in every partition of stage 1")
				.hasSize(4);
			Set<Integer> parkingPartitions = container(parking, topic).assignment()
				.stream()
				.filter((tp) -> tp.topic().equals(Names.retry(topic, "1h")))
				.map(TopicPartition::partition)
				.collect(Collectors.toSet());
			long parkedHere = heads.values()
				.stream()
				.filter((head) -> parkingPartitions.contains(partitionOf(head)))
				.count();
			assertThat(parkedHere).as("keys in both instances").isBetween(1L, keys - 1L);
			await().atMost(WAIT).until(() -> container(parking, topic).load().parked() == parkedHere * 3);
			assertThat(container(inMemory, topic).load().parked()).as("kept in memory").isZero();
			assertThat(container(inMemory, topic).load().inFlight()).isEqualTo((keys - parkedHere) * 3);

			long start = System.nanoTime();
			for (int i = 0; i < keys; i++) {
				KafkaResilienceEndpoint accepting = instances.get(i % 2).getBean(KafkaResilienceEndpoint.class);
				String action = retried(i) ? "retry-now" : "dead-letter-now";
				assertThat(
						accepting.act(action, "it-" + topic, topic, heads.get("k" + i).lockId(), OPERATOR).getStatus())
					.as(action + " on k" + i)
					.isEqualTo(200);
			}
			await().atMost(PROMPTLY)
				.until(() -> IntStream.range(0, keys).allMatch((i) -> script.succeeded("k" + i + "-2")));
			System.out.printf("%d commands acted on within %d ms of the first one sent%n", keys,
					(System.nanoTime() - start) / 1_000_000);

			// a little longer: a second run, or a second dead letter, would come now if a
			// command acted twice
			await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
				Map<String, List<String>> dlq = deadLetters(topic);
				for (int i = 0; i < keys; i++) {
					String key = "k" + i;
					if (retried(i)) {
						assertThat(script.attempts(key + "-0")).as("runs of " + key + "-0").isEqualTo(2);
						assertThat(dlq).doesNotContainKey(key);
					}
					else {
						assertThat(script.attempts(key + "-0")).as("runs of " + key + "-0").isEqualTo(1);
						assertThat(dlq.get(key)).containsExactly(key + "-0/operator");
					}
					assertThat(script.firstSuccesses(key)).endsWith(key + "-1", key + "-2");
				}
			});
			for (ConfigurableApplicationContext instance : instances) {
				LockCoordinator locks = instance.getBean(LockCoordinator.class);
				await().atMost(WAIT).untilAsserted(() -> {
					assertThat(locks.registryOf(Names.locks(topic)).size()).as("live locks").isZero();
					assertThat(locks.registryOf(Names.locks(topic)).commands()).as("pending commands").isEmpty();
				});
			}
		}
	}

	private static boolean retried(int key) {
		return key % 2 == 0;
	}

	private static String[] with(String[] common, String... more) {
		return Stream.concat(Arrays.stream(common), Arrays.stream(more)).toArray(String[]::new);
	}

	private static int partitionOf(HeldKeys.HeldKey head) {
		return Utils.toPositive(Utils.murmur2(head.key().getBytes())) % 4;
	}

	private static long mainPartitions(ConfigurableApplicationContext context, String topic) {
		RetryContainer container = container(context, topic);
		return (container != null) ? container.assignment().stream().filter((tp) -> tp.topic().equals(topic)).count()
				: 0;
	}

	private static RetryContainer container(ConfigurableApplicationContext context, String topic) {
		return context.getBean(ListenerRegistry.class).container("it-" + topic);
	}

	/** The dead letters of the topic's ladder by key: value and {@code dlq.reason}. */
	private static Map<String, List<String>> deadLetters(String topic) {
		return SharedBroker.readAll(Names.dlq(topic))
			.stream()
			.collect(Collectors.groupingBy((ConsumerRecord<byte[], byte[]> r) -> new String(r.key()),
					Collectors.mapping(
							(r) -> new String(r.value()) + "/"
									+ ProtocolHeaders.text(r.headers(), ProtocolHeaders.DLQ_REASON),
							Collectors.toList())));
	}

	/**
	 * The heads of the held keys, by key, of the keys that show their head and
	 * {@code records} in all.
	 */
	@SuppressWarnings("unchecked")
	private static Map<String, HeldKeys.HeldKey> heads(KafkaResilienceEndpoint endpoint, String topic, int records) {
		List<HeldKeys.HeldKey> rows = new ArrayList<>();
		for (int page = 0;; page++) {
			var response = endpoint.view("held", "it-" + topic, topic, null, page, null, null, null, null, null, null,
					null, null);
			List<HeldKeys.HeldPage> pages = (List<HeldKeys.HeldPage>) response.getBody();
			if (pages == null || pages.isEmpty() || pages.get(0).held().isEmpty()) {
				break;
			}
			rows.addAll(pages.get(0).held());
		}
		return rows.stream()
			.filter((row) -> row.records() == records && row.actionable())
			.collect(Collectors.toMap(HeldKeys.HeldKey::key, (row) -> row));
	}

}
