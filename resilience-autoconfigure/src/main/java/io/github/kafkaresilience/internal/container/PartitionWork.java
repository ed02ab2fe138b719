package io.github.kafkaresilience.internal.container;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Predicate;

import io.github.kafkaresilience.internal.container.offsets.PartitionOffsets;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.internal.lock.Lock;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * One assigned partition: its records in flight in per-key queues (a key's records run
 * one at a time, in offset order), its parked records, the replays waiting for their
 * turn, its offsets, and the flags the poll loop reads. Every change happens under its
 * monitor; a revoked partition takes no more change.
 */
final class PartitionWork {

	/** What became of a record handed to the partition. */
	enum Taken {

		/**
		 * The partition is at its in-flight bound, or revoked: the record was not taken.
		 */
		REFUSED,

		/** Taken, behind an earlier record of its key. */
		QUEUED,

		/** Taken, and parked behind a parked record of its key. */
		PARKED,

		/**
		 * Taken, and parked: its tenant holds as many records in memory as it may.
		 */
		PARKED_AT_CAP,

		/** Taken, and first of its key: it runs now. */
		RUN

	}

	final TopicPartition partition;

	final RetryContainer.Route route;

	/**
	 * Records in flight before the partition is paused:
	 * {@code max-in-flight-per-partition}.
	 */
	private final int bound;

	/**
	 * The records in flight at or below which a partition paused at its bound resumes.
	 */
	private final int resumeAt;

	private final PartitionOffsets offsets = new PartitionOffsets();

	private final KeyQueues keyQueues = new KeyQueues();

	/** The replays whose admission waits in a key queue here, by lock id. */
	private final Set<String> admissions = new HashSet<>();

	/**
	 * The admissions of replays whose key had records parked here (at its tenant's cap,
	 * or behind them): each joins its key's queue once the last of them is taken back,
	 * behind them, as it must come after every record of its key taken before it.
	 */
	private final Map<Bytes, List<Lock>> deferredAdmissions = new HashMap<>();

	/**
	 * The offset of the last record taken from this partition (or the one before its
	 * committed offset): a replay admitted now goes behind it.
	 */
	private long lastTaken = -1;

	private long committed = -1;

	private volatile boolean revoked;

	/** The handler runs under way on this partition's records. */
	final HandlerRuns runs = new HandlerRuns();

	volatile boolean barrierOpen;

	final long assignedNanos = System.nanoTime();

	/** Written by the poll thread only; read by workers to tell it when there is room. */
	volatile boolean boundPaused;

	/** The records a poll returned past the bound. Poll thread only. */
	final HeldBack heldBack = new HeldBack();

	/** The parked records, as the re-reader sees them. */
	final ParkedRecords parked;

	/** Why the partition was stopped at a record that can go nowhere, or {@code null}. */
	volatile @Nullable String stopped;

	/** The end of the partition as of the last fetch, or -1. */
	volatile long endOffset = -1;

	/** The consumer's lag as of the last fetch: the end offset minus its position. */
	volatile long fetchLag;

	/**
	 * The tenants of the listener's records, or {@code null} when they have none.
	 */
	private final @Nullable Tenants tenants;

	/** The tenants' shares of the bound, or {@code null} without tenants. */
	private final @Nullable TenantShares shares;

	PartitionWork(TopicPartition partition, RetryContainer.Route route, int bound) {
		this(partition, route, bound, bound / 2, null);
	}

	/**
	 * @param resumeAt the records in flight at or below which a partition paused at its
	 * bound resumes
	 * @param tenants the tenants of the listener's records, or {@code null}: with
	 * tenants, one that holds its share of the bound in memory has its later records
	 * parked, to be read again when it has room, so the partition reads on
	 */
	PartitionWork(TopicPartition partition, RetryContainer.Route route, int bound, int resumeAt,
			@Nullable Tenants tenants) {
		this.partition = partition;
		this.route = route;
		this.bound = bound;
		this.resumeAt = resumeAt;
		this.parked = new ParkedRecords(this, this.offsets, bound);
		this.tenants = tenants;
		this.shares = (tenants != null) ? tenants.shares(bound, () -> this.parked.lookAgainBy(0)) : null;
	}

	/** The tenant of a record of this partition, or the empty string without tenants. */
	String tenantOf(Delivery record) {
		Tenants tenants = this.tenants;
		return (tenants != null) ? tenants.tenantOf(record) : "";
	}

	boolean isRevoked() {
		return this.revoked;
	}

