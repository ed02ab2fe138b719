package io.github.kafkaresilience.container;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One run of a container, from start to stop: its committer started once, before either of
 * its poll loops subscribes, and where the loops are in stopping (the last to stop polling
 * drains the workers; the last to close its consumer ends the run).
 */
final class ContainerRun {

	private final AtomicInteger polling;

	private final AtomicInteger open;

	private final CountDownLatch drained = new CountDownLatch(1);

	private boolean started;

	/** @param loops how many poll loops the run has */
	ContainerRun(int loops) {
		this.polling = new AtomicInteger(loops);
		this.open = new AtomicInteger(loops);
	}

	/** Runs {@code start} on the first loop's thread; the other loops wait for it to end. */
	synchronized void startOnce(Runnable start) {
		if (!this.started) {
			this.started = true;
			start.run();
		}
	}

	/** A loop stopped polling; returns whether it was the last. */
	boolean stoppedPolling() {
		return this.polling.decrementAndGet() == 0;
	}

	void drained() {
		this.drained.countDown();
	}

	void awaitDrained(Duration timeout) {
		try {
			this.drained.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** A loop closed its consumer; returns whether it was the last. */
	boolean closed() {
		return this.open.decrementAndGet() == 0;
	}

}
