package io.github.kafkaresilience.internal.actuate;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import io.github.kafkaresilience.internal.lock.Position;
import org.apache.kafka.common.utils.Bytes;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The held keys as the console pages through them: one row per key about its head, oldest
 * first, searched by key, a page at a time however many locks there are.
 */
class HeldKeysTests {

	private static final Instant NOW = Instant.parse("2026-11-28T12:00:00Z");

	private static final LadderPlan PLAN = LadderPlan.of("billing", "orders",
			List.of(Duration.ofSeconds(30), Duration.ofHours(1)), null, LadderPlan.DEFAULT_RETRY_TEMPLATE,
			LadderPlan.DEFAULT_DLQ_TEMPLATE, LadderPlan.DEFAULT_LOCK_TEMPLATE);

	@Test
	void a100000LockLadderIsPagedOldestFirstOneRowPerKey() {
		List<Lock> live = new ArrayList<>();
		for (int i = 0; i < 100_000; i++) {
			// keys k0..k49999, each with a head and a follower; the head of k0 is the
			// oldest
			String key = "k" + (i % 50_000);
			boolean head = i < 50_000;
			live.add(new Lock("L" + i, key(key), 0, i, head ? 2 : 1, (long) i, null, head ? 2 : 0, null,
					NOW.minusSeconds(head ? 100_000 - i : 10)));
		}
		HeldKeys.HeldPage first = HeldKeys.page("billing", PLAN, live, (id) -> List.of(), null, 0, 20, NOW, null);
		assertThat(first.locks()).isEqualTo(100_000);
		assertThat(first.keys()).isEqualTo(50_000);
		assertThat(first.matching()).isEqualTo(50_000);
		assertThat(first.held()).hasSize(20);
		assertThat(first.held()).extracting(HeldKeys.HeldKey::key).startsWith("k0", "k1", "k2");
		assertThat(first.held().get(0)).satisfies((row) -> {
			assertThat(row.lockId()).isEqualTo("L0");
			assertThat(row.records()).isEqualTo(2);
			assertThat(row.stage()).isEqualTo(2);
			assertThat(row.stageTopic()).isEqualTo("billing.orders.retry.1h");
			assertThat(row.attempts()).isEqualTo(2);
			assertThat(row.age()).isEqualTo(Duration.ofSeconds(100_000));
			assertThat(row.due()).as("its lock's time plus its stage's delay")
				.isEqualTo(row.since().plus(Duration.ofHours(1)));
			assertThat(row.actionable()).isTrue();
		});
		HeldKeys.HeldPage last = HeldKeys.page("billing", PLAN, live, (id) -> List.of(), null, 2_499, 20, NOW, null);
		assertThat(last.held()).extracting(HeldKeys.HeldKey::key).endsWith("k49999");
		assertThat(HeldKeys.page("billing", PLAN, live, (id) -> List.of(), null, 2_500, 20, NOW, null).held())
			.isEmpty();
	}

	@Test
	void aSearchKeepsTheKeysThatContainItIgnoringCase() {
		List<Lock> live = List.of(lock("L1", "Customer-7", 1, 5L, NOW.minusSeconds(50)),
				lock("L2", "customer-17", 1, 6L, NOW.minusSeconds(40)),
				lock("L3", "order-7", 1, 7L, NOW.minusSeconds(60)));
		HeldKeys.HeldPage page = HeldKeys.page("billing", PLAN, live, (id) -> List.of(), "CUSTOMER-7", 0, 10, NOW,
				null);
		assertThat(page.matching()).isEqualTo(1);
		assertThat(page.held()).extracting(HeldKeys.HeldKey::key).containsExactly("Customer-7");
	}

	@Test
	void aRowShowsItsHeadsLastErrorAndTheCommandsThatStillApplyToIt() {
		Lock moving = Lock.moving("L1", key("m"), 0, 3, 2, new Position(1, 4), 2,
				new FailureInfo("transient", "timed out", "java.net.SocketTimeoutException", "2026-11-28T11:59:00Z"),
				NOW);
		Lock waiting = lock("L2", "w", 1, 9L, NOW.minusSeconds(5));
		OperatorCommand applies = OperatorCommand.on(waiting, OperatorCommand.Action.RETRY_NOW, "ops", "c1", NOW);
		OperatorCommand stale = new OperatorCommand("c2", OperatorCommand.Action.DEAD_LETTER_NOW, "L2", key("w"), 0,
				new Position(1, 3), "ops", NOW);
		LastErrors.Place place = new LastErrors.Place("billing.orders.retry.30s", 0, 9);
		HeldKeys.HeldPage page = HeldKeys.page("billing", PLAN, List.of(moving, waiting),
				(id) -> id.equals("L2") ? List.of(applies, stale) : List.of(), null, 0, 10, NOW, (places) -> {
					assertThat(places).containsExactly(place);
					return Map.of(place, new LastErrors.LastError("java.io.IOException", "reset"));
				});
		assertThat(page.held())
			.extracting(HeldKeys.HeldKey::key, HeldKeys.HeldKey::errorClass, HeldKeys.HeldKey::errorMessage,
					HeldKeys.HeldKey::actionable, HeldKeys.HeldKey::commands)
			.containsExactly(Tuple.tuple("w", "java.io.IOException", "reset", true, List.of("retry-now")),
					Tuple.tuple("m", "java.net.SocketTimeoutException", "timed out", false, List.of()));
	}

	private static Lock lock(String id, String key, int stage, Long at, Instant updated) {
		return new Lock(id, key(key), 0, Long.parseLong(id.substring(1)), stage, at, null, 1, null, updated);
	}

	private static Bytes key(String key) {
		return Bytes.wrap(key.getBytes(StandardCharsets.UTF_8));
	}

}