	/**
	 * Whether the consumer may fetch from the partition, as far as the partition goes:
	 * its barrier is open, it is not paused at its bound and not stopped. Poll thread
	 * only.
	 */
	boolean mayFetch() {
		return this.barrierOpen && !this.boundPaused && this.stopped == null;
	}

	/**
	 * Takes a polled record, unless the partition is at its bound: it queues behind the
	 * earlier records of its key, or parks behind them if they are parked. With tenants,
	 * a record whose tenant holds its share of the bound in memory parks, if the
	 * partition may park more runs; otherwise it is refused, as at the bound.
	 */
	synchronized Taken take(RecordTask task) {
		if (this.revoked || this.offsets.inFlight() >= this.bound) {
			return Taken.REFUSED;
		}
		TenantShares shares = this.shares;
		boolean atCap = shares != null && shares.atCap(task.tenant());
		if (atCap && this.offsets.parkedRuns() >= this.bound) {
			return Taken.REFUSED; // parked in as many runs as it may: read on later
		}
		long offset = task.delivery.offset();
		this.offsets.add(offset);
		this.lastTaken = Math.max(this.lastTaken, offset);
		if (task.key != null && this.parked.count(task.key) > 0) {
			// an earlier record of its key is parked: this one parks behind it, in order
			this.offsets.park(offset);
			this.parked.add(task.key, 1, Long.MAX_VALUE);
			task.become(RecordState.PARKED);
			return Taken.PARKED;
		}
		if (shares != null && atCap) {
			// read again at once, and taken back once its tenant has drained to half its
			// cap
			this.offsets.park(offset);
			this.parked.add(task.key, 1, 0);
			shares.parkedAtCap(task.tenant());
			task.become(RecordState.PARKED);
			return Taken.PARKED_AT_CAP;
		}
		if (shares != null) {
			shares.taken(task.tenant());
		}
		return this.keyQueues.enqueue(task) ? Taken.RUN : Taken.QUEUED;
	}

	/**
	 * Takes a poll's records of this partition in offset order, as many as its bound lets
	 * in, under one acquisition of the monitor: a worker finishing a record takes it too,
	 * so a monitor taken once per record would keep the poll thread waiting behind the
	 * workers. Adds the tasks that run now to {@code run} and those parked behind their
	 * key to {@code parked}; returns how many records were taken.
	 */
	synchronized int takeAll(List<Delivery> records, List<RecordTask> run, List<RecordTask> parked) {
		int taken = 0;
		for (Delivery record : records) {
			RecordTask task = new RecordTask(this, record);
			Taken outcome = take(task);
			if (outcome == Taken.REFUSED) {
				break;
			}
			if (outcome == Taken.RUN) {
				run.add(task);
			}
			else if (outcome == Taken.PARKED || outcome == Taken.PARKED_AT_CAP) {
				parked.add(task);
			}
			taken++;
		}
		return taken;
	}

	/**
	 * Parks a task that waits for a due time far ahead, with every record of its key
	 * queued behind it: their offsets stay pending (no commit passes them) but the tasks
	 * are let go. Returns false when the partition has as many parked runs as its bound:
	 * the task then waits in memory. A revoked partition takes nothing and says it
	 * parked.
	 * @param lookAt when the re-reader should read the parked records again, epoch millis
	 */
	synchronized boolean park(RecordTask task, long lookAt) {
		if (this.revoked) {
			return true;
		}
		if (this.offsets.parkedRuns() >= this.bound) {
			return false;
		}
		int parked = 0;
		ArrayDeque<KeyedTask> queue = this.keyQueues.remove(task.key);
		if (queue != null) {
			for (KeyedTask queued : queue) {
				RecordTask record = (RecordTask) queued; // an admission waits for no due
															// time
				this.offsets.park(record.delivery.offset());
				record.become(RecordState.PARKED);
				released(record);
				parked++;
			}
		}
		else {
			this.offsets.park(task.delivery.offset());
			task.become(RecordState.PARKED);
			released(task);
			parked = 1;
		}
		this.parked.add(task.key, parked, lookAt);
		return true;
	}

	/**
	 * Takes back a parked record read again, behind the records of its key taken back
	 * before it; refused when the partition is at its bound (or revoked, or the offset is
	 * not parked): the record stays parked.
	 */
	synchronized Taken unpark(RecordTask task, List<AdmissionTask> admissions) {
		TenantShares shares = this.shares;
		if (this.revoked || this.offsets.inFlight() >= this.bound || (shares != null && shares.atCap(task.tenant()))
				|| !this.offsets.unpark(task.delivery.offset())) {
			return Taken.REFUSED;
		}
		this.parked.taken(task.key);
		if (shares != null) {
			shares.unparked(task.tenant());
		}
		Taken taken = this.keyQueues.enqueue(task) ? Taken.RUN : Taken.QUEUED;
		admissions.addAll(admissionsNoLongerDeferred());
		return taken;
	}

