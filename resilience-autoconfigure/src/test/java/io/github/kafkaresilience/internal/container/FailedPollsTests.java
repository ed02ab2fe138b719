package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * After each failed poll the loop pauses, twice as long after each further failure in a
 * row up to a bound, briefly again after a poll that succeeded, and no longer once the
 * container stops.
 */
class FailedPollsTests {

	private static final KafkaException FAILURE = new KafkaException("not authorized");

	private final Backpressure backpressure = new Backpressure();

	private final FailedPolls failedPolls = new FailedPolls("orders", this.backpressure);

	@Test
	void thePauseDoublesAfterEachFailureInARowUpToItsBound() {
		assertThat(pauses(8)).containsExactly(100L, 200L, 400L, 800L, 1600L, 3200L, 5000L, 5000L);
	}

	@Test
	void aPollThatSucceededStartsOver() {
		pauses(3);
		this.failedPolls.reset();
		assertThat(pauses(2)).containsExactly(100L, 200L);
	}

	@Test
	void thePauseEndsWhenTheContainerStops() throws InterruptedException {
		pauses(6);
		AtomicBoolean running = new AtomicBoolean(true);
		Thread stopping = new Thread(() -> {
			running.set(false);
			this.backpressure.wakeAll();
		});
		long start = System.nanoTime();
		stopping.start();
		long pause = this.failedPolls.pauseAfter(FAILURE, running::get);
		assertThat(pause).isEqualTo(FailedPolls.MAX_POLL_BACKOFF.toMillis());
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(FailedPolls.MAX_POLL_BACKOFF);
		stopping.join();
	}

	/**
	 * The pauses after {@code failures} failed polls in a row, of a container that
	 * stopped.
	 */
	private Long[] pauses(int failures) {
		Long[] pauses = new Long[failures];
		for (int i = 0; i < failures; i++) {
			pauses[i] = this.failedPolls.pauseAfter(FAILURE, () -> false);
		}
		return pauses;
	}

}
