package io.github.kafkaresilience.idempotency;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.kafkaresilience.internal.support.MovingClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What every {@link IdempotencyStore} must do, run against each implementation.
 */
abstract class IdempotencyStoreContract {

	static final Duration LEASE = Duration.ofMinutes(5);

	final MovingClock clock = new MovingClock(Instant.parse("2026-01-01T00:00:00Z"));

	IdempotencyStore store;

	abstract IdempotencyStore createStore(Clock clock);

	@BeforeEach
	void createStore() {
		this.store = createStore(this.clock);
	}

	@Test
	void theFirstClaimWinsAndACompletedKeyIsNotClaimedAgain() {
		Claim first = this.store.claim("listener", "orders/0/1", LEASE);
		assertThat(first.status()).isEqualTo(Claim.Status.CLAIMED);
		assertThat(this.store.claim("listener", "orders/0/1", LEASE).status()).isEqualTo(Claim.Status.HELD);

		this.clock.advance(Duration.ofSeconds(3));
		this.store.complete(first);

		Claim again = this.store.claim("listener", "orders/0/1", LEASE);
		assertThat(again.status()).isEqualTo(Claim.Status.COMPLETED);
		assertThat(again.since()).isEqualTo(this.clock.instant());
	}

	@Test
	void aReleasedKeyCanBeClaimedAgain() {
		Claim first = this.store.claim("listener", "k", LEASE);
		this.store.release(first);

		Claim second = this.store.claim("listener", "k", LEASE);

		assertThat(second.status()).isEqualTo(Claim.Status.CLAIMED);
		assertThat(second.token()).isNotEqualTo(first.token());
	}

	@Test
	void aClaimPastItsLeaseIsTakenOverAndTheLateCompletionIsRefused() {
		Claim abandoned = this.store.claim("listener", "k", LEASE);
		this.clock.advance(LEASE.minusSeconds(1));
		assertThat(this.store.claim("listener", "k", LEASE).status()).isEqualTo(Claim.Status.HELD);

		this.clock.advance(Duration.ofSeconds(1));
		Claim takeover = this.store.claim("listener", "k", LEASE);

		assertThat(takeover.status()).isEqualTo(Claim.Status.CLAIMED);
		assertThatExceptionOfType(ClaimLostException.class).isThrownBy(() -> this.store.complete(abandoned))
			.withMessageContaining("kafka.resilience.idempotency.lease");
		this.store.release(abandoned); // does not touch the new claim
		assertThat(this.store.claim("listener", "k", LEASE).status()).isEqualTo(Claim.Status.HELD);
		this.store.complete(takeover);
		assertThat(this.store.claim("listener", "k", LEASE).status()).isEqualTo(Claim.Status.COMPLETED);
	}

	@Test
	void aCompletedKeyIsNeverTakenOver() {
		this.store.complete(this.store.claim("listener", "k", LEASE));
		this.clock.advance(LEASE.multipliedBy(10));

		assertThat(this.store.claim("listener", "k", LEASE).status()).isEqualTo(Claim.Status.COMPLETED);
	}

	@Test
	void scopesAreSeparate() {
		this.store.complete(this.store.claim("billing", "orders/0/1", LEASE));

		assertThat(this.store.claim("shipping", "orders/0/1", LEASE).status()).isEqualTo(Claim.Status.CLAIMED);
	}

	@Test
	void expiryForgetsKeysOlderThanTheCutOffOnly() {
		this.store.complete(this.store.claim("listener", "old", LEASE));
		this.store.claim("listener", "abandoned", LEASE);
		this.clock.advance(Duration.ofHours(2));
		this.store.complete(this.store.claim("listener", "new", LEASE));

		int forgotten = this.store.expire(this.clock.instant().minus(Duration.ofHours(1)));

		assertThat(forgotten).isEqualTo(2);
		assertThat(this.store.claim("listener", "old", LEASE).status()).isEqualTo(Claim.Status.CLAIMED);
		assertThat(this.store.claim("listener", "abandoned", LEASE).status()).isEqualTo(Claim.Status.CLAIMED);
		assertThat(this.store.claim("listener", "new", LEASE).status()).isEqualTo(Claim.Status.COMPLETED);
	}

	@Test
	void longKeysAreKeptApart() {
		String common = "x".repeat(3000);

		Claim a = this.store.claim("listener", common + "a", LEASE);
		Claim b = this.store.claim("listener", common + "b", LEASE);
		this.store.complete(a);

		assertThat(a.status()).isEqualTo(Claim.Status.CLAIMED);
		assertThat(b.status()).isEqualTo(Claim.Status.CLAIMED);
		assertThat(this.store.claim("listener", common + "a", LEASE).status()).isEqualTo(Claim.Status.COMPLETED);
		assertThat(this.store.claim("listener", common + "b", LEASE).status()).isEqualTo(Claim.Status.HELD);
	}

	@Test
	void ofAttemptsRacingForTheSameKeysExactlyOneClaimsEach() throws Exception {
		int threads = 4;
		int keys = 150;
		Map<String, AtomicInteger> claimed = new ConcurrentHashMap<>();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> racers = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				racers.add(pool.submit(() -> {
					start.await();
					for (int k = 0; k < keys; k++) {
						Claim claim = this.store.claim("listener", "key-" + k, LEASE);
						if (claim.status() == Claim.Status.CLAIMED) {
							claimed.computeIfAbsent(claim.key(), (key) -> new AtomicInteger()).incrementAndGet();
							if (k % 2 == 0) {
								this.store.complete(claim);
							}
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> racer : racers) {
				racer.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(claimed).hasSize(keys);
		assertThat(claimed.values()).allSatisfy((count) -> assertThat(count.get()).isEqualTo(1));
	}

}