	/**
	 * Queues the admission of a replay's pending lock in its key's turn, behind the
	 * records of its key taken so far; returns it when it runs now, {@code null} when it
	 * waits its turn or is queued already.
	 */
	synchronized @Nullable AdmissionTask queueAdmission(Lock pending) {
		if (this.revoked || !this.admissions.add(pending.id())) {
			return null;
		}
		if (this.parked.count(pending.key()) > 0) {
			// records of its key taken before it are parked: it waits for them to be
			// taken back
			this.deferredAdmissions.computeIfAbsent(pending.key(), (key) -> new ArrayList<>()).add(pending);
			return null;
		}
		AdmissionTask task = new AdmissionTask(this, pending, this.lastTaken);
		return this.keyQueues.enqueue(task) ? task : null;
	}

	/**
	 * Queues the deferred admissions of the keys that have no record parked here any
	 * more, each behind the records of its key taken back; returns those that run now.
	 */
	private List<AdmissionTask> admissionsNoLongerDeferred() {
		if (this.deferredAdmissions.isEmpty()) {
			return List.of();
		}
		List<AdmissionTask> run = new ArrayList<>();
		for (Iterator<Map.Entry<Bytes, List<Lock>>> keys = this.deferredAdmissions.entrySet().iterator(); keys
			.hasNext();) {
			Map.Entry<Bytes, List<Lock>> deferred = keys.next();
			if (this.parked.count(deferred.getKey()) == 0) {
				keys.remove();
				for (Lock pending : deferred.getValue()) {
					AdmissionTask task = new AdmissionTask(this, pending, this.lastTaken);
					if (this.keyQueues.enqueue(task)) {
						run.add(task);
					}
				}
			}
		}
		return run;
	}

	/** An admission is done: returns the next task of its key, if one runs now. */
	synchronized @Nullable KeyedTask admitted(AdmissionTask task) {
		if (this.revoked) {
			return null;
		}
		this.admissions.remove(task.lockId);
		return this.keyQueues.done(task);
	}

	/**
	 * A record is done: returns the next task of its key, if one runs now. A rider whose
	 * batch ran it may be done before the record ahead of it: it leaves its key's queue,
	 * and the record ahead hands out the next one.
	 */
	synchronized @Nullable KeyedTask done(RecordTask task) {
		if (this.revoked) {
			return null;
		}
		this.offsets.done(task.delivery.offset());
		task.become(RecordState.DONE);
		released(task);
		return this.keyQueues.done(task);
	}

	/**
	 * Lets records queued behind a ready head of its key ride in its batch
	 * (docs/PROTOCOL.md, rule 10): the queued records right behind it in its key's queue,
	 * none of them an admission, at most {@code most}, as long as {@code fits} lets each
	 * in. They become {@link RecordState#RIDING}: they stay queued, in order, and are not
	 * handed out when the records before them are done; each is let go by {@link #done}
	 * once it ran, or by {@link #unride} when its batch did not get to it.
	 */
	synchronized List<RecordTask> riders(RecordTask head, int most, Predicate<RecordTask> fits) {
		List<RecordTask> riders = this.revoked ? List.of() : this.keyQueues.riders(head, most, fits);
		riders.forEach((rider) -> rider.become(RecordState.RIDING));
		return riders;
	}

	/**
	 * A rider's batch did not get to it: it waits in its key's queue, handed out when the
	 * records before it are done, or now if it is first of its key. Returns it when it
	 * runs now.
	 */
	synchronized @Nullable RecordTask unride(RecordTask rider) {
		rider.become(RecordState.QUEUED);
		return (!this.revoked && this.keyQueues.isHead(rider)) ? rider : null;
	}

	/**
	 * A record's handler failed: it becomes {@link RecordState#FAILURE_PENDING}. Returns
	 * whether it waits in its key's queue behind an earlier record (it rode in that one's
	 * batch), which hands it out once done.
	 */
	synchronized boolean failed(RecordTask task, RecordTask.PendingFailure failure) {
		task.failWith(failure);
		return isBehind(task);
	}

