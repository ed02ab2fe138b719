package io.github.kafkaresilience.internal.container;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.IntStream;

import io.github.kafkaresilience.internal.ladder.Step;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.kafkaresilience.internal.container.Records.ORDERS_0;
import static io.github.kafkaresilience.internal.container.Records.failing;
import static io.github.kafkaresilience.internal.container.Records.task;
import static io.github.kafkaresilience.internal.container.Records.work;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What the workers guarantee a key whose record is ready (docs/PROTOCOL.md,
 * "Guarantees"): it runs before the failure handling of other keys queued ahead of it,
 * and a key's next record that is ready when its record is done runs in the same turn, up
 * to {@value Workers#KEY_TURN}; failure handling still gets one turn in
 * {@value Turns#FAILURE_TURN} while records wait, and never every worker. Each test holds
 * the workers at a gate while it queues, so the order is decided by the queues alone, not
 * by timing.
 */
class WorkersSchedulingTests {

	private final PartitionWork work = work(ORDERS_0, 10_000);

	/**
	 * What ran, in order: {@code r<offset>} for a record's turn, {@code f<offset>} for
	 * failure handling.
	 */
	private final List<String> order = new CopyOnWriteArrayList<>();

	private final CountDownLatch gateReached = new CountDownLatch(1);

	private final CountDownLatch gateOpen = new CountDownLatch(1);

	private Workers workers;

	@AfterEach
	void stop() {
		this.gateOpen.countDown();
		if (this.workers != null) {
			this.workers.stop(Duration.ofSeconds(5));
		}
	}

	@Test
	void aReadyRecordRunsBeforeTheFailureHandlingQueuedAheadOfIt() throws InterruptedException {
		start(1, (task) -> {
		});
		closeGate();
		IntStream.rangeClosed(1, 5).forEach((offset) -> this.workers.submitFailure(failed(offset)));
		IntStream.rangeClosed(6, 8).forEach((offset) -> this.workers.submit(task(this.work, offset, "clean" + offset)));
		this.gateOpen.countDown();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.order.size() == 9);
		assertThat(this.order).containsExactly("r0", "r6", "r7", "r8", "f1", "f2", "f3", "f4", "f5");
	}

	@Test
	void failureHandlingTakesOneTurnInEightWhileRecordsWait() throws InterruptedException {
		start(1, (task) -> {
		});
		closeGate();
		this.workers.submitFailure(failed(101));
		this.workers.submitFailure(failed(102));
		IntStream.rangeClosed(1, 20).forEach((offset) -> this.workers.submit(task(this.work, offset, "k" + offset)));
		this.gateOpen.countDown();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.order.size() == 23);
		assertThat(this.order).containsExactly("r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "f101", "r8", "r9",
				"r10", "r11", "r12", "r13", "r14", "f102", "r15", "r16", "r17", "r18", "r19", "r20");
	}

	@Test
	void oneWorkerStaysFreeForReadyRecordsWhileTheOthersHandleFailures() throws InterruptedException {
		CountDownLatch failureRunning = new CountDownLatch(1);
		CountDownLatch failureMayEnd = new CountDownLatch(1);
		start(2, (task) -> {
			if (task.state() == RecordState.FAILURE_PENDING && task.delivery.offset() == 1) {
				failureRunning.countDown();
				pass(failureMayEnd);
			}
		});
		this.gateOpen.countDown();
		this.workers.submitFailure(failed(1));
		assertThat(failureRunning.await(10, TimeUnit.SECONDS)).isTrue();
		this.workers.submitFailure(failed(2));
		this.workers.submit(task(this.work, 3, "clean"));
		await().atMost(Duration.ofSeconds(10)).until(() -> this.order.contains("r3"));
		// of two workers one handles a failure: the other may take records only
		assertThat(this.order).containsExactly("r3");
		failureMayEnd.countDown();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.order.size() == 3);
		assertThat(this.order).containsExactly("r3", "f1", "f2");
	}

	@Test
	void aKeysNextReadyRecordRunsInTheSameTurnUpToThirtyTwoRecords() throws InterruptedException {
		// key a's records 1 to 40 each find the next one ready when done; key b's record
		// queued behind the first
		start(1, (Function<RecordTask, RecordTask>) (task) -> {
			long offset = task.delivery.offset();
			return (offset >= 1 && offset < 40) ? task(this.work, offset + 1, "a") : null;
		});
		closeGate();
		this.workers.submit(task(this.work, 1, "a"));
		this.workers.submit(task(this.work, 100, "b"));
		this.gateOpen.countDown();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.order.size() == 42);
		List<String> expected = new ArrayList<>(List.of("r0"));
		IntStream.rangeClosed(1, Workers.KEY_TURN).forEach((offset) -> expected.add("r" + offset));
		expected.add("r100");
		IntStream.rangeClosed(Workers.KEY_TURN + 1, 40).forEach((offset) -> expected.add("r" + offset));
		assertThat(this.order).containsExactlyElementsOf(expected);
	}

	@Test
	void aFailureHandlerLeavesTheNextRecordOfItsKeyToTheQueue() throws InterruptedException {
		start(1, (Function<RecordTask, RecordTask>) (task) -> (task.state() == RecordState.FAILURE_PENDING)
				? task(this.work, 2, "failing1") : null);
		closeGate();
		this.workers.submitFailure(failed(1));
		this.workers.submit(task(this.work, 3, "other"));
		this.gateOpen.countDown();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.order.size() == 4);
		assertThat(this.order).containsExactly("r0", "r3", "f1", "r2");
	}

	@Test
	void whileHeldARecordWaitsButTheFailureOfARunAlreadyMadeIsHandled() throws InterruptedException {
		start(1, (task) -> {
		});
		closeGate();
		this.workers.hold(Holds.APPLICATION);
		this.workers.submit(task(this.work, 1, "a"));
		this.workers.submitFailure(failed(2));
		// a rider whose run failed in its batch, handed out in its key's turn
		this.workers.submit(failed(3));
		this.gateOpen.countDown();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.order.contains("f2") && this.order.contains("f3"));
		assertThat(this.order).containsExactlyInAnyOrder("r0", "f2", "f3");
		this.workers.release(Holds.APPLICATION);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.order.size() == 4);
		assertThat(this.order).endsWith("r1");
	}

	@Test
	void theFailureHandlingOfARevokedPartitionOrOfAStoppingContainerIsDropped() {
		start(1, (task) -> {
		});
		this.gateOpen.countDown();
		PartitionWork revoked = work(ORDERS_0, 10);
		revoked.revoke();
		RecordTask lost = failing(revoked, 1, "a");
		this.workers.submitFailure(lost);
		this.workers.stopTaking();
		this.workers.submitFailure(failed(2));
		assertThat(this.workers.stop(Duration.ofSeconds(5))).isTrue();
		assertThat(this.order).isEmpty();
	}

	/**
	 * Starts workers that note each task they run, after {@code action}; task 0 is the
	 * gate: it keeps its worker until the gate opens.
	 */
	private void start(int concurrency, Consumer<RecordTask> action) {
		start(concurrency, (task) -> {
			action.accept(task);
			return null;
		});
	}

	/**
	 * Starts workers as above whose runner returns the next task of its key to run at
	 * once.
	 */
	private void start(int concurrency, Function<RecordTask, RecordTask> action) {
		this.workers = new Workers("scheduling", concurrency, WorkerThreads.PLATFORM, (next) -> {
			RecordTask task = (RecordTask) next;
			if (task.delivery.offset() == 0) {
				this.gateReached.countDown();
				pass(this.gateOpen);
			}
			boolean failure = task.state() == RecordState.FAILURE_PENDING;
			RecordTask following = action.apply(task);
			this.order.add((failure ? "f" : "r") + task.delivery.offset());
			return following;
		});
		this.workers.start();
	}

	/**
	 * Occupies the only worker with the gate task, so what is submitted next only queues.
	 */
	private void closeGate() throws InterruptedException {
		this.workers.submit(task(this.work, 0, "gate"));
		assertThat(this.gateReached.await(10, TimeUnit.SECONDS)).isTrue();
	}

	/**
	 * A record of a key of its own whose handler failed: the rest of its step waits to
	 * run.
	 */
	private RecordTask failed(long offset) {
		return failing(this.work, offset, "failing" + offset);
	}

	private static void pass(CountDownLatch latch) {
		try {
			latch.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
