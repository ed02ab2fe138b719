package io.github.kafkaresilience.it;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockCodec;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Memory stays bounded when a stage holds far more waiting records than the in-flight
 * bound: retries due later than {@code park-after} are parked (only their offsets are
 * kept, as runs) and read again from the stage shortly before they are due.
 */
@UsesSharedBroker
class BoundedMemoryTests {

	private static final Log logger = LogFactory.getLog(BoundedMemoryTests.class);

	private static final int WAITING = 100_000;

	private static final int BOUND = 1_000;

	@Test
	void aStageWithAHundredThousandWaitingRecordsHoldsNoMoreThanTheBoundAndAFollowerOfAnotherKeyRunsAtOnce()
			throws Exception {
		String topic = SharedBroker.newTopic(1);
		String stage = Names.retry(topic, "1h");
		String locks = Names.locks(topic);
		SharedBroker.createTopic(stage, 1, Map.of());
		SharedBroker.createTopic(locks, 1,
				Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
		Script script = Script.forTopic(topic);

		// 100,000 records of 100,000 keys failed once and wait an hour in stage 1; behind
		// them,
		// a follower of key 'f' whose predecessor has finished: it is its key's head and
		// runs at once
		long started = System.nanoTime();
		writeStage(topic, stage, locks);
		logger.info("Wrote " + WAITING + " waiting records and their locks in "
				+ Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms");

		try (ConfigurableApplicationContext context = TestApplication.start(topic, "kafka.resilience.retry.delays=1h",
				"kafka.resilience.consumer.max-in-flight-per-partition=" + BOUND,
				"kafka.resilience.consumer.park-after=10s")) {
			RetryContainer container = context.getBean(ListenerRegistry.class).container("it-" + topic);
			AtomicLong mostHeld = new AtomicLong();
			await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(5)).until(() -> {
				RetryContainer.Load load = container.load();
				mostHeld.accumulateAndGet(load.busiestPartitionInFlight(), Math::max);
				return script.succeeded("F") && load.parked() == WAITING;
			});
			Script.Attempt follower = script.journal().get(0);
			logger.info("Follower ran "
					+ Duration.between(Instant.ofEpochMilli(follower.recordTimestamp()), follower.at()).toMillis()
					+ " ms after it was written; most records held " + mostHeld + "; load " + container.load());

			// only the follower ran: the waiting records are not due for an hour
			assertThat(script.journal()).extracting(Script.Attempt::value).containsExactly("F");
			assertThat(follower.topic()).isEqualTo(stage);
			// every waiting record is parked, none is held beyond the bound, and none is
			// lost:
			// their offsets keep the committed offset of the stage at the first of them
			assertThat(mostHeld.get()).isLessThanOrEqualTo(BOUND);
			assertThat(container.load().parked()).isEqualTo(WAITING);
			assertThat(container.load().busiestKeyDepth()).isEqualTo(1);
			assertThat(SharedBroker.committed("g-" + topic, stage, 0)).isIn(-1L, 0L);
		}
	}

	@Test
	void parkedRetriesAreReadAgainWhenDueAndEveryKeyKeepsItsOrder() {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic);
		List<String[]> records = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			for (int k = 0; k < 100; k++) {
				records.add(new String[] { "k" + k, "k" + k + "-" + i });
			}
		}
		// each key's first record fails once: 100 heads wait 4 s in stage 1, 1,900
		// followers behind them
		for (int k = 0; k < 100; k++) {
			script.failTransiently("k" + k + "-0", 1);
		}
		int bound = 50;
		try (ConfigurableApplicationContext context = TestApplication.start(topic, "kafka.resilience.retry.delays=4s",
				"kafka.resilience.consumer.max-in-flight-per-partition=" + bound,
				"kafka.resilience.consumer.park-after=2s")) {
			RetryContainer container = context.getBean(ListenerRegistry.class).container("it-" + topic);
			SharedBroker.sendAll(topic, records);
			AtomicLong mostHeld = new AtomicLong();
			AtomicLong mostParked = new AtomicLong();
			await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(5)).until(() -> {
				RetryContainer.Load load = container.load();
				mostHeld.accumulateAndGet(load.busiestPartitionInFlight(), Math::max);
				mostParked.accumulateAndGet(load.parked(), Math::max);
				return script.firstSuccessesByKey().values().stream().mapToInt(List::size).sum() == records.size();
			});
			logger.info("Most records held by a partition " + mostHeld + ", most parked " + mostParked);

			Map<String, List<String>> byKey = script.firstSuccessesByKey();
			for (int k = 0; k < 100; k++) {
				int key = k;
				assertThat(byKey.get("k" + k))
					.containsExactlyElementsOf(IntStream.range(0, 20).mapToObj((i) -> "k" + key + "-" + i).toList());
			}
			// retries were parked, never held beyond the bound, and none ran before it
			// was due
			assertThat(mostParked.get()).isGreaterThan(bound);
			assertThat(mostHeld.get()).isLessThanOrEqualTo(bound);
			assertThat(script.journal()).filteredOn((attempt) -> attempt.retryCount() > 0)
				.hasSize(100)
				.allSatisfy((attempt) -> assertThat(attempt.at())
					.isAfterOrEqualTo(Instant.ofEpochMilli(attempt.recordTimestamp() + 4_000)));
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
				assertThat(OrderedRetryIntegrationTests.liveLocks(context, topic)).isZero();
				assertThat(container.load().parked()).isZero();
				assertThat(SharedBroker.committed("g-" + topic, Names.retry(topic, "4s"), 0))
					.isEqualTo(SharedBroker.readAll(Names.retry(topic, "4s")).size());
			});
		}
	}

	/**
	 * Writes what a failed run leaves behind: the waiting records, their locks, and the
	 * follower.
	 */
	private static void writeStage(String topic, String stage, String locks) throws Exception {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers());
		config.put(ProducerConfig.LINGER_MS_CONFIG, 20);
		config.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
		Instant now = Instant.now();
		FailureInfo failure = ProtocolHeaders.failure(new IllegalStateException("downstream unavailable"), false, now);
		byte[] payload = new byte[512];
		Arrays.fill(payload, (byte) 'x');
		try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(),
				new ByteArraySerializer())) {
			List<Future<RecordMetadata>> sent = new ArrayList<>();
			for (int i = 0; i <= WAITING; i++) {
				boolean follower = i == WAITING;
				String key = follower ? "f" : "w-" + i;
				byte[] value = follower ? "F".getBytes() : payload;
				int retryCount = follower ? 0 : 1;
				String lockId = UUID.randomUUID().toString();
				Lock lock = new Lock(lockId, Bytes.wrap(key.getBytes()), 0, i, 1, (long) i, null, retryCount,
						follower ? null : failure, now);
				sent.add(
						producer.send(new ProducerRecord<>(locks, 0, LockCodec.encodeId(lockId), LockCodec.encode(lock),
								LockCodec.headers(lock.key(), "previous-instance", Names.owner(topic)))));
				sent.add(producer.send(new ProducerRecord<>(stage, 0, key.getBytes(), value,
						ProtocolHeaders.forHop(new RecordHeaders(), true, topic, 0, i, retryCount, lockId,
								follower ? null : failure, null, Names.owner(topic)))));
				if (sent.size() >= 20_000) {
					awaitAll(sent);
				}
			}
			awaitAll(sent);
		}
	}

	private static void awaitAll(List<Future<RecordMetadata>> sent) throws Exception {
		for (Future<RecordMetadata> future : sent) {
			future.get(60, TimeUnit.SECONDS);
		}
		sent.clear();
	}

}
