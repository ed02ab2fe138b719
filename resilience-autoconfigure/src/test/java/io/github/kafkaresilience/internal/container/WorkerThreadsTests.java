package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

import io.github.kafkaresilience.container.ContainerSettings;

import static io.github.kafkaresilience.internal.container.Records.ORDERS_0;
import static io.github.kafkaresilience.internal.container.Records.task;
import static io.github.kafkaresilience.internal.container.Records.work;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Platform workers are a fixed pool of named daemon threads on every Java; virtual
 * workers (Java 21 or later) are a new named virtual thread per task, so that a thousand
 * handlers that wait can all run at once, and before Java 21 they are refused.
 */
class WorkerThreadsTests {

	private static final Duration SETTLE = Duration.ofSeconds(30);

	@Test
	void platformWorkersAreAFixedPoolOfNamedDaemonThreads() throws InterruptedException {
		Set<Thread> threads = threadsThatRan(WorkerThreads.PLATFORM.workers("orders", 2), 50);
		assertThat(threads).hasSizeBetween(1, 2).allSatisfy((thread) -> {
			assertThat(thread.getName()).matches("kafka-resilience-orders-worker-[12]");
			assertThat(thread.isDaemon()).isTrue();
			assertThat(WorkerThreads.isVirtual(thread)).isFalse();
		});
	}

	@Test
	void platformIsTheKindUnlessVirtualIsAskedFor() {
		assertThat(WorkerThreads.of(false)).isEqualTo(WorkerThreads.PLATFORM);
		assertThat(WorkerThreads.of(true)).isEqualTo(WorkerThreads.VIRTUAL);
	}

	@Test
	@EnabledForJreRange(min = JRE.JAVA_21)
	void onJava21VirtualWorkersAreANewNamedVirtualThreadPerTask() throws InterruptedException {
		assertThat(WorkerThreads.virtualAvailable()).isTrue();
		Set<Thread> threads = threadsThatRan(WorkerThreads.VIRTUAL.workers("orders", 3), 3);
		assertThat(threads).hasSize(3).allSatisfy((thread) -> assertThat(WorkerThreads.isVirtual(thread)).isTrue());
		assertThat(threads).extracting(Thread::getName)
			.containsExactlyInAnyOrder("kafka-resilience-orders-worker-1", "kafka-resilience-orders-worker-2",
					"kafka-resilience-orders-worker-3");
	}

	@Test
	@EnabledForJreRange(min = JRE.JAVA_21)
	void onJava21AThousandVirtualWorkersRunAThousandWaitingTasksAtOnce() throws InterruptedException {
		CountDownLatch allRunning = new CountDownLatch(1_000);
		Set<Thread> threads = ConcurrentHashMap.newKeySet();
		Set<Long> ran = ConcurrentHashMap.newKeySet();
		Workers workers = new Workers("many", 1_000, WorkerThreads.VIRTUAL, (task) -> {
			threads.add(Thread.currentThread());
			allRunning.countDown();
			try {
				// each task waits, as a handler waits on I/O, until all of them are
				// running
				if (allRunning.await(SETTLE.toSeconds(), TimeUnit.SECONDS)) {
					ran.add(Records.offset(task));
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return null;
		});
		workers.start();
		try {
			PartitionWork work = work(ORDERS_0, 10_000);
			IntStream.range(0, 1_000).forEach((offset) -> workers.submit(task(work, offset, "k" + offset)));
			assertThat(allRunning.await(SETTLE.toSeconds(), TimeUnit.SECONDS)).as("a thousand tasks running at once")
				.isTrue();
		}
		finally {
			assertThat(workers.stop(SETTLE)).isTrue();
		}
		assertThat(ran).hasSize(1_000);
		assertThat(threads).hasSize(1_000).allSatisfy((thread) -> assertThat(WorkerThreads.isVirtual(thread)).isTrue());
	}

	@Test
	@EnabledForJreRange(max = JRE.JAVA_20)
	void beforeJava21VirtualWorkersAreRefused() {
		assertThat(WorkerThreads.virtualAvailable()).isFalse();
		assertThat(WorkerThreads.isVirtual(Thread.currentThread())).isFalse();
		assertThatIllegalStateException().isThrownBy(() -> WorkerThreads.VIRTUAL.workers("orders", 3))
			.withMessage("Virtual threads need Java 21 or later; this is Java " + Runtime.version().feature());
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ContainerSettings(1, 10, Duration.ofMillis(100), Duration.ofSeconds(1),
					Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(10), true))
			.withMessage("Virtual worker threads need Java 21 or later; this is Java " + Runtime.version().feature());
	}

	@Test
	void aListenersOwnConcurrencyKeepsTheOtherSettings() {
		ContainerSettings settings = new ContainerSettings(4, 10, Duration.ofMillis(100), Duration.ofSeconds(1),
				Duration.ofSeconds(2), Duration.ofSeconds(3), Duration.ofSeconds(10), false);
		assertThat(settings.withConcurrency(2_000)).isEqualTo(new ContainerSettings(2_000, 10, Duration.ofMillis(100),
				Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(3), Duration.ofSeconds(10), false));
	}

	/**
	 * Runs {@code tasks} tasks on {@code pool}, shuts it down, and returns the threads
	 * they ran on.
	 */
	private static Set<Thread> threadsThatRan(ExecutorService pool, int tasks) throws InterruptedException {
		Set<Thread> threads = ConcurrentHashMap.newKeySet();
		try {
			CountDownLatch done = new CountDownLatch(tasks);
			for (int i = 0; i < tasks; i++) {
				pool.execute(() -> {
					threads.add(Thread.currentThread());
					done.countDown();
				});
			}
			assertThat(done.await(SETTLE.toSeconds(), TimeUnit.SECONDS)).isTrue();
		}
		finally {
			shutDown(pool);
		}
		return threads;
	}

	private static void shutDown(ExecutorService pool) throws InterruptedException {
		pool.shutdown();
		assertThat(pool.awaitTermination(SETTLE.toSeconds(), TimeUnit.SECONDS)).isTrue();
	}

}
