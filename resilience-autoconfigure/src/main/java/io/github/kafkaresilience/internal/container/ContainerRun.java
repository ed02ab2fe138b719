package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.ToIntBiFunction;

import io.github.kafkaresilience.ladder.Delivery;

/**
 * One run of a container, from start to stop, as its poll loops see it: its committer
 * started once, before either loop subscribes, the polled records handed to the
 * container, and where the loops are in stopping (the last to stop polling drains the
 * workers; the last to close its consumer ends the run).
 */
final class ContainerRun implements PollLoop.Container {

	private final BooleanSupplier running;

	private final Runnable start;

	private final ToIntBiFunction<PartitionWork, List<Delivery>> take;

	private final Runnable drain;

	private final Runnable finish;

	/** How long a loop waits for the drain before its last commit. */
	private final Duration drainTimeout;

	private final AtomicInteger polling;

	private final AtomicInteger open;

	private final CountDownLatch drained = new CountDownLatch(1);

	private boolean started;

	/**
	 * @param loops how many poll loops the run has
	 * @param running whether the container runs
	 * @param start starts the container's committer
	 * @param take hands a partition's polled records to the container
	 * @param drain the container's part of stopping, once every loop stopped polling
	 * @param finish the container's last part of stopping, once every consumer is closed
	 * @param drainTimeout how long a loop waits for the drain before its last commit
	 */
	ContainerRun(int loops, BooleanSupplier running, Runnable start,
			ToIntBiFunction<PartitionWork, List<Delivery>> take, Runnable drain, Runnable finish,
			Duration drainTimeout) {
		this.polling = new AtomicInteger(loops);
		this.open = new AtomicInteger(loops);
		this.running = running;
		this.start = start;
		this.take = take;
		this.drain = drain;
		this.finish = finish;
		this.drainTimeout = drainTimeout;
	}

	@Override
	public boolean isRunning() {
		return this.running.getAsBoolean();
	}

	/**
	 * Starts the committer on the first loop's thread; the other loops wait for it to
	 * end.
	 */
	@Override
	public synchronized void beforeSubscribing(PollLoop loop) {
		if (!this.started) {
			this.started = true;
			this.start.run();
		}
	}

	@Override
	public int take(PartitionWork work, List<Delivery> records) {
		return this.take.applyAsInt(work, records);
	}

	/** The last loop to stop polling drains the container. */
	@Override
	public void stoppedPolling(PollLoop loop) {
		if (this.polling.decrementAndGet() == 0) {
			this.drain.run();
			this.drained.countDown();
		}
	}

	@Override
	public void awaitDrained() {
		try {
			this.drained.await(this.drainTimeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** The last loop to close its consumer ends the run. */
	@Override
	public void closed(PollLoop loop) {
		if (this.open.decrementAndGet() == 0) {
			this.finish.run();
		}
	}

}
