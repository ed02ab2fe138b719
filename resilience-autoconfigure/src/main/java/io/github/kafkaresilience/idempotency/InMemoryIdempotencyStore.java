package io.github.kafkaresilience.idempotency;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An {@link IdempotencyStore} in this JVM's memory: for tests and for a single instance
 * that accepts forgetting its keys when it restarts. Instances do not share it.
 *
 * @since 0.1.0
 */
public class InMemoryIdempotencyStore implements IdempotencyStore {

	private final Map<Id, Entry> entries = new ConcurrentHashMap<>();

	private final Clock clock;

	public InMemoryIdempotencyStore() {
		this(Clock.systemUTC());
	}

	public InMemoryIdempotencyStore(Clock clock) {
		this.clock = clock;
	}

	@Override
	public Claim claim(String scope, String key, Duration lease) {
		Instant now = this.clock.instant();
		String token = UUID.randomUUID().toString();
		Entry entry = this.entries.compute(new Id(scope, key), (id, current) -> {
			if (current == null || (!current.completed() && !current.since().plus(lease).isAfter(now))) {
				return new Entry(false, token, now);
			}
			return current;
		});
		if (entry.completed()) {
			return Claim.completed(scope, key, entry.since());
		}
		return token.equals(entry.token()) ? Claim.claimed(scope, key, token, now)
				: Claim.held(scope, key, entry.since());
	}

	@Override
	public void complete(Claim claim) {
		String token = claim.requireToken();
		boolean[] done = new boolean[1];
		this.entries.computeIfPresent(new Id(claim.scope(), claim.key()), (id, current) -> {
			if (current.completed() || !token.equals(current.token())) {
				return current;
			}
			done[0] = true;
			return new Entry(true, token, this.clock.instant());
		});
		if (!done[0]) {
			throw new ClaimLostException(claim);
		}
	}

	@Override
	public void release(Claim claim) {
		String token = claim.requireToken();
		this.entries.computeIfPresent(new Id(claim.scope(), claim.key()),
				(id, current) -> (!current.completed() && token.equals(current.token())) ? null : current);
	}

	@Override
	public int expire(Instant before) {
		int[] removed = new int[1];
		this.entries.entrySet().removeIf((entry) -> {
			boolean old = entry.getValue().since().isBefore(before);
			removed[0] += old ? 1 : 0;
			return old;
		});
		return removed[0];
	}

	/** The number of keys held, claimed or completed. */
	public int size() {
		return this.entries.size();
	}

	private record Id(String scope, String key) {
	}

	private record Entry(boolean completed, String token, Instant since) {
	}

}
