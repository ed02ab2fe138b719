package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.kafkaresilience.internal.actuate.ResilienceHealthIndicator;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The only broker of a cluster goes away for a while in the middle of a run, with keys in
 * the ladder, records being handled and more records on their way, and comes back on the
 * same port and log directory. The application rides it out: nothing is lost, every key
 * stays in order, no lock is left behind and the consumer group catches up to the end.
 * <p>
 * The broker is a process of its own ({@link KafkaCluster}), killed hard and started
 * again: clients see exactly what they see when a broker host dies (connections reset,
 * then refused) and the broker recovers its logs, consumer groups and producer state from
 * disk.
 * <p>
 * The outage lasts 35 s by default: longer than the library's write timeout (30 s), so
 * lock writes and publishes made during the outage fail while their records still sit in
 * the producers' buffers and land once the broker is back.
 * {@code -Dbroker-outage.seconds=60} runs the full minute (about 100 s in all), longer
 * than the consumers' session timeout too.
 */
class BrokerOutageTests {

	private static final Log logger = LogFactory.getLog(BrokerOutageTests.class);

	private static final Duration OUTAGE = Duration.ofSeconds(Long.getLong("broker-outage.seconds", 35));

	private static final Duration WAIT = Duration.ofMinutes(3);

	private static final int KEYS = 12;

	private static final int BEFORE = 12;

	private static final int DURING = 4;

