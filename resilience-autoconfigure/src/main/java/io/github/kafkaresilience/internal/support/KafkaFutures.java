package io.github.kafkaresilience.internal.support;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.common.KafkaException;

/**
 * Waits for the result of a Kafka client call, turning every way it can fail into a
 * {@link KafkaException} that says what was being done.
 *
 * @since 0.1.0
 */
public final class KafkaFutures {

	private KafkaFutures() {
	}

	/**
	 * @param future the pending result
	 * @param timeout how long to wait
	 * @param what what the call does, completing "Could not ..." (e.g. "publish to
	 * 'orders.dlq'")
	 * @return the result
	 * @throws KafkaException when the call failed, timed out or the thread was
	 * interrupted (its interrupt flag is then set again)
	 */
	public static <T> T await(Future<T> future, Duration timeout, String what) {
		try {
			return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new KafkaException("Interrupted: could not " + what, ex);
		}
		catch (ExecutionException ex) {
			throw new KafkaException("Could not " + what, ex.getCause());
		}
		catch (TimeoutException ex) {
			throw new KafkaException("Could not " + what + " within " + timeout.toMillis() + " ms", ex);
		}
	}

}
