package io.github.kafkaresilience.internal.idempotency;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.transaction.support.TransactionOperations;

import io.github.kafkaresilience.idempotency.IdempotencyKeyResolver;
import io.github.kafkaresilience.idempotency.IdempotencyObserver;
import io.github.kafkaresilience.idempotency.IdempotencyStore;
import io.github.kafkaresilience.idempotency.InMemoryIdempotencyStore;

/**
 * Creates the idempotency guards of the listeners that opt in, and forgets old keys in
 * their store on a schedule once the first guard exists.
 *
 * @since 0.1.0
 */
public class IdempotencyGuards implements DisposableBean {

	private static final Log logger = LogFactory.getLog(IdempotencyGuards.class);

	private final Settings settings;

	private final Supplier<IdempotencyStore> stores;

	private final Function<String, IdempotencyKeyResolver> defaultKeys;

	private final @Nullable BeanFactory beanFactory;

	private final @Nullable TransactionOperations transactions;

	private final IdempotencyObserver.Factory observers;

	private final Clock clock;

	private @Nullable IdempotencyStore store;

	private @Nullable ScheduledExecutorService expiry;

	/**
	 * How guards behave.
	 *
	 * @param enabled whether listeners that do not say otherwise are guarded
	 * @param lease how long a claim holds before another attempt may take it over
	 * @param retention how long completed keys are remembered
	 * @param cleanupInterval how often keys older than the retention are forgotten
	 */
	public record Settings(boolean enabled, Duration lease, Duration retention, Duration cleanupInterval) {
	}

	/**
	 * @param settings how guards behave
	 * @param stores gives the store, asked once, when the first guard is created
	 * @param defaultKeys gives the key resolver of a main topic whose listener names no
	 * expression
	 * @param beanFactory resolves the {@code @name} references of listeners' key
	 * expressions, or {@code null}
	 * @param transactions runs handlers and completions in one transaction, or
	 * {@code null}
	 * @param observers gives the observer of a listener id and main topic
	 * @param clock the clock of the expiry
	 */
	public IdempotencyGuards(Settings settings, Supplier<IdempotencyStore> stores,
			Function<String, IdempotencyKeyResolver> defaultKeys, @Nullable BeanFactory beanFactory,
			@Nullable TransactionOperations transactions, IdempotencyObserver.Factory observers, Clock clock) {
		this.settings = settings;
		this.stores = stores;
		this.defaultKeys = defaultKeys;
		this.beanFactory = beanFactory;
		this.transactions = transactions;
		this.observers = observers;
		this.clock = clock;
	}

	/**
	 * The guard of a listener's main topic.
	 * @param listenerId the listener, the scope of its keys
	 * @param idempotent whether the listener opted in or out, {@code null} for the
	 * default
	 * @param keyExpression the listener's key expression, {@code null} for the default
	 * key
	 * @param mainTopic the main topic
	 * @return the guard, or {@code null} when the listener is not guarded
	 */
	public @Nullable IdempotencyGuard guard(String listenerId, @Nullable Boolean idempotent,
			@Nullable String keyExpression, String mainTopic) {
		boolean guarded = (idempotent != null) ? idempotent : this.settings.enabled();
		if (!guarded) {
			if (keyExpression != null) {
				throw new IllegalStateException(
						"Listener '" + listenerId + "' sets idempotencyKey but is not idempotent;"
								+ " set idempotent = \"true\" on it or kafka.resilience.idempotency.enabled=true");
			}
			return null;
		}
		IdempotencyKeyResolver keys = (keyExpression != null)
				? new ExpressionKeyResolver(keyExpression, this.beanFactory) : this.defaultKeys.apply(mainTopic);
		return new IdempotencyGuard(listenerId, store(), keys, this.settings.lease(), this.transactions,
				this.observers.observer(listenerId, mainTopic));
	}

	private synchronized IdempotencyStore store() {
		if (this.store == null) {
			IdempotencyStore store = this.stores.get();
			if (store instanceof InMemoryIdempotencyStore) {
				logger.info("Idempotency keys are kept in memory: each instance remembers only what it handled since it"
						+ " started. Add a DataSource (and the kafka_resilience_idempotency table) to share them");
			}
			this.store = store;
			startExpiry(store);
		}
		return this.store;
	}

	private void startExpiry(IdempotencyStore store) {
		this.expiry = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "kafka-resilience-idempotency-expiry");
			thread.setDaemon(true);
			return thread;
		});
		long interval = Math.max(1, this.settings.cleanupInterval().toMillis());
		this.expiry.scheduleWithFixedDelay(() -> expire(store), interval, interval, TimeUnit.MILLISECONDS);
	}

	/** Forgets the keys older than the retention now; returns how many. */
	public int expire(IdempotencyStore store) {
		try {
			int forgotten = store.expire(this.clock.instant().minus(this.settings.retention()));
			if (forgotten > 0 && logger.isDebugEnabled()) {
				logger.debug("Forgot " + forgotten + " idempotency keys older than " + this.settings.retention());
			}
			return forgotten;
		}
		catch (RuntimeException ex) {
			logger.warn("Could not forget old idempotency keys; trying again in " + this.settings.cleanupInterval(),
					ex);
			return 0;
		}
	}

	@Override
	public synchronized void destroy() {
		if (this.expiry != null) {
			this.expiry.shutdownNow();
		}
	}

}