	@Test
	void aListenerRidesOutABrokerOutageAndFinishesEveryKeyInOrder() throws Exception {
		try (KafkaCluster cluster = KafkaCluster.start(1)) {
			String topic = "t" + UUID.randomUUID().toString().substring(0, 8);
			cluster.createTopic(topic, 3, Map.of());
			Script script = Script.forTopic(topic).withLatency(20);
			Map<String, List<String>> producedByKey = new LinkedHashMap<>();
			Set<String> permanent = new HashSet<>();
			List<String[]> before = records(0, BEFORE, script, producedByKey, permanent);
			List<String[]> during = records(BEFORE, BEFORE + DURING, script, producedByKey, permanent);
			ScheduledExecutorService outage = Executors.newSingleThreadScheduledExecutor();
			try (ConfigurableApplicationContext app = start(cluster, topic)) {
				LockCoordinator locks = app.getBean(LockCoordinator.class);
				cluster.sendAll(topic, before);
				// the ladder is in use: keys are locked and records are being handled
				await().atMost(WAIT).until(() -> liveLocks(locks) >= 3 && script.journal().size() >= before.size() / 2);
				cluster.kill(0);
				long down = System.nanoTime();
				logger.info("Broker of " + topic + " killed with " + liveLocks(locks) + " live locks and "
						+ script.journal().size() + " attempts made");
				// the situation under test: the broker stays away for the outage, then
				// returns
				ScheduledFuture<?> restart = outage.schedule(() -> cluster.restart(0), OUTAGE.toMillis(),
						TimeUnit.MILLISECONDS);
				// more records arrive meanwhile: their producer waits for the broker to
				// come back
				CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> sendAll(cluster, topic, during));
				await().atMost(OUTAGE.plus(WAIT)).until(restart::isDone);
				restart.get();
				logger.info("Broker of " + topic + " back after "
						+ Duration.ofNanos(System.nanoTime() - down).toMillis() + " ms");
				sent.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

				await().atMost(WAIT)
					.untilAsserted(
							() -> assertThat(unfinished(script, producedByKey, permanent, deadLetters(cluster, topic)))
								.isEmpty());
				producedByKey.forEach((key, values) -> assertThat(script.firstSuccesses(key)).as("key " + key)
					.containsExactlyElementsOf(values.stream().filter((v) -> !permanent.contains(v)).toList()));
				List<ConsumerRecord<byte[], byte[]>> deadLetters = cluster.readAll(Names.dlq(topic));
				assertThat(deadLetters).extracting((record) -> new String(record.value(), StandardCharsets.UTF_8))
					.containsOnlyElementsOf(permanent)
					.containsAll(permanent);
				assertThat(deadLetters)
					.extracting((record) -> ProtocolHeaders.text(record.headers(), ProtocolHeaders.DLQ_REASON))
					.containsOnly("permanent");
				await().atMost(WAIT).until(() -> liveLocks(locks) == 0 && ChaosRun.liveLocks(cluster, topic) == 0);
				await().atMost(WAIT)
					.untilAsserted(() -> assertThat(
							lagging(cluster, "g-" + topic, topic, Names.retry(topic, "1s"), Names.retry(topic, "2s")))
						.isEmpty());
				await().atMost(WAIT)
					.untilAsserted(() -> assertThat(lagging(cluster, "g-" + topic + ".dlq-handler", Names.dlq(topic)))
						.isEmpty());

				ListenerRegistry listeners = app.getBean(ListenerRegistry.class);
				RetryContainer container = listeners.container("it-" + topic);
				assertThat(listeners.isRunning()).isTrue();
				assertThat(container).isNotNull();
				assertThat(container.isRunning()).isTrue();
				assertThat(locks.registries()).allSatisfy((registry) -> assertThat(registry.hasCaughtUp()).isTrue());
				ResilienceHealthIndicator health = app.getBean(ResilienceHealthIndicator.class);
				await().atMost(WAIT)
					.until(() -> health.health(true).getStatus().equals(Status.UP)
							&& !health.health(true).getDetails().containsKey("warnings"));
				logger.info("Outage run of " + topic + ": " + script.journal().size() + " attempts, "
						+ deadLetters.size() + " dead letters");
			}
			finally {
				outage.shutdownNow();
			}
		}
	}

	/**
	 * Records {@code from} to {@code to} (exclusive) of every key, with their fate
	 * written into the script: every fourth fails transiently (once or twice), one in
	 * eleven fails for good.
	 */
	private static List<String[]> records(int from, int to, Script script, Map<String, List<String>> producedByKey,
			Set<String> permanent) {
		List<String[]> records = new ArrayList<>();
		for (int i = from; i < to; i++) {
			for (int k = 0; k < KEYS; k++) {
				String key = "k" + k;
				String value = key + "-" + i;
				int n = k * 31 + i;
				if (n % 11 == 5) {
					script.failPermanently(value);
					permanent.add(value);
				}
				else if (n % 4 == 1) {
					script.failTransiently(value, 1 + (n / 4) % 2);
				}
				producedByKey.computeIfAbsent(key, (x) -> new ArrayList<>()).add(value);
				records.add(new String[] { key, value });
			}
		}
		return records;
	}

	/**
	 * Sends records with a producer that waits out the outage: for metadata and for
	 * acknowledgements, longer than the broker stays away.
	 */
	private static void sendAll(KafkaCluster cluster, String topic, List<String[]> keyValues) {
		int patience = (int) OUTAGE.plus(WAIT).toMillis();
		Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(),
				ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.MAX_BLOCK_MS_CONFIG, patience,
				ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, patience);
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
				new StringSerializer())) {
			List<Future<RecordMetadata>> sent = new ArrayList<>();
			for (String[] kv : keyValues) {
				sent.add(producer.send(new ProducerRecord<>(topic, kv[0], kv[1])));
			}
			for (Future<RecordMetadata> future : sent) {
				future.get(patience, TimeUnit.MILLISECONDS);
			}
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not send to '" + topic + "'", ex);
		}
	}

	private static ConfigurableApplicationContext start(KafkaCluster cluster, String topic) {
		return new SpringApplicationBuilder(TestApplication.class).web(WebApplicationType.NONE)
			.properties("test.topic=" + topic, "spring.kafka.consumer.group-id=g-" + topic,
					"spring.kafka.consumer.auto-offset-reset=earliest", "kafka.resilience.instance-id=it-" + topic,
					"kafka.resilience.retry.delays=1s,2s",
					// attempts made while the broker is away count against a record's
					// failures but not
					// against its retry.count: enough attempts that no record runs out of
					// them
					"kafka.resilience.retry.max-attempts=10", "kafka.resilience.consumer.commit-interval=200ms",
					"spring.main.banner-mode=off")
			// an argument: it wins over the spring.kafka.bootstrap-servers system
			// property that
			// the JVM's shared in-process broker sets
			.run("--spring.kafka.bootstrap-servers=" + cluster.bootstrapServers());
	}

	private static int liveLocks(LockCoordinator locks) {
		return locks.registries().stream().mapToInt((registry) -> registry.size()).sum();
	}

	/**
	 * Values neither handled successfully nor, when they fail for good, dead-lettered.
	 */
	private static List<String> unfinished(Script script, Map<String, List<String>> producedByKey,
			Set<String> permanent, Set<String> deadLetters) {
		return producedByKey.values()
			.stream()
			.flatMap(List::stream)
			.filter((value) -> permanent.contains(value) ? !deadLetters.contains(value) : !script.succeeded(value))
			.toList();
	}

	private static Set<String> deadLetters(KafkaCluster cluster, String topic) {
		return cluster.readAll(Names.dlq(topic))
			.stream()
			.map((record) -> new String(record.value(), StandardCharsets.UTF_8))
			.collect(Collectors.toSet());
	}

	/**
	 * Partitions of {@code topics} on which {@code group}'s committed offset is not yet
	 * the end offset, with both.
	 */
	private static Map<TopicPartition, String> lagging(KafkaCluster cluster, String group, String... topics)
			throws Exception {
		try (Admin admin = Admin
			.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers()))) {
			Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
			for (String name : topics) {
				for (int p = 0; p < 3; p++) {
					latest.put(new TopicPartition(name, p), OffsetSpec.latest());
				}
			}
			Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
				.partitionsToOffsetAndMetadata()
				.get(30, TimeUnit.SECONDS);
			Map<TopicPartition, String> lagging = new LinkedHashMap<>();
			admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).forEach((partition, end) -> {
				OffsetAndMetadata offset = committed.get(partition);
				long at = (offset != null) ? offset.offset() : 0;
				if (at != end.offset()) {
					lagging.put(partition, "committed " + at + ", end " + end.offset());
				}
			});
			return lagging;
		}
	}

}
