package io.github.kafkaresilience.idempotency;

import java.time.Clock;

class InMemoryIdempotencyStoreTests extends IdempotencyStoreContract {

	@Override
	IdempotencyStore createStore(Clock clock) {
		return new InMemoryIdempotencyStore(clock);
	}

}
