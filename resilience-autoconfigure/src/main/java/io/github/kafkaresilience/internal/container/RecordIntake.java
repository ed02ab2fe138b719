package io.github.kafkaresilience.internal.container;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import org.apache.kafka.common.TopicPartition;

/**
 * How records and the events that concern them reach a container's {@link RecordRunner}:
 * a poll's records, parked records read again, the admissions of replays and operators'
 * commands. Each becomes a task in its key's turn, or wakes the record it names.
 */
final class RecordIntake {

	private final RecordRunner runner;

	private final Partitions partitions;

	private final Workers workers;

	RecordIntake(RecordRunner runner, Partitions partitions) {
		this.runner = runner;
		this.partitions = partitions;
		this.workers = runner.workers();
	}

	/**
	 * Hears the lock registry of each route: a change of a key wakes its records that
	 * wait for it, a replay's pending lock queues its admission, and an operator's
	 * command wakes the record it names.
	 */
	void listenTo(Collection<RetryContainer.Route> routes) {
		Map<LockRegistry, RetryContainer.Route> registries = new HashMap<>();
		routes.forEach((route) -> registries.putIfAbsent(route.registry(), route));
		registries.forEach((registry, route) -> {
			registry.addListener(this.runner.waits().keyWaiters()::keyChanged);
			registry.addPendingListener((lock) -> admissionNeeded(route, lock));
			registry.addCommandListener((command) -> commandArrived(route, command));
		});
	}

	/**
	 * Takes a poll's records of a partition, in order, as many as its bound lets in, and
	 * runs those first of their key; returns how many were taken. A record parked behind
	 * its key at once, which an operator's command already names, is read again for it
	 * now: the command arrived before the record did.
	 */
	int takeAll(PartitionWork work, List<Delivery> records) {
		List<RecordTask> run = new ArrayList<>();
		List<RecordTask> parked = new ArrayList<>();
		int taken = work.takeAll(records, run, parked);
		this.workers.submitAll(run);
		Rereader rereader = this.runner.waits().rereader();
		for (RecordTask task : parked) {
			if (rereader != null && task.key != null && task.commandPending()) {
				rereader.commanded(work, task.key);
			}
		}
		if (rereader != null && !parked.isEmpty()) {
			rereader.wake(); // records parked at their tenant's cap are read again when
								// it
								// has room
		}
		return taken;
	}

	/**
	 * Hands a parked record read again back to its partition, behind the records of its
	 * key that were read again before it. Returns false when the partition has no room in
	 * its bound (or is gone): the record stays parked.
	 */
	boolean unpark(PartitionWork work, Delivery record) {
		RecordTask task = new RecordTask(work, record);
		List<AdmissionTask> admissions = new ArrayList<>();
		boolean taken = handOut(task, work.unpark(task, admissions));
		admissions.forEach(this.workers::submit); // their key's last parked record was
													// taken back
		return taken;
	}

	/**
	 * Submits a task its partition took as first of its key; returns whether it was
	 * taken.
	 */
	private boolean handOut(RecordTask task, PartitionWork.Taken taken) {
		if (taken == PartitionWork.Taken.RUN) {
			this.workers.submit(task);
		}
		return taken != PartitionWork.Taken.REFUSED;
	}

	/**
	 * A replayed dead letter's lock is pending (docs/PROTOCOL.md, rule 2.0): if its
	 * main-topic partition is assigned here and open, its admission takes its turn in its
	 * key's queue, behind the records of its key taken from the partition so far.
	 */
	void admissionNeeded(RetryContainer.Route route, Lock lock) {
		PartitionWork work = this.partitions
			.get(new TopicPartition(route.router().plan().mainTopic(), lock.originPartition()));
		if (work == null || !work.barrierOpen) {
			return; // the partition's owner admits it, or this instance once its barrier
					// opens
		}
		AdmissionTask task = work.queueAdmission(lock);
		if (task != null) {
			this.workers.submit(task);
		}
	}

	/**
	 * An operator's command (docs/PROTOCOL.md, rule 11) was written or read: if the
	 * record at its position is this container's and waits for its due time, in memory or
	 * parked, it is routed now, and the route acts on the command while it still applies.
	 */
	void commandArrived(RetryContainer.Route route, OperatorCommand command) {
		if (command.position().stage() > route.router().plan().lastStage()) {
			return; // names no stage of this ladder: no record of it is ever acted on
		}
		PartitionWork work = this.partitions
			.get(new TopicPartition(route.router().plan().topicOf(command.position().stage()), command.partition()));
		if (work == null || work.isRevoked()) {
			return; // whoever holds the record acts on it, after its barrier if it is
					// assigned later
		}
		Rereader rereader = this.runner.waits().rereader();
		if (rereader != null && work.parked.isParked(command.position().offset())) {
			rereader.commanded(work, command.key());
		}
		else {
			this.runner.waits().dueWaiters().commanded(command);
		}
	}

}
