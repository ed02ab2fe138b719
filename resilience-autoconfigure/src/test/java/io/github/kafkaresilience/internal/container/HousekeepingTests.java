package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.kafkaresilience.internal.lock.LockReaper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.awaitility.Awaitility.await;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.willAnswer;
import static org.mockito.Mockito.atLeast;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;

/**
 * The reapers look for zombie locks every interval on a thread of their own, go on after
 * a look that failed and are interrupted on stop; their admin client is closed, and a
 * failure to close it goes no further.
 */
class HousekeepingTests {

	private static final Duration INTERVAL = Duration.ofMillis(10);

	private final LockReaper first = mock(LockReaper.class);

	private final LockReaper second = mock(LockReaper.class);

	private final AtomicInteger adminClosed = new AtomicInteger();

	private final AtomicInteger opened = new AtomicInteger();

	private final Housekeeping housekeeping = new Housekeeping("orders", new RetryContainer.Reaping(INTERVAL, () -> {
		this.opened.incrementAndGet();
		return new RetryContainer.Reapers(List.of(this.first, this.second), () -> {
			this.adminClosed.incrementAndGet();
			throw new IllegalStateException("the admin client failed to close");
		});
	}));

	@AfterEach
	void stop() {
		this.housekeeping.stop();
	}

	@Test
	void theReapersLookEveryIntervalOnTheirOwnThreadAndGoOnAfterAFailedLook() {
		Set<String> threads = ConcurrentHashMap.newKeySet();
		AtomicInteger looks = new AtomicInteger();
		given(this.first.reap()).willAnswer((invocation) -> {
			threads.add(Thread.currentThread().getName());
			if (looks.incrementAndGet() == 1) {
				throw new IllegalStateException("the broker is away");
			}
			return 0;
		});
		this.housekeeping.start();
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> verify(this.second, atLeast(2)).reap());
		assertThat(looks.get()).isGreaterThanOrEqualTo(3);
		assertThat(threads).containsExactly("kafka-resilience-orders-reaper-1");
	}

	@Test
	void stoppingInterruptsALookUnderWay() {
		CountDownLatch looking = new CountDownLatch(1);
		AtomicBoolean interrupted = new AtomicBoolean();
		willAnswer((invocation) -> {
			looking.countDown();
			try {
				new CountDownLatch(1).await();
			}
			catch (InterruptedException ex) {
				interrupted.set(true);
			}
			return 0;
		}).given(this.first).reap();
		this.housekeeping.start();
		await().atMost(Duration.ofSeconds(10)).until(() -> looking.getCount() == 0);
		this.housekeeping.stop();
		await().atMost(Duration.ofSeconds(10)).untilTrue(interrupted);
	}

	@Test
	void theAdminClientIsClosedAndItsFailureGoesNoFurther() {
		this.housekeeping.start();
		this.housekeeping.stop();
		assertThatNoException().isThrownBy(this.housekeeping::closeAdmin);
		assertThat(this.adminClosed).hasValue(1);
		this.housekeeping.closeAdmin();
		assertThat(this.adminClosed).as("closed once").hasValue(1);
	}

	@Test
	void theAdminClientIsClosedOnlyOnceALookUnderWayHasEnded() throws InterruptedException {
		CountDownLatch looking = new CountDownLatch(1);
		CountDownLatch resume = new CountDownLatch(1);
		AtomicInteger closedWhenTheLookEnded = new AtomicInteger(-1);
		willAnswer((invocation) -> {
			looking.countDown();
			// a look that does not stop at once when interrupted, as a call to the broker
			// under way
			boolean ended = false;
			while (!ended) {
				try {
					ended = resume.await(10, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					// goes on until it is told to end
				}
			}
			closedWhenTheLookEnded.set(this.adminClosed.get());
			return 0;
		}).given(this.first).reap();
		this.housekeeping.start();
		await().atMost(Duration.ofSeconds(10)).until(() -> looking.getCount() == 0);
		this.housekeeping.stop();
		Thread closing = new Thread(this.housekeeping::closeAdmin);
		closing.start();
		// either the admin client is closed already, or closing waits for the look
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.adminClosed.get() > 0 || closing.getState() == Thread.State.TIMED_WAITING);
		resume.countDown();
		closing.join(10_000);
		assertThat(closedWhenTheLookEnded).as("admin clients closed when the look ended").hasValue(0);
		assertThat(this.adminClosed).hasValue(1);
	}

	@Test
	void aContainerStartedAgainLooksThroughNewReapersWithAnOpenAdminClient() {
		AtomicInteger closedBeforeLook = new AtomicInteger(-1);
		LockReaper later = mock(LockReaper.class);
		AtomicInteger run = new AtomicInteger();
		Housekeeping restartable = new Housekeeping("orders", new RetryContainer.Reaping(INTERVAL, () -> {
			AtomicBoolean closed = new AtomicBoolean();
			LockReaper reaper = (run.incrementAndGet() == 1) ? this.first : later;
			given(reaper.reap()).willAnswer((invocation) -> {
				closedBeforeLook.compareAndSet(-1, closed.get() ? 1 : 0);
				return 0;
			});
			return new RetryContainer.Reapers(List.of(reaper), () -> closed.set(true));
		}));
		try {
			restartable.start();
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> verify(this.first, atLeast(1)).reap());
			restartable.stop();
			restartable.closeAdmin();
			closedBeforeLook.set(-1);
			restartable.start();
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> verify(later, atLeast(1)).reap());
			assertThat(run).as("reapers made for each start").hasValue(2);
			assertThat(closedBeforeLook).as("the second run's admin client was open when it looked").hasValue(0);
		}
		finally {
			restartable.stop();
		}
	}

	@Test
	void withoutReapingThereIsNothingToDo() {
		Housekeeping none = new Housekeeping("idle", null);
		assertThatNoException().isThrownBy(() -> {
			none.start();
			none.stop();
			none.closeAdmin();
		});
	}

}
