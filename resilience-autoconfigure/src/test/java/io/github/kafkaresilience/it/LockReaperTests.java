package io.github.kafkaresilience.it;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.Position;
import io.github.kafkaresilience.internal.metrics.LockMetrics;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The reaper releases locks whose record can no longer be consumed, and only those.
 */
@UsesSharedBroker
class LockReaperTests {

	@Test
	void zombieLocksAreReapedAfterTheGracePeriodWhileAHealthyWaitingLockIsKept() throws Exception {
		String topic = SharedBroker.newTopic(3);
		String healthy = SharedBroker.keyIn(0, 3, "healthy");
		String lost = SharedBroker.keyIn(1, 3, "lost");
		String done = SharedBroker.keyIn(2, 3, "done");
		Script script = Script.forTopic(topic).failTransiently("H", 1).failTransiently("Z", 1);
		CompositeMeterRegistry meters = MonitoringQueries.registry();
		try (ConfigurableApplicationContext context = TestApplication.start(topic, "kafka.resilience.retry.delays=1h",
				"kafka.resilience.reaper.interval=500ms", "kafka.resilience.reaper.grace=3s");
				Admin admin = Admin
					.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers()))) {
			context.getBean(LockMetrics.class).bindTo(meters);
			LockRegistry registry = context.getBean(LockCoordinator.class).registries().iterator().next();
			SharedBroker.send(topic, healthy, "H");
			SharedBroker.send(topic, lost, "Z");
			SharedBroker.send(topic, done, "D");
			await().atMost(Duration.ofSeconds(30))
				.until(() -> script.succeeded("D")
						&& registry.snapshot().stream().filter((lock) -> !lock.isMoving()).count() == 2);

			// the carrier of Z's lock disappears from its retry topic, as with a too
			// short retention
			Lock lostLock = registry.locksOf(Bytes.wrap(lost.getBytes())).get(0);
			admin
				.deleteRecords(Map.of(new TopicPartition(Names.retry(topic, "1h"), 1),
						RecordsToDelete.beforeOffset(lostLock.at() + 1)))
				.all()
				.get(30, TimeUnit.SECONDS);

			// a lock whose move from the main topic never completed, although its source
			// was committed
			TopicPartition donePartition = new TopicPartition(topic, 2);
			await().atMost(Duration.ofSeconds(30)).until(() -> committed(admin, "g-" + topic, donePartition) > 0);
			Lock unfinished = Lock.moving(UUID.randomUUID().toString(), Bytes.wrap(done.getBytes()), 2, 0, 1,
					new Position(0, 0), 0, null, Instant.now());
			registry.write(unfinished);

			await().atMost(Duration.ofSeconds(30))
				.untilAsserted(() -> assertThat(registry.snapshot()).extracting(Lock::key)
					.containsExactly(Bytes.wrap(healthy.getBytes())));
			Lock healthyLock = registry.snapshot().iterator().next();
			assertThat(healthyLock.updated()).as("old enough to be reaped, but its record still waits")
				.isBefore(Instant.now().minusSeconds(3));
			assertThat(meters.get("kafka.resilience.locks.reaped").counter().count()).isEqualTo(2);

			// operator commands that are void (docs/PROTOCOL.md, rule 11): one names the
			// healthy lock
			// where it never was, one a lock that is gone; the reaper's pass ends both,
			// acting on neither
			OperatorCommand misplaced = new OperatorCommand(UUID.randomUUID().toString(),
					OperatorCommand.Action.RETRY_NOW, healthyLock.id(), healthyLock.key(), 0,
					new Position(1, healthyLock.at() + 100), "ops", Instant.now());
			OperatorCommand orphan = new OperatorCommand(UUID.randomUUID().toString(),
					OperatorCommand.Action.DEAD_LETTER_NOW, UUID.randomUUID().toString(), Bytes.wrap(lost.getBytes()),
					1, new Position(1, 0), "ops", Instant.now());
			registry.submit(misplaced).get(30, TimeUnit.SECONDS);
			registry.submit(orphan).get(30, TimeUnit.SECONDS);
			await().atMost(Duration.ofSeconds(30)).until(() -> registry.commands().isEmpty());
			for (OperatorCommand command : List.of(misplaced, orphan)) {
				assertThat(SharedBroker.readAll(Names.locks(topic)))
					.filteredOn((record) -> new String(record.key()).equals(command.recordKey()))
					.as("written, then ended with a tombstone")
					.extracting((record) -> record.value() == null)
					.containsExactly(false, true);
			}
			assertThat(registry.snapshot()).containsExactly(healthyLock);
			assertThat(script.attempts("H")).as("the misplaced retry-now ran nothing").isEqualTo(1);
			assertThat(SharedBroker.readAll(Names.dlq(topic))).as("the orphan dead-lettered nothing").isEmpty();
			assertThat(meters.get("kafka.resilience.barrier.wait").timers()).isNotEmpty();
			assertThat(meters.get("kafka.resilience.locks.oldest.age").tag("topic", topic).gauge().value())
				.as("seconds the healthy lock has waited at its stage")
				.isGreaterThanOrEqualTo(3);
			// the dashboard's and the alert rules' queries of the reaper's counter name
			// what it registered
			assertThat(MonitoringQueries.assertScraped(MonitoringQueries.scrape(meters),
					(metric) -> metric.startsWith("kafka_resilience_locks_reaped")))
				.isNotEmpty();
		}
	}

	private static long committed(Admin admin, String group, TopicPartition partition) throws Exception {
		OffsetAndMetadata offset = admin.listConsumerGroupOffsets(group)
			.partitionsToOffsetAndMetadata()
			.get(30, TimeUnit.SECONDS)
			.get(partition);
		return (offset != null) ? offset.offset() : -1;
	}

}
