package io.github.kafkaresilience.internal.ladder;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockStore;
import io.github.kafkaresilience.internal.lock.Position;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.RecordHandler;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the router does when a topic refuses a record as too large, on the paths the
 * broker tests do not reach: a record without a key, a move left unfinished by a crash,
 * and the transaction mode's second delivery.
 */
class StageRouterRefusalTests {

	private static final LadderPlan PLAN = LadderPlan.of("billing", "orders", List.of(Duration.ofSeconds(1)), null,
			LadderPlan.DEFAULT_RETRY_TEMPLATE, LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE);

	private static final String TOO_LARGE = "The request included a message larger than the max message size the server "
			+ "will accept.";

	private final Locks locks = new Locks();

	private final Publisher publisher = new Publisher();

	private final AtomicInteger handled = new AtomicInteger();

	private final Clock clock = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);

	@Test
	void aRecordWithoutAKeyThatTheRetryTopicRefusesIsDeadLetteredAsPermanent() {
		this.publisher.refuse("billing.orders.retry.1s");
		Step step = router(DualWrite.COMPENSATE).route(record("orders", 7, null), false);
		assertThat(step.kind()).isEqualTo(Step.Kind.DONE);
		assertThat(this.publisher.sent).hasSize(1);
		Sent dead = this.publisher.sent.get(0);
		assertThat(dead.topic()).isEqualTo("billing.orders.dlq");
		assertThat(dead.header("dlq.reason")).isEqualTo("permanent");
		assertThat(dead.header("error.exception")).isEqualTo(RecordTooLargeException.class.getName());
		assertThat(dead.header("retry.count")).isEqualTo("1");
		assertThat(dead.header("error.message")).contains("could not be published to 'billing.orders.retry.1s'")
			.contains("--entity-name billing.orders.retry.1s --add-config max.message.bytes=");
	}

	@Test
	void aMoveLeftUnfinishedIsDeadLetteredAndItsLockReleasedWhenTheRetryTopicRefusesItsRedelivery() {
		Bytes key = Bytes.wrap("k".getBytes(StandardCharsets.UTF_8));
		Lock moving = Lock.moving("lock-1", key, 0, 7, 1, new Position(0, 7), 1, null, this.clock.instant());
		this.locks.write(moving);
		this.publisher.refuse("billing.orders.retry.1s");
		Step step = router(DualWrite.COMPENSATE).route(record("orders", 7, "k"), false);
		assertThat(step.kind()).isEqualTo(Step.Kind.DONE);
		assertThat(this.handled).as("the redelivery finishes the move, it does not run again").hasValue(0);
		assertThat(this.publisher.sent).singleElement().satisfies((dead) -> {
			assertThat(dead.topic()).isEqualTo("billing.orders.dlq");
			assertThat(dead.header("lock.id")).isEqualTo("lock-1");
			assertThat(dead.header("dlq.reason")).isEqualTo("permanent");
		});
		assertThat(this.locks.find("lock-1")).isNull();
	}

	@Test
	void inTransactionModeARefusedMoveFailsTheStepAndTheNextDeliveryIsDeadLetteredWithoutRunningAgain() {
		this.publisher.refuse("billing.orders.retry.1s");
		StageRouter router = router(DualWrite.TRANSACTION);
		assertThatThrownBy(() -> router.route(record("orders", 7, "k"), false)).isInstanceOf(KafkaException.class)
			.hasMessageContaining("'billing.orders.retry.1s' refused orders/0/7 as too large");
		this.locks.live.clear(); // the caller aborted the transaction, and the lock write
									// with it
		assertThat(router.route(record("orders", 7, "k"), false).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(this.handled).hasValue(1);
		assertThat(this.publisher.sent).singleElement().satisfies((dead) -> {
			assertThat(dead.topic()).isEqualTo("billing.orders.dlq");
			assertThat(dead.header("retry.count")).isEqualTo("1");
			assertThat(dead.header("error.exception")).isEqualTo(RecordTooLargeException.class.getName());
		});
	}

	@Test
	void aDeadLetterTopicRefusingARecordFailsWithAnErrorNamingTheRecordTheTopicAndTheSetting() {
		this.publisher.refuse("billing.orders.retry.1s");
		this.publisher.refuse("billing.orders.dlq");
		assertThatThrownBy(() -> router(DualWrite.COMPENSATE).route(record("orders", 7, "k"), false))
			.isInstanceOfSatisfying(UnpublishableRecordException.class,
					(ex) -> assertThat(ex.refusingTopic()).isEqualTo("billing.orders.dlq"))
			.hasMessageContaining("Record orders/0/7 ")
			.hasMessageContaining(
					"can be neither retried nor dead-lettered: 'billing.orders.dlq' refused it as too large")
			.hasMessageContaining("--entity-name billing.orders.dlq --add-config max.message.bytes=");
		assertThat(this.locks.live).as("the move stays unfinished, for the redelivery to finish").hasSize(1);
	}

	private StageRouter router(DualWrite dualWrite) {
		RecordHandler handler = (delivery) -> {
			this.handled.incrementAndGet();
			return HandlerResult.failed(new IllegalStateException("fails"));
		};
		return StageRouter.builder(PLAN, this.locks, this.publisher, handler)
			.clock(this.clock)
			.lockIds(() -> "lock-" + (this.locks.live.size() + 1))
			.dualWrite(dualWrite)
			.build();
	}

	private static Delivery record(String topic, long offset, @Nullable String key) {
		return new Delivery(topic, 0, offset, 0, (key != null) ? key.getBytes(StandardCharsets.UTF_8) : null,
				"value".getBytes(StandardCharsets.UTF_8), new RecordHeaders());
	}

	record Sent(String topic, Headers headers) {

		String header(String name) {
			return ProtocolHeaders.text(this.headers, name);
		}

	}

	/** Records what it publishes; the topics it refuses throw as a producer does. */
	static final class Publisher implements RecordPublisher {

		final List<Sent> sent = new ArrayList<>();

		private final List<String> refused = new ArrayList<>();

		void refuse(String topic) {
			this.refused.add(topic);
		}

		@Override
		public long publish(String topic, int partition, byte[] key, byte[] value, Headers headers) {
			if (this.refused.contains(topic)) {
				throw new KafkaException("Could not publish to '" + topic + "' partition " + partition,
						new RecordTooLargeException(TOO_LARGE));
			}
			this.sent.add(new Sent(topic, headers));
			return this.sent.size() - 1;
		}

	}

	/** The live locks, in memory. */
	static class Locks implements LockStore {

		final Map<String, Lock> live = new LinkedHashMap<>();

		@Override
		public @Nullable Lock find(String id) {
			return this.live.get(id);
		}

		@Override
		public List<Lock> locksOf(Bytes key) {
			return this.live.values()
				.stream()
				.filter((lock) -> lock.key().equals(key))
				.sorted(Comparator.comparingLong(Lock::originOffset))
				.toList();
		}

		@Override
		public @Nullable Lock byOrigin(Bytes key, long originOffset) {
			return locksOf(key).stream().filter((lock) -> lock.originOffset() == originOffset).findFirst().orElse(null);
		}

		@Override
		public @Nullable Lock predecessor(Lock lock) {
			return locksOf(lock.key()).stream()
				.filter((other) -> other.originOffset() < lock.originOffset())
				.reduce((first, second) -> second)
				.orElse(null);
		}

		@Override
		public void write(Lock lock) {
			this.live.put(lock.id(), lock);
		}

		@Override
		public void release(Lock lock) {
			this.live.remove(lock.id());
		}

	}

}
