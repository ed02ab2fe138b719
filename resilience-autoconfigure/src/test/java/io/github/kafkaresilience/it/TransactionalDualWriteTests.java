package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import io.github.kafkaresilience.internal.container.offsets.CommittableOffsets;
import io.github.kafkaresilience.internal.container.transactions.TransactionalWrites;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.internal.ladder.FaultInjection;
import io.github.kafkaresilience.internal.listener.OrderedRetryComponentFactory;
import io.github.kafkaresilience.internal.ladder.Step;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.LockStore;
import io.github.kafkaresilience.internal.lock.Position;
import io.github.kafkaresilience.internal.support.ConsumerClients;
import io.github.kafkaresilience.internal.support.ProducerClients;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Dual write in {@code transaction} mode (docs/PROTOCOL.md, rule 9): a move's lock
 * writes, its publish and the source offset commit are one Kafka transaction. What a
 * failed or interrupted move wrote is never seen by read-committed readers, and an
 * instance that was replaced cannot commit.
 */
@UsesSharedBroker
class TransactionalDualWriteTests {

	static final AtomicInteger failuresAfterLockWrite = new AtomicInteger();

	@Test
	void aKeyClimbsTheLadderInOrderAndEveryMoveIsCommittedWithItsSourceOffset() throws Exception {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic).failTransiently("A", 2);
		try (ConfigurableApplicationContext context = TestApplication.start(topic,
				"kafka.resilience.dual-write=transaction", "kafka.resilience.retry.delays=1s,2s")) {
			SharedBroker.send(topic, "k", "A");
			SharedBroker.send(topic, "k", "B");
			SharedBroker.send(topic, "k", "C");
			SharedBroker.send(topic, "other", "X");
			await().atMost(Duration.ofSeconds(60))
				.untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("A", "B", "C"));
			assertThat(
					script.journal().stream().filter((a) -> a.value().equals("A")).map(Script.Attempt::topic).toList())
				.containsExactly(topic, Names.retry(topic, "1s"), Names.retry(topic, "2s"));
			assertThat(script.firstSuccesses("other")).containsExactly("X");
			await().atMost(Duration.ofSeconds(30)).until(() -> liveLocks(context, topic) == 0);
			// A moved twice and each of B and C was forwarded behind it: all in committed
			// transactions
			assertThat(values(SharedBroker.readAll(Names.retry(topic, "1s"), true))).containsExactly("A", "B", "C");
			int partition = SharedBroker.readAll(topic)
				.stream()
				.filter((r) -> value(r).equals("A"))
				.findFirst()
				.orElseThrow()
				.partition();
			await().atMost(Duration.ofSeconds(30))
				.untilAsserted(() -> assertThat(committed("g-" + topic, new TopicPartition(topic, partition)))
					.isEqualTo(SharedBroker.readAll(topic).stream().filter((r) -> r.partition() == partition).count()));
		}
	}

	@Test
	void aPublishFailingAfterTheLockWriteAbortsBothAndTheRecordIsDeliveredAgain() {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic).failTransiently("A", 2);
		failuresAfterLockWrite.set(1);
		try (ConfigurableApplicationContext context = TestApplication.start(FaultyApplication.class, topic,
				"kafka.resilience.dual-write=transaction", "kafka.resilience.retry.delays=1s")) {
			SharedBroker.send(topic, "k", "A");
			SharedBroker.send(topic, "k", "B");
			await().atMost(Duration.ofSeconds(60))
				.untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("A", "B"));
			assertThat(failuresAfterLockWrite.get()).as("the injected failure happened").isLessThanOrEqualTo(0);
			// the aborted move ran A's handler first; its redelivery ran it again on the
			// main topic
			assertThat(
					script.journal().stream().filter((a) -> a.value().equals("A")).map(Script.Attempt::topic).toList())
				.containsExactly(topic, topic, Names.retry(topic, "1s"));
			await().atMost(Duration.ofSeconds(30)).until(() -> liveLocks(context, topic) == 0);
			assertThat(lockIds(SharedBroker.readAll(Names.locks(topic), true)))
				.as("committed locks: A's from its second move and its follower B's, none from the aborted move")
				.hasSize(2);
		}
	}

	@Test
	void aReplacedInstanceCannotCommitItsWrites() throws Exception {
		String topic = SharedBroker.newTopic(1);
		SharedBroker.createTopic(Names.locks(topic), 1, Map.of("cleanup.policy", "compact"));
		SharedBroker.createTopic(Names.retry(topic, "1s"), 1, Map.of());
		Map<String, Object> client = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers());
		LockCoordinator coordinator = new LockCoordinator("fencing", ConsumerClients.of(client),
				ProducerClients.of(client), Duration.ofMillis(100), Duration.ofSeconds(30));
		try (TransactionalWrites old = new TransactionalWrites(ProducerClients.of(client), "tx-" + topic,
				Duration.ofSeconds(30), FaultInjection.NONE);
				TransactionalWrites replacement = new TransactionalWrites(ProducerClients.of(client), "tx-" + topic,
						Duration.ofSeconds(30), FaultInjection.NONE)) {
			LockRegistry registry = coordinator.registry(topic, Names.locks(topic), 1, Names.owner(topic));
			old.execute(delivery(topic, 0), () -> move(old, registry, topic, "old-1", 0), new NoOffsets(null));
			// the same instance starts again (same transactional id) while the old one
			// lives on
			replacement.execute(delivery(topic, 1), () -> move(replacement, registry, topic, "new-1", 1),
					new NoOffsets(null));
			assertThatExceptionOfType(KafkaException.class).isThrownBy(() -> old.execute(delivery(topic, 2),
					() -> move(old, registry, topic, "old-2", 2), new NoOffsets(null)));
			assertThat(lockIds(SharedBroker.readAll(Names.locks(topic), true))).containsExactlyInAnyOrder("old-1",
					"new-1");
			assertThat(values(SharedBroker.readAll(Names.retry(topic, "1s"), true))).containsExactlyInAnyOrder("v0",
					"v1");
			assertThat(registry.find("old-2")).as("an aborted write never reaches the lock table").isNull();
		}
		finally {
			coordinator.destroy();
		}
	}

	@Test
	void anInstanceWhosePartitionsWentToAnotherCannotCommit() throws Exception {
		String topic = SharedBroker.newTopic(1);
		SharedBroker.createTopic(Names.locks(topic), 1, Map.of("cleanup.policy", "compact"));
		SharedBroker.createTopic(Names.retry(topic, "1s"), 1, Map.of());
		String group = "g-" + topic;
		ConsumerGroupMetadata before = joinAndLeave(group, topic);
		joinAndLeave(group, topic); // the partition went to another member: a new
									// generation
		Map<String, Object> client = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers());
		LockCoordinator coordinator = new LockCoordinator("zombie", ConsumerClients.of(client),
				ProducerClients.of(client), Duration.ofMillis(100), Duration.ofSeconds(30));
		try (TransactionalWrites zombie = new TransactionalWrites(ProducerClients.of(client), "tx-" + topic,
				Duration.ofSeconds(30), FaultInjection.NONE)) {
			LockRegistry registry = coordinator.registry(topic, Names.locks(topic), 1, Names.owner(topic));
			assertThatExceptionOfType(KafkaException.class).isThrownBy(() -> zombie.execute(delivery(topic, 0),
					() -> move(zombie, registry, topic, "zombie-1", 0), new NoOffsets(before)));
			assertThat(SharedBroker.readAll(Names.locks(topic), true)).isEmpty();
			assertThat(SharedBroker.readAll(Names.retry(topic, "1s"), true)).isEmpty();
			assertThat(SharedBroker.readAll(Names.retry(topic, "1s"), false)).as("the write was made, then aborted")
				.hasSize(1);
			assertThat(committed(group, new TopicPartition(topic, 0))).isEqualTo(-1);
		}
		finally {
			coordinator.destroy();
		}
	}

	@Test
	void aRestartedInstanceAbortsWhatItsPredecessorLeftOpenAsItStartsBeforeItWritesAnything() throws Exception {
		String topic = SharedBroker.newTopic(1);
		String retry = Names.retry(topic, "1s");
		SharedBroker.createTopic(retry, 1, Map.of());
		TopicPartition retryPartition = new TopicPartition(retry, 0);
		Map<String, Object> client = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers());
		try (TransactionalWrites predecessor = new TransactionalWrites(ProducerClients.of(client), "tx-" + topic,
				Duration.ofSeconds(30), FaultInjection.NONE);
				TransactionalWrites successor = new TransactionalWrites(ProducerClients.of(client), "tx-" + topic,
						Duration.ofSeconds(30), FaultInjection.NONE)) {
			// a move whose writes never settle: its transaction stays open, as when the
			// instance dies mid-move
			predecessor.runStep(delivery(topic, 0), () -> {
				predecessor.publisher().publish(retry, 0, "k".getBytes(), "v0".getBytes(), new RecordHeaders());
				return Step.settling(new CompletableFuture<>());
			}, new NoOffsets(null));
			assertThat(SharedBroker.readAll(retry, false)).hasSize(1);
			assertThat(committedEnd(retryPartition)).as("read-committed readers stop at the open transaction").isZero();
			successor.start();
			await().atMost(Duration.ofSeconds(15))
				.untilAsserted(() -> assertThat(committedEnd(retryPartition)).as("the open transaction was aborted")
					.isEqualTo(SharedBroker.readAll(retry, false).size() + 1L));
			assertThat(SharedBroker.readAll(retry, true)).isEmpty();
		}
	}

	/**
	 * Transactions of several instances interleave in a lock partition: a lock committed
	 * behind another instance's open transaction is past the partition's last stable
	 * offset, though its record in the retry topic can already be read. A catch-up of the
	 * lock tailer must not end before that lock is in the table, or the record is taken
	 * for a stale copy of released work and skipped, and its key waits behind a lock
	 * nothing carries.
	 */
	@Test
	void aLockCommittedBehindAnotherInstancesOpenTransactionIsInTheTableOnceTheTailerCaughtUp() throws Exception {
		String topic = SharedBroker.newTopic(1);
		SharedBroker.createTopic(Names.locks(topic), 1, Map.of("cleanup.policy", "compact"));
		SharedBroker.createTopic(Names.retry(topic, "1s"), 1, Map.of());
		Map<String, Object> client = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers());
		LockCoordinator writer = new LockCoordinator("writer", ConsumerClients.of(client), ProducerClients.of(client),
				Duration.ofMillis(100), Duration.ofSeconds(30));
		LockCoordinator reader = new LockCoordinator("reader", ConsumerClients.of(client), ProducerClients.of(client),
				Duration.ofMillis(100), Duration.ofSeconds(30));
		try (TransactionalWrites ahead = new TransactionalWrites(ProducerClients.of(client), "tx-ahead-" + topic,
				Duration.ofSeconds(30), FaultInjection.NONE);
				TransactionalWrites aheadRestarted = new TransactionalWrites(ProducerClients.of(client),
						"tx-ahead-" + topic, Duration.ofSeconds(30), FaultInjection.NONE);
				TransactionalWrites behind = new TransactionalWrites(ProducerClients.of(client), "tx-behind-" + topic,
						Duration.ofSeconds(30), FaultInjection.NONE)) {
			LockRegistry written = writer.registry(topic, Names.locks(topic), 1, Names.owner(topic));
			LockRegistry view = reader.registry(topic, Names.locks(topic), 1, Names.owner(topic));
			assertThat(view.catchUp(0)).succeedsWithin(Duration.ofSeconds(30));
			// an instance's move that has not settled yet: its transaction stays open
			ahead.runStep(delivery(topic, 0), () -> {
				ahead.locks(written)
					.write(Lock.moving("ahead-1", Bytes.wrap("a".getBytes()), 0, 0, 1, new Position(0, 0), 1, null,
							Instant.now()));
				return Step.settling(new CompletableFuture<>());
			}, new NoOffsets(null));
			await().atMost(Duration.ofSeconds(30))
				.until(() -> SharedBroker.readAll(Names.locks(topic), false).size() == 1);
			// another instance's move, committed behind it: its copy is readable at once
			behind.execute(delivery(topic, 1), () -> move(behind, written, topic, "behind-1", 1), new NoOffsets(null));
			await().atMost(Duration.ofSeconds(30))
				.untilAsserted(() -> assertThat(values(SharedBroker.readAll(Names.retry(topic, "1s"), true)))
					.containsExactly("v1"));

			CompletableFuture<Lock> found = view.catchUp(0).thenApply((caughtUp) -> view.find("behind-1"));
			await("a catch-up ending without the lock committed behind the open transaction")
				.during(Duration.ofMillis(500))
				.atMost(Duration.ofSeconds(5))
				.until(() -> !found.isDone() || found.join() != null);
			aheadRestarted.start(); // the open transaction is aborted as its instance
									// starts again
			assertThat(found).succeedsWithin(Duration.ofSeconds(30))
				.as("the lock committed behind the open transaction")
				.isNotNull();
			assertThat(view.find("ahead-1")).as("an aborted write never reaches the lock table").isNull();
		}
		finally {
			writer.destroy();
			reader.destroy();
		}
	}

	/**
	 * The end offset of a partition for read-committed readers: its last stable offset.
	 */
	private static long committedEnd(TopicPartition partition) throws Exception {
		try (Admin admin = Admin
			.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers()))) {
			return admin
				.listOffsets(Map.of(partition, OffsetSpec.latest()),
						new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
				.partitionResult(partition)
				.get(30, TimeUnit.SECONDS)
				.offset();
		}
	}

	/**
	 * A move as the router makes it: write the lock, publish the record, confirm the
	 * lock.
	 */
	private static Step move(TransactionalWrites writes, LockRegistry registry, String topic, String lockId,
			long offset) {
		LockStore locks = writes.locks(registry);
		Lock moving = Lock.moving(lockId, Bytes.wrap("k".getBytes()), 0, offset, 1, new Position(0, offset), 1, null,
				Instant.now());
		locks.write(moving);
		long at = writes.publisher()
			.publish(Names.retry(topic, "1s"), 0, "k".getBytes(), ("v" + offset).getBytes(), new RecordHeaders());
		locks.write(locks.find(lockId).confirmedAt(at, Instant.now()));
		return Step.done();
	}

	private static Delivery delivery(String topic, long offset) {
		return new Delivery(topic, 0, offset, System.currentTimeMillis(), "k".getBytes(), ("v" + offset).getBytes(),
				new RecordHeaders());
	}

	private static ConsumerGroupMetadata joinAndLeave(String group, String topic) {
		Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers(),
				ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer())) {
			consumer.subscribe(List.of(topic));
			await().atMost(Duration.ofSeconds(30)).until(() -> {
				consumer.poll(Duration.ofMillis(100));
				return !consumer.assignment().isEmpty();
			});
			return consumer.groupMetadata();
		}
	}

	private static long committed(String group, TopicPartition partition) throws Exception {
		try (Admin admin = Admin
			.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers()))) {
			OffsetAndMetadata offset = admin.listConsumerGroupOffsets(group)
				.partitionsToOffsetAndMetadata()
				.get(30, TimeUnit.SECONDS)
				.get(partition);
			return (offset != null) ? offset.offset() : -1;
		}
	}

	private static Set<String> lockIds(List<ConsumerRecord<byte[], byte[]>> records) {
		return records.stream().map((r) -> new String(r.key(), StandardCharsets.UTF_8)).collect(Collectors.toSet());
	}

	private static List<String> values(List<ConsumerRecord<byte[], byte[]>> records) {
		return records.stream().map(TransactionalDualWriteTests::value).toList();
	}

	private static String value(ConsumerRecord<byte[], byte[]> record) {
		return new String(record.value(), StandardCharsets.UTF_8);
	}

	/**
	 * Offsets of a listener that has nothing to commit but the record it is told is done.
	 */
	private record NoOffsets(ConsumerGroupMetadata group) implements CommittableOffsets {

		@Override
		public Map<TopicPartition, OffsetAndMetadata> afterDone(Collection<Delivery> records) {
			Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
			if (this.group != null) {
				records.forEach((record) -> offsets.merge(new TopicPartition(record.topic(), record.partition()),
						new OffsetAndMetadata(record.offset() + 1), (a, b) -> (a.offset() >= b.offset()) ? a : b));
			}
			return offsets;
		}

		@Override
		public Map<TopicPartition, OffsetAndMetadata> committable() {
			return Map.of();
		}

		@Override
		public void committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
		}

		@Override
		public Map<ConsumerGroupMetadata, Map<TopicPartition, OffsetAndMetadata>> byGroup(
				Map<TopicPartition, OffsetAndMetadata> offsets) {
			return Map.of(this.group, offsets);
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TestApplication.ScriptedListener.class)
	static class FaultyApplication {

		/**
		 * Fails the first retry publish of A after its lock write, as when the broker
		 * rejects it.
		 */
		@Bean
		OrderedRetryComponentFactory faultInjection() {
			return Faults.injecting((point, record) -> {
				if (point == FaultInjection.Point.LOCK_WRITTEN
						&& "A".equals(new String(record.value(), StandardCharsets.UTF_8))
						&& failuresAfterLockWrite.getAndDecrement() > 0) {
					throw new KafkaException("injected: publish of A failed after its lock write");
				}
			});
		}

	}

}
