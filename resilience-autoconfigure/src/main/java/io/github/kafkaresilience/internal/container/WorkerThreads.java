package io.github.kafkaresilience.internal.container;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.core.task.VirtualThreadTaskExecutor;

/**
 * The kind of thread a container's workers are, and the pool that makes them, named
 * {@code kafka-resilience-<id>-worker-<n>}. Platform workers are a fixed pool of
 * {@code concurrency} threads. Virtual workers (Java 21 or later) are a new virtual
 * thread for each drainer of the ready tasks: the drainers are at most
 * {@code concurrency}, which may then be in the thousands, and a handler that waits on
 * I/O frees its carrier thread.
 * <p>
 * Java 17 is the baseline, so nothing here names a Java 21 type: the virtual threads come
 * from Spring's {@link VirtualThreadTaskExecutor} and the executor that starts one per
 * task is looked up when first needed.
 */
public enum WorkerThreads {

	/** A fixed pool of platform threads. */
	PLATFORM {

		@Override
		ExecutorService workers(String id, int concurrency) {
			if (concurrency > MANY_PLATFORM_THREADS) {
				logger.warn("Listener '" + id + "' has a concurrency of " + concurrency + " on platform threads: each "
						+ "worker is an operating system thread with a stack of its own. On Java 21 or later, set "
						+ "kafka.resilience.consumer.virtual-threads=true (or spring.threads.virtual.enabled=true) to "
						+ "run the workers on virtual threads");
			}
			return Executors.newFixedThreadPool(concurrency, platform(prefix(id)));
		}

	},

	/** A new virtual thread for every task; Java 21 or later. */
	VIRTUAL {

		@Override
		ExecutorService workers(String id, int concurrency) {
			return threadPerTask(virtual(prefix(id)));
		}

	};

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(WorkerThreads.class);

	/**
	 * Above this many platform workers a listener warns that virtual threads may suit it
	 * better.
	 */
	static final int MANY_PLATFORM_THREADS = 256;

	/**
	 * A pool for the workers of a listener.
	 * @param id the listener id, for the thread names
	 * @param concurrency the most workers that run at once
	 */
	abstract ExecutorService workers(String id, int concurrency);

	/** Virtual workers when asked for, platform ones otherwise. */
	static WorkerThreads of(boolean virtual) {
		return virtual ? VIRTUAL : PLATFORM;
	}

	/** Whether this runtime has virtual threads: Java 21 or later. */
	public static boolean virtualAvailable() {
		return Runtime.version().feature() >= 21;
	}

	/** Whether a thread is virtual; always false before Java 21. */
	static boolean isVirtual(Thread thread) {
		if (!virtualAvailable()) {
			return false;
		}
		try {
			return (Boolean) Thread.class.getMethod("isVirtual").invoke(thread);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException(
					"Could not ask whether a thread is virtual on Java " + Runtime.version().feature(), ex);
		}
	}

	/** Daemon platform threads named {@code prefix} followed by 1, 2, ... */
	static ThreadFactory platform(String prefix) {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

	/**
	 * Virtual threads named {@code prefix} followed by 1, 2, ... (virtual threads are
	 * always daemons).
	 * @throws IllegalStateException before Java 21
	 */
	static ThreadFactory virtual(String prefix) {
		requireVirtual();
		ThreadFactory virtual = new VirtualThreadTaskExecutor().getVirtualThreadFactory();
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = virtual.newThread(runnable);
			thread.setName(prefix + count.incrementAndGet());
			return thread;
		};
	}

	private static String prefix(String id) {
		return "kafka-resilience-" + id + "-worker-";
	}

	/**
	 * Java 21's {@code Executors.newThreadPerTaskExecutor}: a thread per task, none kept.
	 */
	private static ExecutorService threadPerTask(ThreadFactory threads) {
		requireVirtual();
		try {
			Method factory = Executors.class.getMethod("newThreadPerTaskExecutor", ThreadFactory.class);
			return (ExecutorService) factory.invoke(null, threads);
		}
		catch (InvocationTargetException ex) {
			throw new IllegalStateException("Could not create a thread-per-task executor", ex.getCause());
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException("Could not create a thread-per-task executor", ex);
		}
	}

	private static void requireVirtual() {
		if (!virtualAvailable()) {
			throw new IllegalStateException(
					"Virtual threads need Java 21 or later; this is Java " + Runtime.version().feature());
		}
	}

}
