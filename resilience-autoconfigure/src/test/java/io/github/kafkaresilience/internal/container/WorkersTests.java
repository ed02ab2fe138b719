package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.kafkaresilience.internal.container.Records.ORDERS_0;
import static io.github.kafkaresilience.internal.container.Records.task;
import static io.github.kafkaresilience.internal.container.Records.work;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The workers run every task submitted, never more at once than their concurrency, go on
 * past a task that throws, and run nothing once stopping or for a revoked partition.
 */
class WorkersTests {

	private final PartitionWork work = work(ORDERS_0, 10_000);

	private final Set<Long> ran = ConcurrentHashMap.newKeySet();

	private final AtomicInteger running = new AtomicInteger();

	private final AtomicInteger mostAtOnce = new AtomicInteger();

	private final Workers workers = new Workers("test", 3, (task) -> {
		int now = this.running.incrementAndGet();
		this.mostAtOnce.accumulateAndGet(now, Math::max);
		try {
			if (Records.offset(task) % 100 == 13) {
				throw new IllegalStateException("a bug in one task");
			}
			Thread.onSpinWait();
			this.ran.add(Records.offset(task));
		}
		finally {
			this.running.decrementAndGet();
		}
	});

	@AfterEach
	void stop() {
		this.workers.stop(Duration.ofSeconds(5));
	}

	@Test
	void everyTaskRunsOnAtMostConcurrencyThreadsAndAThrowingTaskStopsNoOther() {
		this.workers.start();
		IntStream.range(0, 2_000)
			.parallel()
			.forEach((offset) -> this.workers.submit(task(this.work, offset, "k" + offset)));
		await().atMost(Duration.ofSeconds(30)).until(() -> this.ran.size() == 2_000 - 20);
		assertThat(this.ran).doesNotContain(13L, 113L, 1913L);
		assertThat(this.mostAtOnce.get()).isBetween(1, 3);
	}

	/**
	 * A lowered limit (an outage's ramp) bounds the tasks that run at once, the workers
	 * beyond it stopping after their task; raised again, every worker runs.
	 */
	@Test
	void aLimitBoundsTheTasksAtOnceUntilItIsRaised() throws InterruptedException {
		CountDownLatch release = new CountDownLatch(1);
		AtomicInteger atOnce = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		Set<Long> done = ConcurrentHashMap.newKeySet();
		Workers limited = new Workers("limited", 4, (task) -> {
			most.accumulateAndGet(atOnce.incrementAndGet(), Math::max);
			try {
				release.await(); // blocks the workers until the test has looked
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				atOnce.decrementAndGet();
				done.add(Records.offset(task));
			}
		});
		limited.start();
		try {
			limited.limit(2);
			IntStream.range(0, 40).forEach((offset) -> limited.submit(task(this.work, offset, "k" + offset)));
			await().atMost(Duration.ofSeconds(10)).until(() -> atOnce.get() == 2);
			limited.limit(4);
			await().atMost(Duration.ofSeconds(10)).until(() -> atOnce.get() == 4);
			assertThat(most.get()).as("at once while limited, then after").isEqualTo(4);
			release.countDown();
			await().atMost(Duration.ofSeconds(10)).until(() -> done.size() == 40);
			assertThat(limited.limit()).isEqualTo(4);
		}
		finally {
			release.countDown();
			limited.stop(Duration.ofSeconds(5));
		}
	}

	@Test
	void aLimitLoweredWhileEveryWorkerRunsLetsTheOnesBeyondItGoAfterTheirTask() {
		AtomicInteger atOnce = new AtomicInteger();
		AtomicInteger mostAfterLowering = new AtomicInteger();
		AtomicBoolean lowered = new AtomicBoolean();
		Set<Long> done = ConcurrentHashMap.newKeySet();
		Workers limited = new Workers("lowered", 4, (task) -> {
			int now = atOnce.incrementAndGet();
			boolean after = lowered.get();
			try {
				Thread.sleep(2); // the task's work
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				atOnce.decrementAndGet();
				done.add(Records.offset(task));
			}
			if (after && Records.offset(task) >= 200) {
				mostAfterLowering.accumulateAndGet(now, Math::max);
			}
		});
		limited.start();
		try {
			IntStream.range(0, 100).forEach((offset) -> limited.submit(task(this.work, offset, "k" + offset)));
			limited.limit(1);
			lowered.set(true);
			await().atMost(Duration.ofSeconds(10)).until(() -> done.size() == 100);
			IntStream.range(200, 300).forEach((offset) -> limited.submit(task(this.work, offset, "k" + offset)));
			await().atMost(Duration.ofSeconds(10)).until(() -> done.size() == 200);
			assertThat(mostAfterLowering.get()).as("tasks at once submitted after the limit was lowered to one")
				.isOne();
		}
		finally {
			limited.stop(Duration.ofSeconds(5));
		}
	}

	@Test
	void aTaskSubmittedLaterRunsAfterItsDelay() throws InterruptedException {
		CountDownLatch done = new CountDownLatch(1);
		List<Long> order = new CopyOnWriteArrayList<>();
		Workers timed = new Workers("timed", 1, (task) -> {
			order.add(Records.offset(task));
			done.countDown();
		});
		timed.start();
		try {
			long start = System.nanoTime();
			timed.submitLater(task(this.work, 1, "a"), 200);
			assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
			assertThat(order).containsExactly(1L);
		}
		finally {
			timed.stop(Duration.ofSeconds(5));
		}
	}

	@Test
	void nothingRunsOnceStoppingOrForARevokedPartition() {
		this.workers.start();
		PartitionWork revoked = work(ORDERS_0, 10);
		revoked.revoke();
		this.workers.submit(task(revoked, 1, "a"));
		this.workers.stopTaking();
		this.workers.submit(task(this.work, 2, "b"));
		this.workers.submitLater(task(this.work, 3, "c"), 0);
		assertThat(this.workers.stop(Duration.ofSeconds(5))).isTrue();
		assertThat(this.ran).isEmpty();
	}

}
