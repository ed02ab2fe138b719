package io.github.kafkaresilience.it;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockCodec;
import io.github.kafkaresilience.internal.metrics.LockMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sync barrier at scale: a partition whose lock partition holds 200,000 lock records
 * (a busy lock topic that compaction has not cleaned yet) stays paused after its
 * assignment until the lock tailer has read all of them, while the consumer keeps polling
 * and so keeps its group membership, although the catch-up takes longer than
 * {@code max.poll.interval.ms}. Its records then run on a current view of the locks: a
 * record of a key whose lock is among the last ones read becomes a follower instead of
 * overtaking the key's earlier record. Other partitions do not wait for it.
 */
@UsesSharedBroker
class SyncBarrierScaleTests {

	private static final Log logger = LogFactory.getLog(SyncBarrierScaleTests.class);

	private static final int PARTITIONS = 3;

	/** The partition whose lock partition is big. */
	private static final int BIG = 1;

	/** Lock records of other keys in the big lock partition: locks and their releases. */
	private static final int FILLER = 200_000;

	/** How many of them precede the lock of the locked key. */
	private static final int LOCK_AT = FILLER - 2_000;

	private static final Duration MAX_POLL_INTERVAL = Duration.ofSeconds(3);

	/**
	 * How long after it is written the carrier of H comes due, beyond its stage's 1 s:
	 * longer than the catch-up of the big lock partition, which took about 20 s.
	 */
	private static final Duration H_DUE_IN = Duration.ofSeconds(40);