	/**
	 * A record's step failed: returns whether it waits in its key's queue behind an
	 * earlier record (it rode in that one's batch), {@link RecordState#QUEUED} to be
	 * routed again in its turn; otherwise it is {@link RecordState#WAITING} for a
	 * backoff.
	 */
	synchronized boolean routeFailed(RecordTask task) {
		boolean behind = isBehind(task);
		task.become(behind ? RecordState.QUEUED : RecordState.WAITING);
		return behind;
	}

	private boolean isBehind(RecordTask task) {
		return !this.revoked && this.keyQueues.isBehind(task);
	}

	/**
	 * Starts a run of a record: it becomes {@link RecordState#RUNNING} (a probe stays
	 * {@link RecordState#PROBING}); returns the rest of the step its failed run left, or
	 * {@code null} when it is routed afresh.
	 */
	RecordTask.@Nullable PendingFailure start(RecordTask task) {
		return task.startRun();
	}

	/**
	 * Moves a record to {@code state}, one of the transitions {@link RecordState#next()}
	 * allows.
	 */
	void advance(RecordTask task, RecordState state) {
		task.become(state);
	}

	/**
	 * A record handed back to the workers is {@link RecordState#QUEUED}, unless it waits
	 * for the rest of its failed step.
	 */
	void handBack(RecordTask task) {
		RecordState state = task.state();
		if (state != RecordState.QUEUED && state != RecordState.FAILURE_PENDING) {
			task.become(RecordState.QUEUED);
		}
	}

	/**
	 * Revokes the partition: it takes no more change. Returns the offset to restart from
	 * if it is assigned again before a commit, or -1.
	 */
	synchronized long revoke() {
		this.revoked = true;
		this.deferredAdmissions.clear(); // the next owner admits them once its barrier
											// opens
		if (this.shares != null) {
			this.shares.revoked();
		}
		return this.offsets.committable();
	}

	/** A record held in memory leaves it: done, or parked for its due time. */
	private void released(RecordTask task) {
		if (this.shares != null) {
			this.shares.released(task.tenant());
		}
	}

	/** How many records of a tenant this partition holds in memory. */
	synchronized int inFlightOf(String tenant) {
		return (this.shares != null) ? this.shares.inFlight(tenant) : 0;
	}

	/**
	 * The partition starts at its committed offset: a replay admitted now goes behind it.
	 */
	synchronized void startsAt(long committedOffset) {
		this.lastTaken = Math.max(this.lastTaken, committedOffset - 1);
	}

	synchronized int inFlight() {
		return this.offsets.inFlight();
	}

	/**
	 * Whether the partition has drained to where it resumes (half its bound, or nearer it
	 * for a listener whose results complete later): paused at its bound, it resumes.
	 */
	synchronized boolean hasRoom() {
		return this.offsets.inFlight() <= this.resumeAt;
	}

	/**
	 * Whether the poll loop has something to take or resume: the partition drained to
	 * where it resumes, or it has room for the records it holds back (for them all, or
	 * for an eighth of its bound), so that the workers are kept supplied from memory
	 * while it drains, without the poll loop taking them one at a time.
	 */
	synchronized boolean canTakeMore() {
		int inFlight = this.offsets.inFlight();
		int held = this.heldBack.size();
		return inFlight <= this.resumeAt
				|| (held > 0 && this.bound - inFlight >= Math.min(held, Math.max(1, this.bound / 8)));
	}

	synchronized boolean isFull() {
		return this.offsets.inFlight() >= this.bound;
	}

	/** The records of the busiest key, held or parked. */
	synchronized int busiestKeyDepth() {
		int busiest = this.keyQueues.deepest();
		for (Map.Entry<Bytes, Integer> entry : this.parked.keys().entrySet()) {
			busiest = Math.max(busiest, entry.getValue() + this.keyQueues.depth(entry.getKey()));
		}
		return busiest;
	}

	/** The first offset not done, or -1 when nothing was taken. */
	synchronized long firstPending() {
		return this.offsets.committable();
	}

	/** The offset to commit now, or empty when it is not beyond the last commit. */
	synchronized OptionalLong committable() {
		long committable = this.offsets.committable();
		return (committable > this.committed) ? OptionalLong.of(committable) : OptionalLong.empty();
	}

	/** The offset to commit once the given records are done, or empty as above. */
	synchronized OptionalLong committableOnceDone(Set<Long> done) {
		long committable = this.offsets.committableOnceDone(done);
		return (committable > this.committed) ? OptionalLong.of(committable) : OptionalLong.empty();
	}

	synchronized void committed(long offset) {
		this.committed = Math.max(this.committed, offset);
	}

	@Override
	public String toString() {
		return this.partition.toString();
	}

}
