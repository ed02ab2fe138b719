package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.kafkaresilience.container.ResilienceObserver;
import org.apache.kafka.common.TopicPartition;

/**
 * Hears the sync barriers of one instance open (a bean of the application): when each
 * partition became ready, and the longest wait.
 */
final class BarrierWatch implements ResilienceObserver {

	private final Set<TopicPartition> opened = ConcurrentHashMap.newKeySet();

	private final AtomicLong longestWait = new AtomicLong();

	private final CountDownLatch all;

	private volatile long lastOpened = Long.MIN_VALUE;

	/**
	 * @param partitions how many partitions (main and retry topics) the instance is
	 * assigned
	 */
	BarrierWatch(int partitions) {
		this.all = new CountDownLatch(partitions);
	}

	@Override
	public void barrierOpened(String listenerId, String group, TopicPartition partition, Duration waited) {
		this.longestWait.accumulateAndGet(waited.toNanos(), Math::max);
		synchronized (this) {
			if (this.opened.add(partition)) {
				this.lastOpened = System.nanoTime();
				this.all.countDown();
			}
		}
	}

	/**
	 * Waits until every partition's barrier has opened.
	 * @param timeout how long to wait at most
	 * @return whether they all opened
	 */
	boolean await(Duration timeout) throws InterruptedException {
		return this.all.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
	}

	/** How many partitions' barriers have opened. */
	int opened() {
		return this.opened.size();
	}

	/** When the last barrier opened ({@link System#nanoTime()}). */
	long lastOpenedNanos() {
		return this.lastOpened;
	}

	long longestWaitNanos() {
		return this.longestWait.get();
	}

}