	@Test
	void aPartitionStaysPausedUntilItsBigLockPartitionIsReadWhileTheConsumerKeepsItsGroupMembership() throws Exception {
		String topic = SharedBroker.newTopic(PARTITIONS);
		String stageTopic = Names.retry(topic, "1s");
		String lockTopic = Names.locks(topic);
		SharedBroker.createTopic(stageTopic, PARTITIONS, Map.of());
		SharedBroker.createTopic(lockTopic, PARTITIONS,
				Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
		String locked = SharedBroker.keyIn(BIG, PARTITIONS, "locked");
		String free = SharedBroker.keyIn(BIG, PARTITIONS, "free");
		String elsewhere = SharedBroker.keyIn(0, PARTITIONS, "elsewhere");
		Script script = Script.forTopic(topic);

		// before this instance starts, record H of 'locked' failed on another instance: H
		// was
		// committed on the main topic, waits in stage 1, and its lock is among the last
		// of 200k
		SharedBroker.send(new ProducerRecord<>(topic, BIG, locked.getBytes(), "H".getBytes()));
		commit("g-" + topic, new TopicPartition(topic, BIG), 1);
		String lockId = UUID.randomUUID().toString();
		FailureInfo failure = ProtocolHeaders.failure(new IllegalStateException("H failed"), false, Instant.now());
		// H comes due well after the barriers open, so that F is routed while H's lock is
		// live
		// whichever of the instance's two consumers (main topic, retry topic) opens its
		// barrier first
		ProducerRecord<byte[], byte[]> carrier = new ProducerRecord<>(stageTopic, BIG,
				System.currentTimeMillis() + H_DUE_IN.toMillis(), locked.getBytes(), "H".getBytes(), ProtocolHeaders
					.forHop(new RecordHeaders(), true, topic, BIG, 0, 1, lockId, failure, null, Names.owner(topic)));
		SharedBroker.send(carrier);
		Lock lock = new Lock(lockId, Bytes.wrap(locked.getBytes()), BIG, 0, 1, 0L, null, 1, failure, Instant.now());
		long started = System.nanoTime();
		writeLockPartition(topic, lock);
		logger.info("Wrote " + (FILLER + 1) + " lock records in "
				+ Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms");

		// F follows H; E (same partition, free key) and A (another partition) are
		// unrelated
		SharedBroker.sendAll(topic,
				List.of(new String[] { free, "E" }, new String[] { locked, "F" }, new String[] { elsewhere, "A" }));

		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		try (ConfigurableApplicationContext context = TestApplication.start(ObservedApplication.class, topic,
				"kafka.resilience.retry.delays=1s",
				// H waits for its due time in memory rather than parked
				"kafka.resilience.consumer.park-after=5m",
				// the startup check of the ladder's owners reads the whole lock topic
				// before the consumer
				// starts; without it the catch-up happens behind the barrier, as after a
				// rebalance
				"kafka.resilience.topics.check-owner-at-startup=false",
				"spring.kafka.consumer.properties.max.poll.interval.ms=" + MAX_POLL_INTERVAL.toMillis(),
				// the tailers read with these settings too: small fetches make the
				// catch-up slow
				"spring.kafka.consumer.properties.max.partition.fetch.bytes=1024",
				"spring.kafka.consumer.properties.fetch.max.bytes=1024")) {
			context.getBean(LockMetrics.class).bindTo(meters);
			Assignments assignments = context.getBean(Assignments.class);
			BarrierLog barriers = context.getBean(BarrierLog.class);
			TopicPartition big = new TopicPartition(topic, BIG);

			await().atMost(Duration.ofSeconds(90))
				.until(() -> barriers.hasOpened(big) && script.succeeded("F") && script.succeeded("E")
						&& script.succeeded("A"));

			Duration waited = barriers.waited(big);
			Instant opened = barriers.opened(big);
			double timerMax = meters.get("kafka.resilience.barrier.wait")
				.tag("topic", topic)
				.timer()
				.max(TimeUnit.MILLISECONDS);
			logger.info("Barrier of " + big + " opened after " + waited.toMillis()
					+ " ms ('kafka.resilience.barrier.wait' max " + timerMax + " ms); assignments of " + big + ": "
					+ assignments.count(big));

			// one assignment, never revoked or lost: the membership survived the long
			// wait...
			assertThat(assignments.count(big)).isEqualTo(1);
			assertThat(assignments.revokedOrLost()).isEmpty();
			// ...which outlasted max.poll.interval.ms, so blocking on it would have cost
			// the membership
			assertThat(waited).isGreaterThan(MAX_POLL_INTERVAL);
			assertThat(timerMax).isGreaterThanOrEqualTo(waited.toMillis());

			// nothing of the paused partitions (the main topic's and the stage's, each
			// behind a
			// barrier of its consumer on the same lock partition) ran before the tailer
			// had caught up
			assertThat(script.journal()).filteredOn((attempt) -> !attempt.key().equals(elsewhere))
				.extracting(Script.Attempt::value)
				.containsExactlyInAnyOrder("E", "H", "F");
			assertThat(script.journal()).filteredOn((attempt) -> !attempt.key().equals(elsewhere))
				.allSatisfy((attempt) -> assertThat(attempt.at())
					.isAfterOrEqualTo(barriers.opened(new TopicPartition(attempt.topic(), BIG))));
			// F saw H's lock: it became a follower and ran after H, from the retry topic
			assertThat(script.firstSuccesses(locked)).containsExactly("H", "F");
			Script.Attempt f = script.journal().stream().filter((a) -> a.value().equals("F")).findFirst().orElseThrow();
			assertThat(f.topic()).isEqualTo(stageTopic);
			assertThat(f.retryCount()).isZero();
			// another partition did not wait for this one
			Script.Attempt a = script.journal()
				.stream()
				.filter((at) -> at.value().equals("A"))
				.findFirst()
				.orElseThrow();
			assertThat(a.at()).isBefore(opened);
		}
	}

	/**
	 * Writes the filler (locks of other keys, each released later) with {@code lock} near
	 * the end.
	 */
	private static void writeLockPartition(String topic, Lock lock) throws Exception {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers());
		config.put(ProducerConfig.LINGER_MS_CONFIG, 20);
		// small batches: a fetch returns at least one whole batch, so with the
		// application's
		// 1 KB fetches the tailer needs one round trip per batch, like on a slow link
		config.put(ProducerConfig.BATCH_SIZE_CONFIG, 2 * 1024);
		config.put(ProducerConfig.ACKS_CONFIG, "1");
		try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(),
				new ByteArraySerializer())) {
			List<Future<RecordMetadata>> sent = new ArrayList<>();
			int block = 1_000;
			Instant now = Instant.now();
			int written = 0;
			for (int first = 0; written < FILLER; first += block) {
				List<Lock> locks = new ArrayList<>();
				for (int i = first; i < first + block; i++) {
					Bytes key = Bytes.wrap(("other-" + i).getBytes());
					locks.add(new Lock(UUID.randomUUID().toString(), key, BIG, 1_000 + i, 1, (long) i, null, 1, null,
							now));
				}
				for (Lock other : locks) {
					sent.add(producer.send(lockRecord(topic, other, false)));
				}
				for (Lock other : locks) {
					sent.add(producer.send(lockRecord(topic, other, true)));
				}
				written += 2 * block;
				if (written == LOCK_AT) {
					sent.add(producer.send(lockRecord(topic, lock, false)));
				}
			}
			producer.flush();
			for (Future<RecordMetadata> future : sent) {
				future.get(30, TimeUnit.SECONDS);
			}
		}
	}

	private static ProducerRecord<byte[], byte[]> lockRecord(String topic, Lock lock, boolean release) {
		return new ProducerRecord<>(Names.locks(topic), BIG, LockCodec.encodeId(lock.id()),
				release ? null : LockCodec.encode(lock),
				LockCodec.headers(lock.key(), "previous-instance", Names.owner(topic)));
	}

	private static void commit(String group, TopicPartition partition, long offset) throws Exception {
		try (Admin admin = Admin
			.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers()))) {
			admin.alterConsumerGroupOffsets(group, Map.of(partition, new OffsetAndMetadata(offset)))
				.all()
				.get(30, TimeUnit.SECONDS);
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TestApplication.ScriptedListener.class)
	static class ObservedApplication {

		@Bean
		Assignments assignments() {
			return new Assignments();
		}

		@Bean
		BarrierLog barrierLog() {
			return new BarrierLog();
		}

	}

	/** The application's own rebalance listener: counts each partition's assignments. */
	static class Assignments implements ConsumerAwareRebalanceListener {

		private final Map<TopicPartition, AtomicInteger> assigned = new ConcurrentHashMap<>();

		private final List<TopicPartition> revokedOrLost = new CopyOnWriteArrayList<>();

		@Override
		public void onPartitionsAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
			partitions.forEach((tp) -> this.assigned.computeIfAbsent(tp, (k) -> new AtomicInteger()).incrementAndGet());
		}

		@Override
		public void onPartitionsRevokedBeforeCommit(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
			this.revokedOrLost.addAll(partitions);
		}

		@Override
		public void onPartitionsLost(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
			this.revokedOrLost.addAll(partitions);
		}

		int count(TopicPartition partition) {
			AtomicInteger count = this.assigned.get(partition);
			return (count != null) ? count.get() : 0;
		}

		List<TopicPartition> revokedOrLost() {
			return List.copyOf(this.revokedOrLost);
		}

	}

	/** When each partition's barrier opened, and after how long. */
	static class BarrierLog implements ResilienceObserver {

		private record Opened(Instant at, Duration waited) {
		}

		private final Map<TopicPartition, Opened> opened = new ConcurrentHashMap<>();

		@Override
		public void barrierOpened(String listenerId, String group, TopicPartition partition, Duration waited) {
			this.opened.put(partition, new Opened(Instant.now(), waited));
		}

		boolean hasOpened(TopicPartition partition) {
			return this.opened.containsKey(partition);
		}

		Instant opened(TopicPartition partition) {
			return this.opened.get(partition).at();
		}

		Duration waited(TopicPartition partition) {
			return this.opened.get(partition).waited();
		}

	}

}
