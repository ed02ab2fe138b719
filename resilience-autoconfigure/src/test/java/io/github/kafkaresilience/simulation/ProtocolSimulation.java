package io.github.kafkaresilience.simulation;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.kafkaresilience.DependencyUnavailableException;
import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.internal.container.TestParkedPass;
import io.github.kafkaresilience.internal.container.TenantTally;
import io.github.kafkaresilience.internal.container.TestTenants;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.ladder.Step;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.internal.lock.Position;
import io.github.kafkaresilience.internal.outage.OutageBreaker;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.internal.ladder.ReadyRun;
import io.github.kafkaresilience.simulation.SimWorld.Fail;
import io.github.kafkaresilience.simulation.SimWorld.Incarnation;
import io.github.kafkaresilience.simulation.SimWorld.Rec;
import io.github.kafkaresilience.simulation.SimWorld.SimInstance;
import io.github.kafkaresilience.simulation.SimWorld.TP;
import io.github.kafkaresilience.simulation.SimWorld.Task;
import io.github.kafkaresilience.simulation.SimWorld.Wait;
import io.github.kafkaresilience.simulation.SimWorld.Work;
import io.github.kafkaresilience.internal.support.Futures;
import io.github.kafkaresilience.listener.TenantResolver;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;

/**
 * One seeded run of the protocol: a random but reproducible interleaving of producing
 * main records, polling, routing (the real {@code StageRouter}), lock tailers, clock
 * advances, commits, duplicate deliveries, crashes between any two port calls, rebalances
 * (with the sync barrier), failing writes, and concurrency (other actions run inside a
 * port call of a route in progress, as the container's workers and tailer threads do; a
 * route of an instance never starts while a route below it holds that instance's router
 * monitor, where a worker would block). At the end, the invariants are checked.
 * <p>
 * Some seeds also replay dead letters (or records that succeeded) into stage 1, and plant
 * records of another consumer group (or of none) in the stage and lock topics. A replay
 * entry is routed like any stage record; the owner of its main-topic partition admits its
 * pending lock the way {@code RetryContainer} does: an admission task joins the key's
 * queue of that partition (behind the records of the key taken so far; records taken
 * later queue behind it), catches its lock tailer up, then calls the real
 * {@code ReplayAdmission}. The pending locks a new owner finds when its sync barrier
 * opens are admitted the same way.
 * <p>
 * In most seeds the ports send without waiting ({@link SimSends}): a route that writes
 * returns SETTLING and its move goes on in the actions that land and acknowledge its
 * sends, where crashes, timeouts and other actions come between its steps. The container
 * model follows {@code RetryContainer}: a settling record stays at the head of its key's
 * queue with its offset pending until its writes complete (or is routed again after a
 * backoff when they fail), while the other keys go on, so moves of different keys
 * overlap. The other seeds write before returning and keep the interleavings of the
 * synchronous router.
 * <p>
 * About a third of the seeds have outages of the handler's dependency, and the
 * container's outage mode ({@code OutageHold}) is modelled like the rest of the
 * container: an instance whose breaker opened holds (its partitions paused, its ready
 * records held, a failed run held with the rest of its step dropped, queued failure
 * handling put back) until a probe ends the hold; the hold is the process's own, so a
 * crash ends it and a rebalance takes its partitions as they are.
 * <p>
 * About a third of the seeds have tenants, one of which floods the topic, and the
 * container's share of a partition per tenant is modelled with its own decision code:
 * each process has a real {@code Tenants}, each partition it holds that one's real
 * {@code TenantShares} (through {@link TestTenants}). A record is taken, parked at its
 * tenant's cap, or held back, as {@code PartitionWork.take} decides; a pass of the
 * re-reader ends at a record whose tenant is at its cap, as {@code PartitionWork.unpark}
 * refuses it; a record done, or parked for its due time, is released; a tenant that
 * drains to half its cap with records parked at it makes the re-reader look at once, and
 * a pass cut short looks again after the re-reader's idle interval. Crashes, rebalances
 * (which revoke the shares), duplicates and everything else interleave with it.
 */
final class ProtocolSimulation {

	private static final int MAX_NESTING = 2;

	/** The names of the tenants of a seed with tenants. */
	private static final String[] TENANTS = { "t0", "t1", "t2" };

	/**
	 * Steps without any write, handler run or commit after which a run is declared stuck.
	 */
	private static final int STALL_STEPS = 800;

	/** What one seed simulates. */
	record Config(long seed, int partitions, int instances, int records, int keys, List<Duration> delays,
			int maxAttempts, double pSuccess, double pPermanent, double pPoison, double pNullKey, double pJunkHeaders,
			double pCrashPerCall, double pNestPerCall, double pFailPerWrite, boolean splitOwnership, boolean zombies,
			boolean ambiguousWrites, boolean encodeLocks, int maxInFlight, double wTailer, double wClock,
			double wCommit, double wFaults, int replays, int foreign, boolean asyncWrites, int outages,
			int outageMillis, boolean unavailable, double pTrip, int probeMillis, boolean batches, int batchSize,
			int commands, int parkAfterMillis, boolean asyncResults, int tenants, int tenantCap, double pFlood) {

		static Config of(long seed) {
			return of(seed, true);
		}

		/**
		 * @param tenantsAllowed whether the seed may have tenants: without, it runs as it
		 * did before there were any
		 */
		private static Config of(long seed, boolean tenantsAllowed) {
			Random r = new Random(seed * 0x9E3779B97F4A7C15L + 17);
			int partitions = (r.nextInt(10) < 6) ? 1 : 2 + r.nextInt(2);
			int instances = 2 + r.nextInt(2);
			int records = 20 + r.nextInt(21);
			int keys = 3 + r.nextInt(3);
			List<Duration> delays;
			int ladder = r.nextInt(10);
			if (ladder < 3) {
				delays = List.of(Duration.ofSeconds(1)); // a single stage: the last-stage
															// re-append happens
			}
			else if (ladder < 9) {
				delays = List.of(Duration.ofSeconds(1), Duration.ofSeconds(2));
			}
			else {
				delays = List.of(Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2));
			}
			int maxAttempts = (r.nextInt(20) == 0) ? 1 + r.nextInt(2) : 3 + r.nextInt(2);
			double pSuccess = 0.35 + 0.5 * r.nextDouble();
			double pPermanent = (r.nextInt(4) == 0) ? 0 : 0.06 * r.nextDouble();
			double pPoison = (r.nextInt(3) == 0) ? 0.04 : 0;
			double pNullKey = (r.nextInt(3) == 0) ? 0.1 : 0;
			double pJunk = (r.nextInt(3) == 0) ? 0.2 : 0;
			double pCrash = (r.nextInt(10) < 3) ? 0 : 0.002 + 0.02 * r.nextDouble();
			double pNest = (r.nextInt(10) < 3) ? 0 : 0.05 + 0.25 * r.nextDouble();
			double pFail = (r.nextInt(2) == 0) ? 0 : 0.01 + 0.04 * r.nextDouble();
			boolean split = r.nextInt(4) == 0;
			boolean encode = r.nextInt(10) == 0;
			int maxInFlight = 2 + r.nextInt(7);
			double wTailer = 0.5 + 4.5 * r.nextDouble();
			double wClock = 0.3 + 2.7 * r.nextDouble();
			double wCommit = 0.3 + 2.7 * r.nextDouble();
			double wFaults = (r.nextInt(10) == 0) ? 0 : 0.5 + 1.5 * r.nextDouble();
			// a quarter of the seeds own the main and stage partitions of one number on
			// different
			// instances, as a listener's two consumers often do
			split = choice("simulation.split", split);
			// faults beyond what the protocol claims to survive (see
			// ProtocolSimulationTest): off unless asked for
			boolean zombies = option("simulation.zombies", r.nextInt(3) == 0, false);
			boolean ambiguous = option("simulation.ambiguous", r.nextBoolean(), false);
			if (!option("simulation.concurrency", true, true)) {
				pNest = 0;
			}
			// drawn last, so that every earlier draw (and a seed without either) stays as
			// it was
			int replays = (r.nextInt(2) == 0) ? 0 : 1 + r.nextInt(4);
			int foreign = (r.nextInt(5) < 2) ? 2 + r.nextInt(7) : 0;
			// most seeds send without waiting (moves settle in callbacks and overlap);
			// the others
			// write before returning, as a transaction's store does, and keep the old
			// interleavings
			boolean async = choice("simulation.async", r.nextInt(5) > 0);
			// drawn after everything else, for the same reason: outages of the handler's
			// dependency,
			// during which each instance's outage breaker may open and its container hold
			int outages = choice("simulation.outages", r.nextInt(3) == 0) ? 1 + r.nextInt(2) : 0;
			int outageMillis = 1_000 + r.nextInt(8_000);
			boolean unavailable = r.nextInt(3) == 0;
			double pTrip = 0.15 + 0.5 * r.nextDouble();
			int probeMillis = 200 + r.nextInt(1_300);
			// drawn last, for the same reason: a batch listener (docs/PROTOCOL.md, rule
			// 10), whose
			// ready records run in batches; its seeds have no outages, which batch
			// listeners share
			// with record listeners unchanged (the hold applies to each record's step
			// after its batch)
			boolean batches = choice("simulation.batches", r.nextInt(3) == 0);
			int batchSize = 1 + r.nextInt(6);
			if (batches) {
				outages = 0;
			}
			// drawn last, for the same reason: operators' commands on held keys
			// (docs/PROTOCOL.md, rule 11)
			int commands = choice("simulation.commands", r.nextInt(3) == 0) ? 2 + r.nextInt(6) : 0;
			// drawn last, for the same reason: parking (the container's Rereader), in
			// half the seeds,
			// of the records that wait longer than this for their due time
			boolean parking = choice("simulation.parking", r.nextBoolean());
			int parkAfterMillis = r.nextInt(1_500);
			// drawn last, for the same reason: a listener whose method returns a result
			// that completes
			// later (the container's AsyncRuns, or its BatchRuns for a batch listener);
			// its seeds have no
			// outages, which it shares with record listeners unchanged (the hold applies
			// to the step after
			// a completion)
			boolean asyncResults = choice("simulation.async-results", r.nextInt(4) == 0);
			if (asyncResults) {
				outages = 0;
			}
			// drawn last, for the same reason: tenants (the container's TenantShares), in
			// a third of the seeds: each key belongs to one of two or three tenants, the
			// first of which floods the topic, and a tenant holds at most a small cap of
			// a partition's records in memory (its later records there are parked); the
			// container parks records of tenants only with parking on
			boolean tenanted = choice("simulation.tenants", r.nextInt(3) == 0) && tenantsAllowed;
			// the flooding tenant has two keys at least: a flood of one key is a hot key,
			// whose followers at the last stage each cycle once per run of its head
			int tenants = Math.min(2 + r.nextInt(2), keys - 1);
			int tenantCap = 1 + r.nextInt(Math.min(3, maxInFlight - 1));
			double pFlood = 0.6 + 0.3 * r.nextDouble();
			return new Config(seed, partitions, instances, records, keys, delays, maxAttempts, pSuccess, pPermanent,
					pPoison, pNullKey, pJunk, pCrash, pNest, pFail, split, zombies, ambiguous, encode, maxInFlight,
					wTailer, wClock, wCommit, wFaults, replays, foreign, async, outages, outageMillis, unavailable,
					pTrip, probeMillis, batches, batchSize, commands, (parking || tenanted) ? parkAfterMillis : -1,
					asyncResults, tenanted ? tenants : 0, tenantCap, pFlood);
		}

		/**
		 * This configuration with failing writes that may land anyway
		 * ({@code -Dsimulation.ambiguous=true}).
		 */
		Config withAmbiguousWrites() {
			return new Config(this.seed, this.partitions, this.instances, this.records, this.keys, this.delays,
					this.maxAttempts, this.pSuccess, this.pPermanent, this.pPoison, this.pNullKey, this.pJunkHeaders,
					this.pCrashPerCall, this.pNestPerCall, this.pFailPerWrite, this.splitOwnership, this.zombies, true,
					this.encodeLocks, this.maxInFlight, this.wTailer, this.wClock, this.wCommit, this.wFaults,
					this.replays, this.foreign, this.asyncWrites, this.outages, this.outageMillis, this.unavailable,
					this.pTrip, this.probeMillis, this.batches, this.batchSize, this.commands, this.parkAfterMillis,
					this.asyncResults, this.tenants, this.tenantCap, this.pFlood);
		}

		/**
		 * This configuration without outages (for seeds that reproduce what was found
		 * before there were any).
		 */
		Config withoutOutages() {
			return new Config(this.seed, this.partitions, this.instances, this.records, this.keys, this.delays,
					this.maxAttempts, this.pSuccess, this.pPermanent, this.pPoison, this.pNullKey, this.pJunkHeaders,
					this.pCrashPerCall, this.pNestPerCall, this.pFailPerWrite, this.splitOwnership, this.zombies,
					this.ambiguousWrites, this.encodeLocks, this.maxInFlight, this.wTailer, this.wClock, this.wCommit,
					this.wFaults, this.replays, this.foreign, this.asyncWrites, 0, this.outageMillis, this.unavailable,
					this.pTrip, this.probeMillis, this.batches, this.batchSize, this.commands, this.parkAfterMillis,
					this.asyncResults, this.tenants, this.tenantCap, this.pFlood);
		}

		/**
		 * This configuration without tenants (for seeds that reproduce what was found
		 * before there were any): a seed parks, and replays, as it drew before.
		 */
		Config withoutTenants() {
			Config drawn = of(this.seed, false);
			int parkAfterMillis = drawn.parkAfterMillis();
			return new Config(this.seed, this.partitions, this.instances, this.records, this.keys, this.delays,
					this.maxAttempts, this.pSuccess, this.pPermanent, this.pPoison, this.pNullKey, this.pJunkHeaders,
					this.pCrashPerCall, this.pNestPerCall, this.pFailPerWrite, this.splitOwnership, this.zombies,
					this.ambiguousWrites, this.encodeLocks, this.maxInFlight, this.wTailer, this.wClock, this.wCommit,
					this.wFaults, drawn.replays(), this.foreign, this.asyncWrites, this.outages, this.outageMillis,
					this.unavailable, this.pTrip, this.probeMillis, this.batches, this.batchSize, this.commands,
					parkAfterMillis, this.asyncResults, 0, this.tenantCap, this.pFlood);
		}

		/**
		 * {@code true}, {@code false}, or, when not set or {@code random}, this seed's
		 * draw.
		 */
		private static boolean choice(String property, boolean draw) {
			String value = System.getProperty(property, "random");
			return "random".equalsIgnoreCase(value) ? draw : Boolean.parseBoolean(value);
		}

		/** {@code true}, {@code false}, or {@code random} (this seed's draw). */
		private static boolean option(String property, boolean draw, boolean otherwise) {
			String value = System.getProperty(property, Boolean.toString(otherwise));
			return "random".equalsIgnoreCase(value) ? draw : Boolean.parseBoolean(value);
		}

		@Override
		public String toString() {
			return String.format(
					"seed=%d partitions=%d instances=%d records=%d keys=%d delays=%s maxAttempts=%d pSuccess=%.2f "
							+ "pPermanent=%.3f pPoison=%.2f pNullKey=%.2f junkHeaders=%.2f crash/call=%.4f "
							+ "nest/call=%.3f fail/write=%.3f splitOwnership=%s zombies=%s ambiguousWrites=%s "
							+ "encodeLocks=%s maxInFlight=%d wTailer=%.1f wClock=%.1f wCommit=%.1f wFaults=%.1f "
							+ "replays=%d foreignRecords=%d asyncWrites=%s outages=%d outageMillis=%d unavailable=%s "
							+ "pTrip=%.2f probeMillis=%d batches=%s batchSize=%d commands=%d parkAfterMillis=%d "
							+ "asyncResults=%s tenants=%d tenantCap=%d pFlood=%.2f",
					this.seed, this.partitions, this.instances, this.records, this.keys, this.delays, this.maxAttempts,
					this.pSuccess, this.pPermanent, this.pPoison, this.pNullKey, this.pJunkHeaders, this.pCrashPerCall,
					this.pNestPerCall, this.pFailPerWrite, this.splitOwnership, this.zombies, this.ambiguousWrites,
					this.encodeLocks, this.maxInFlight, this.wTailer, this.wClock, this.wCommit, this.wFaults,
					this.replays, this.foreign, this.asyncWrites, this.outages, this.outageMillis, this.unavailable,
					this.pTrip, this.probeMillis, this.batches, this.batchSize, this.commands, this.parkAfterMillis,
					this.asyncResults, this.tenants, this.tenantCap, this.pFlood);
		}

		/**
		 * Whether records waiting long for their due time are parked (the container's
		 * {@code park-after}).
		 */
		boolean parking() {
			return this.parkAfterMillis >= 0;
		}

		/**
		 * The share of a partition's bound one tenant may fill, for a cap of
		 * {@link #tenantCap} records.
		 */
		double maxShare() {
			return (this.tenantCap + 0.5) / this.maxInFlight;
		}

	}

	/** Counters of what happened, summed over seeds to show what the runs covered. */
	static final class Stats {

		long runs;

		long steps;

		long records;

		long handlerRuns;

		long successes;

		long dlqPermanent;

		long dlqExhausted;

		long dlqPoison;

		long stageRecords;

		long lockRecords;

		long crashes;

		long crashesInRoute;

		long rebalances;

		long duplicates;

		long injectedFailures;

		long nestedActions;

		long zombieResults;

		long waitUntil;

		long commandSeeds;

		long commands;

		long voidCommands;

		long duplicateCommands;

		long foreignCommands;

		long commandedRuns;

		long commandedDeadLetters;

		long commandsEnded;

		long crashesAfterAccepting;

		/** Seeds that park records waiting for their due time. */
		long parkingSeeds;

		/**
		 * Records let go of in memory: heads waiting for their due time and their keys'
		 * records.
		 */
		long parked;

		/**
		 * Passes of the re-reader for due records, and for operators' commands on parked
		 * records.
		 */
		long duePasses;

		long commandPasses;

		/**
		 * Parked records taken back by the passes for due records, and by those for
		 * commands.
		 */
		long takenWhenDue;

		long takenForCommands;

		/** Commands on several heads of one partition accepted in one action. */
		long commandBursts;

		/**
		 * Commands accepted while the accepting table held another pending command of the
		 * same partition.
		 */
		long commandsBesideOthers;

		long waitKey;

		long waitTailer;

		long replays;

		long admissions;

		long replaysRun;

		long admittedBehindLocks;

		long admissionsAtBarrier;

		long foreignStageRecords;

		long foreignLockRecords;

		long asyncRuns;

		long sends;

		long acks;

		long landedBeforeAck;

		long timeouts;

		long settling;

		long overlappingMoves;

		long failedSettles;

		long zombieCallbacks;

		long landedAtCrash;

		long lostAtCrash;

		long deferredRebalances;

		/**
		 * Runs of the handler that failed, whose failure handling was a turn of its own.
		 */
		long failedRuns;

		/** Routes of a batch listener that let a record run: it waited for a batch. */
		long readyRuns;

		/**
		 * Batches run; runs of a record again in a bisected batch; batches the method
		 * stopped short.
		 */
		long batches;

		long bisectionRuns;

		long partialBatches;

		/** Records a batch did not get to: routed again without an attempt. */
		long notRunInBatch;

		/**
		 * Records that rode in a batch behind an earlier record of their key; those held
		 * back by its failure.
		 */
		long riders;

		long ridersHeldBack;

		/** Seeds of a batch listener. */
		long batchRuns;

		/**
		 * Seeds of a listener whose results complete later; its calls; results completed
		 * and taken on.
		 */
		long asyncSeeds;

		long asyncCalls;

		long asyncCompleted;

		/**
		 * Results that completed after their partition was revoked or their instance
		 * died: dropped.
		 */
		long asyncDropped;

		/** Results that completed while an operator's command named their record. */
		long asyncBesideCommand;

		/** Batches whose result completed and was taken on. */
		long asyncBatches;

		/**
		 * Failure handling lost when its instance crashed or its partition was revoked
		 * before it ran.
		 */
		long failuresLost;

		/** Seeds with outages of the handler's dependency. */
		long outageRuns;

		/** Times an instance's outage breaker opened: its container held. */
		long holds;

		/** Holds that a probe's run ended (it succeeded, or failed for good). */
		long holdsClosedByProbe;

		/** Holds that ended because no record was held to probe with. */
		long holdsClosedEmpty;

		/**
		 * Held records run as probes, and how many of them failed and were held again.
		 */
		long probes;

		long failedProbes;

		/** Probes that were an admission, or whose route threw. */
		long probesWithoutVerdict;

		/**
		 * Runs that failed during a hold and were held: the rest of their step dropped,
		 * no attempt counted.
		 */
		long heldRuns;

		/**
		 * Failure handling queued before a hold, put back when its turn came during the
		 * hold (its rest dropped).
		 */
		long heldFailuresPutBack;

		/** Crashes of an instance while it held. */
		long holdCrashes;

		/**
		 * Partitions revoked from an instance while it held, and assigned to one while it
		 * held.
		 */
		long holdRevocations;

		long holdAssignments;

		/**
		 * Tasks in flight at a holding instance (records, held or not, and admissions)
		 * when a crash or a rebalance took them: their records are uncommitted and
		 * delivered again.
		 */
		long heldDropped;

		/**
		 * Seeds in which a holding instance crashed, and in which a partition was revoked
		 * from one.
		 */
		long seedsWithHoldCrash;

		long seedsWithHoldRevocation;

		/** Seeds whose records have tenants. */
		long tenantSeeds;

		/**
		 * Records of the tenants other than the flooding one, produced in those seeds.
		 */
		long beside;

		/** Records parked when taken: their tenant held as many in memory as it may. */
		long parkedAtCap;

		/**
		 * Records held back when polled: their tenant was at its cap and the partition
		 * had as many parked runs as its bound.
		 */
		long heldBackAtCap;

		/**
		 * Passes of the re-reader cut short at a record whose tenant was at its cap.
		 */
		long refusedAtCap;

		/**
		 * Times a tenant drained to half its cap with records parked at it: a look at the
		 * partition's parked records was asked for at once.
		 */
		long tenantLooks;

		/**
		 * Records waiting long for their due time left in memory: the partition had as
		 * many parked runs as its bound.
		 */
		long parkingFull;

		synchronized void add(Stats other) {
			this.runs += other.runs;
			this.steps += other.steps;
			this.records += other.records;
			this.handlerRuns += other.handlerRuns;
			this.successes += other.successes;
			this.dlqPermanent += other.dlqPermanent;
			this.dlqExhausted += other.dlqExhausted;
			this.dlqPoison += other.dlqPoison;
			this.stageRecords += other.stageRecords;
			this.lockRecords += other.lockRecords;
			this.crashes += other.crashes;
			this.crashesInRoute += other.crashesInRoute;
			this.rebalances += other.rebalances;
			this.duplicates += other.duplicates;
			this.injectedFailures += other.injectedFailures;
			this.nestedActions += other.nestedActions;
			this.zombieResults += other.zombieResults;
			this.waitUntil += other.waitUntil;
			this.waitKey += other.waitKey;
			this.waitTailer += other.waitTailer;
			this.replays += other.replays;
			this.admissions += other.admissions;
			this.replaysRun += other.replaysRun;
			this.admittedBehindLocks += other.admittedBehindLocks;
			this.admissionsAtBarrier += other.admissionsAtBarrier;
			this.foreignStageRecords += other.foreignStageRecords;
			this.foreignLockRecords += other.foreignLockRecords;
			this.asyncRuns += other.asyncRuns;
			this.sends += other.sends;
			this.acks += other.acks;
			this.landedBeforeAck += other.landedBeforeAck;
			this.timeouts += other.timeouts;
			this.settling += other.settling;
			this.overlappingMoves += other.overlappingMoves;
			this.failedSettles += other.failedSettles;
			this.zombieCallbacks += other.zombieCallbacks;
			this.landedAtCrash += other.landedAtCrash;
			this.lostAtCrash += other.lostAtCrash;
			this.failedRuns += other.failedRuns;
			this.readyRuns += other.readyRuns;
			this.batches += other.batches;
			this.bisectionRuns += other.bisectionRuns;
			this.partialBatches += other.partialBatches;
			this.notRunInBatch += other.notRunInBatch;
			this.riders += other.riders;
			this.ridersHeldBack += other.ridersHeldBack;
			this.batchRuns += other.batchRuns;
			this.asyncSeeds += other.asyncSeeds;
			this.asyncCalls += other.asyncCalls;
			this.asyncCompleted += other.asyncCompleted;
			this.asyncDropped += other.asyncDropped;
			this.asyncBesideCommand += other.asyncBesideCommand;
			this.asyncBatches += other.asyncBatches;
			this.failuresLost += other.failuresLost;
			this.deferredRebalances += other.deferredRebalances;
			this.outageRuns += other.outageRuns;
			this.holds += other.holds;
			this.holdsClosedByProbe += other.holdsClosedByProbe;
			this.holdsClosedEmpty += other.holdsClosedEmpty;
			this.probes += other.probes;
			this.failedProbes += other.failedProbes;
			this.probesWithoutVerdict += other.probesWithoutVerdict;
			this.heldRuns += other.heldRuns;
			this.heldFailuresPutBack += other.heldFailuresPutBack;
			this.holdCrashes += other.holdCrashes;
			this.holdRevocations += other.holdRevocations;
			this.holdAssignments += other.holdAssignments;
			this.heldDropped += other.heldDropped;
			this.seedsWithHoldCrash += other.seedsWithHoldCrash;
			this.seedsWithHoldRevocation += other.seedsWithHoldRevocation;
			this.commandSeeds += other.commandSeeds;
			this.commands += other.commands;
			this.voidCommands += other.voidCommands;
			this.duplicateCommands += other.duplicateCommands;
			this.foreignCommands += other.foreignCommands;
			this.commandedRuns += other.commandedRuns;
			this.commandedDeadLetters += other.commandedDeadLetters;
			this.commandsEnded += other.commandsEnded;
			this.crashesAfterAccepting += other.crashesAfterAccepting;
			this.parkingSeeds += other.parkingSeeds;
			this.parked += other.parked;
			this.duePasses += other.duePasses;
			this.commandPasses += other.commandPasses;
			this.takenWhenDue += other.takenWhenDue;
			this.takenForCommands += other.takenForCommands;
			this.commandBursts += other.commandBursts;
			this.commandsBesideOthers += other.commandsBesideOthers;
			this.tenantSeeds += other.tenantSeeds;
			this.beside += other.beside;
			this.parkedAtCap += other.parkedAtCap;
			this.heldBackAtCap += other.heldBackAtCap;
			this.refusedAtCap += other.refusedAtCap;
			this.tenantLooks += other.tenantLooks;
			this.parkingFull += other.parkingFull;
		}

		@Override
		public synchronized String toString() {
			return "runs=" + this.runs + " steps=" + this.steps + " records=" + this.records + " handlerRuns="
					+ this.handlerRuns + " successes=" + this.successes + " dlq(permanent/exhausted/poison)="
					+ this.dlqPermanent + "/" + this.dlqExhausted + "/" + this.dlqPoison + " stageRecords="
					+ this.stageRecords + " lockRecords=" + this.lockRecords + " crashes=" + this.crashes
					+ " (inside a route: " + this.crashesInRoute + ") rebalances=" + this.rebalances + " duplicates="
					+ this.duplicates + " injectedWriteFailures=" + this.injectedFailures + " nestedActions="
					+ this.nestedActions + " zombieResults=" + this.zombieResults + " waits(until/key/tailer)="
					+ this.waitUntil + "/" + this.waitKey + "/" + this.waitTailer + " replays=" + this.replays
					+ " (admissions: " + this.admissions + ", queued when a barrier opened: " + this.admissionsAtBarrier
					+ ", admitted behind live locks of their key: " + this.admittedBehindLocks + ", run: "
					+ this.replaysRun + ") foreign(stage/lock)=" + this.foreignStageRecords + "/"
					+ this.foreignLockRecords + " async(runs=" + this.asyncRuns + " sends=" + this.sends + " acks="
					+ this.acks + " landedBeforeAck=" + this.landedBeforeAck + " timeouts=" + this.timeouts
					+ " settling=" + this.settling + " overlappingOtherKeys=" + this.overlappingMoves
					+ " failedSettles=" + this.failedSettles + " zombieCallbacks=" + this.zombieCallbacks
					+ " atCrash(landed/lost)=" + this.landedAtCrash + "/" + this.lostAtCrash
					+ " rebalancesDeferredForMovesInFlight=" + this.deferredRebalances + ") failedRuns="
					+ this.failedRuns + " (failure handling lost to a crash or a rebalance: " + this.failuresLost
					+ ") outages(runs=" + this.outageRuns + " holds=" + this.holds + " closedByProbe="
					+ this.holdsClosedByProbe + " closedWithNothingHeld=" + this.holdsClosedEmpty + " probes="
					+ this.probes + " failedProbes=" + this.failedProbes
					+ " probesWithoutVerdict(admission/route threw)=" + this.probesWithoutVerdict + " heldRuns="
					+ this.heldRuns + " heldFailuresPutBack=" + this.heldFailuresPutBack + " crashesWhileHolding="
					+ this.holdCrashes + " (seeds: " + this.seedsWithHoldCrash + ") revokedWhileHolding="
					+ this.holdRevocations + " (seeds: " + this.seedsWithHoldRevocation + ") assignedWhileHolding="
					+ this.holdAssignments + " tasksOfAHolderTakenByCrashOrRebalance=" + this.heldDropped
					+ ") batches(seeds=" + this.batchRuns + " batches=" + this.batches + " readyRuns=" + this.readyRuns
					+ " partial=" + this.partialBatches + " bisectionRuns=" + this.bisectionRuns + " notRun="
					+ this.notRunInBatch + " riders=" + this.riders + " ridersHeldBack=" + this.ridersHeldBack
					+ ") asyncResults(seeds=" + this.asyncSeeds + " calls=" + this.asyncCalls + " completed="
					+ this.asyncCompleted + " droppedAfterRevocationOrCrash=" + this.asyncDropped + " besideACommand="
					+ this.asyncBesideCommand + " batches=" + this.asyncBatches + ") commands(seeds="
					+ this.commandSeeds + " written=" + this.commands + " staleWhenWritten=" + this.voidCommands
					+ " duplicates=" + this.duplicateCommands + " ofAnotherGroup=" + this.foreignCommands
					+ " earlyRuns=" + this.commandedRuns + " deadLetters=" + this.commandedDeadLetters + " ended="
					+ this.commandsEnded + " crashesAfterAccepting=" + this.crashesAfterAccepting + " bursts="
					+ this.commandBursts + " besidePendingOnes=" + this.commandsBesideOthers + ") parking(seeds="
					+ this.parkingSeeds + " parked=" + this.parked + " duePasses=" + this.duePasses + " takenWhenDue="
					+ this.takenWhenDue + " commandPasses=" + this.commandPasses + " takenForCommands="
					+ this.takenForCommands + ") tenants(seeds=" + this.tenantSeeds + " recordsBesideTheFlood="
					+ this.beside + " parkedAtCap=" + this.parkedAtCap + " heldBackAtCap=" + this.heldBackAtCap
					+ " passesCutShortAtCap=" + this.refusedAtCap + " looksWhenDrained=" + this.tenantLooks
					+ " farOffKeptInMemory=" + this.parkingFull + ")";
		}

	}

	/** The outcome of one seed. */
	record Result(Config config, String failure, String trace, Stats stats) {

		boolean ok() {
			return this.failure == null;
		}

	}

	private final Config config;

	private final Random rnd;

	private final SimWorld world;

	private final Map<TP, Incarnation> owners = new LinkedHashMap<>();

	private final List<TP> allTopicPartitions = new ArrayList<>();

	private final Stats stats = new Stats();

	private final long budget;

	private final long faultSteps;

	private long steps;

	private int depth;

	/** Replays written so far. */
	private int replays;

	/** Records of other groups planted so far. */
	private int foreign;

	/** Operator commands written so far, and those of our group, for duplicates. */
	private int commandsWritten;

	/**
	 * The records of an asynchronous listener whose results are pending, in any instance,
	 * live or not.
	 */
	private final List<Task> pendingResults = new ArrayList<>();

	/**
	 * The batches of an asynchronous batch listener whose results are pending, in any
	 * instance, live or not.
	 */
	private final List<PendingBatch> pendingBatches = new ArrayList<>();

	/** A batch called on an instance, whose result completes later. */
	private record PendingBatch(Incarnation inc, List<Task> taken) {
	}

	private final List<OperatorCommand> ourCommands = new ArrayList<>();

	private long lastProgress = -1;

	private long lastProgressStep;

	private long traceMark;

	private boolean stalled;

	/**
	 * A violation (or a bug of the model) thrown where a future swallows it: inside a
	 * callback chained on a write. The scheduler throws it after the action.
	 */
	private Throwable deferred;

	/**
	 * The incarnations whose outage breaker is open, with their hold (the container's
	 * {@code OutageHold}): local to the process, gone with it when it dies.
	 */
	private final Map<Incarnation, Hold> holds = new HashMap<>();

	/** For each outage of the handler's dependency: the step it begins at. */
	private final long[] outageStarts;

	/** For each outage: the clock time it ends at, once it began; -1 before. */
	private final long[] outageEnds;

	/**
	 * The draws about outages, apart from the scheduler's: a seed without outages runs as
	 * it did before them.
	 */
	private final Random outageRnd;

	/**
	 * An instance holds: its partitions are paused, its ready records held, a probe due
	 * now and then.
	 */
	private static final class Hold {

		final long since;

		long probeAt;

		int failedProbes;

		/** A probe is running (another action may come inside one of its port calls). */
		boolean probing;

		Hold(long since, long probeAt) {
			this.since = since;
			this.probeAt = probeAt;
		}

	}

	ProtocolSimulation(Config config, boolean tracing) {
		this.config = config;
		this.rnd = new Random(config.seed());
		this.world = new SimWorld(SimWorld.plan(config.delays(), config.maxAttempts()), config.partitions(),
				config.encodeLocks());
		if (tracing) {
			this.world.trace = new SimWorld.Trace(Integer.getInteger("simulation.trace", 100_000));
		}
		this.world.async = config.asyncWrites();
		// a batch listener's and an asynchronous one's routers leave the runs to the
		// container
		this.world.batches = config.batches() || config.asyncResults();
		// acknowledgements are actions too: an async run takes about twice the steps
		int scale = config.asyncWrites() ? 2 : 1;
		this.budget = (2_000 + 150L * config.records()) * scale;
		this.faultSteps = 12L * config.records() * scale;
		this.outageRnd = new Random(config.seed() * 31 + 7);
		this.outageStarts = new long[config.outages()];
		this.outageEnds = new long[config.outages()];
		for (int i = 0; i < config.outages(); i++) {
			// within the steps that have faults, so that crashes and rebalances fall into
			// holds
			this.outageStarts[i] = (long) (this.faultSteps * (0.05 + 0.7 * this.outageRnd.nextDouble()));
			this.outageEnds[i] = -1;
		}
	}

	static Result run(long seed, boolean tracing) {
		return run(Config.of(seed), tracing);
	}

	static Result run(Config config, boolean tracing) {
		return new ProtocolSimulation(config, tracing).run();
	}

	Result run() {
		String failure = null;
		try {
			setUp();
			while (!finished()) {
				if (this.world.progress != this.lastProgress) {
					this.lastProgress = this.world.progress;
					this.lastProgressStep = this.steps;
					this.traceMark = (this.world.trace != null) ? this.world.trace.count() : 0;
				}
				if (this.steps >= this.budget || this.steps - this.lastProgressStep > STALL_STEPS) {
					String state = describeState();
					String kind = state.contains("DEADLOCK:")
							? "(liveness: a stale copy waits for a move whose source is queued behind it)"
							: state.contains("BLOCKED:")
									? "(liveness: a carrier waits for a predecessor's move "
											+ "whose source is queued behind it)"
									: state.contains("LEAKED:") ? "(liveness: a live lock names a committed record)"
											: "(liveness)";
					this.stalled = true;
					throw new SimViolation(kind + " not finished: no progress after step " + this.lastProgressStep
							+ " (trace below ends there):\n" + state);
				}
				step();
				rethrowDeferred();
				checkCommandWakes();
				if (this.config.tenants() > 0) {
					checkTenantShares();
				}
			}
			List<String> violations = this.world.finalViolations();
			if (!violations.isEmpty()) {
				failure = String.join("\n", violations);
			}
		}
		catch (SimViolation ex) {
			failure = ex.getMessage();
		}
		catch (Throwable ex) {
			StringWriter out = new StringWriter();
			ex.printStackTrace(new PrintWriter(out));
			failure = "unexpected " + out;
		}
		collectStats();
		String trace = null;
		if (this.world.trace != null) {
			long end = this.stalled ? this.traceMark + 20 : this.world.trace.count();
			trace = this.world.trace.tail(end, Integer.getInteger("simulation.traceTail", 150));
			trace += history(failure);
		}
		return new Result(this.config, failure, trace, this.stats);
	}

	/**
	 * The trace lines about the lock or the record a failure names: often far before the
	 * tail.
	 */
	private String history(String failure) {
		if (failure == null) {
			return "";
		}
		int newline = failure.indexOf('\n');
		String first = (newline < 0) ? failure : failure.substring(0, newline);
		if (first.contains("(liveness")) {
			first = failure; // the state dump below the first line names the stuck lock
		}
		Matcher blocked = Pattern.compile("BLOCKED: \\S+ carries Lock\\[(\\S+) .*? predecessor Lock\\[(\\S+) ")
			.matcher(first);
		if (blocked.find()) {
			String ids = blocked.group(1) + "|" + blocked.group(2);
			return "\nHistory of locks " + blocked.group(1) + " and " + blocked.group(2) + " (every trace line naming "
					+ "them):\n" + this.world.trace.grep(Pattern.compile("\\b(" + ids + ")\\b"), 80) + "\n";
		}
		Matcher lock = Pattern.compile(
				"(LEAKED: |stale copy of |live locks left in the lock log[^:]*: \\[|unconfirmed move of |the carrier of )"
						+ "Lock\\[(L\\d+|[0-9a-f-]{36})")
			.matcher(first);
		if (lock.find()) {
			String id = lock.group(2);
			return "\nHistory of lock " + id + " (every trace line naming it):\n"
					+ this.world.trace.grep(Pattern.compile("\\b" + id + "\\b"), 60) + "\n";
		}
		Matcher record = Pattern.compile("^\\(1\\) lost: #(\\d+)\\(\\S+/(\\d+)/(\\d+) ").matcher(first);
		if (record.find()) {
			String pattern = "#" + record.group(1) + "\\(|orders/" + record.group(2) + "/" + record.group(3)
					+ "\\b|orig=" + record.group(3) + "\\]";
			return "\nHistory of record #" + record.group(1) + " (every trace line naming it; orig= lines may be "
					+ "of another partition):\n" + this.world.trace.grep(Pattern.compile(pattern), 60) + "\n";
		}
		Matcher replay = Pattern.compile("replay#(\\d+)\\(").matcher(first);
		if (replay.find()) {
			SimWorld.Replay life = this.world.replays.get(Integer.parseInt(replay.group(1)));
			String pattern = "replay#" + replay.group(1) + "\\(" + ((life.lockId != null) ? "|" + life.lockId : "");
			return "\nHistory of " + life + " (every trace line naming it or its lock):\n"
					+ this.world.trace.grep(Pattern.compile(pattern), 60) + "\n";
		}
		return "";
	}

	private void collectStats() {
		this.stats.runs = 1;
		this.stats.steps = this.steps;
		this.stats.records = this.world.produced.size();
		this.world.produced.forEach((p) -> {
			this.stats.handlerRuns += p.runs;
			this.stats.successes += (p.firstSuccess >= 0) ? 1 : 0;
		});
		this.stats.replays = this.world.replays.size();
		this.world.replays.forEach((replay) -> {
			this.stats.admissions += replay.admissions;
			this.stats.replaysRun += (replay.runs > 0) ? 1 : 0;
			this.stats.admittedBehindLocks += (replay.behind > 0) ? 1 : 0;
			this.stats.handlerRuns += replay.runs;
		});
		this.stats.foreignStageRecords = this.world.planted.size();
		this.stats.foreignLockRecords = this.world.plantedLocks;
		this.stats.asyncRuns = this.config.asyncWrites() ? 1 : 0;
		this.stats.sends = this.world.sends.sent;
		this.stats.acks = this.world.sends.acknowledged;
		this.stats.timeouts = this.world.sends.timeouts;
		this.stats.landedAtCrash = this.world.sends.landedAtCrash;
		this.stats.lostAtCrash = this.world.sends.lostAtCrash;
		this.stats.outageRuns = (this.config.outages() > 0) ? 1 : 0;
		this.stats.batchRuns = this.config.batches() ? 1 : 0;
		this.stats.asyncSeeds = this.config.asyncResults() ? 1 : 0;
		this.stats.commandSeeds = (this.config.commands() > 0) ? 1 : 0;
		this.stats.commandedRuns = this.world.commandedRuns;
		this.stats.commandedDeadLetters = this.world.commandedDeadLetters;
		this.stats.commandsEnded = this.world.commandsEnded;
		this.stats.parkingSeeds = this.config.parking() ? 1 : 0;
		this.stats.tenantSeeds = (this.config.tenants() > 0) ? 1 : 0;
		this.stats.seedsWithHoldCrash = (this.stats.holdCrashes > 0) ? 1 : 0;
		this.stats.seedsWithHoldRevocation = (this.stats.holdRevocations > 0) ? 1 : 0;
		for (int p = 0; p < this.config.partitions(); p++) {
			for (Rec rec : this.world.log(this.world.plan.dlqTopic(), p)) {
				String reason = ProtocolHeaders.text(rec.headers(), ProtocolHeaders.DLQ_REASON);
				if ("permanent".equals(reason)) {
					this.stats.dlqPermanent++;
				}
				else if ("exhausted".equals(reason)) {
					this.stats.dlqExhausted++;
				}
				else {
					this.stats.dlqPoison++;
				}
			}
			for (int s = 1; s <= this.world.plan.lastStage(); s++) {
				this.stats.stageRecords += this.world.log(this.world.plan.stage(s).topic(), p).size();
			}
			this.stats.lockRecords += this.world.lockEnd(p);
		}
	}

	// ---- set-up

	private void setUp() {
		for (int i = 1; i <= this.config.instances(); i++) {
			SimInstance instance = this.world.addInstance("I" + i);
			listen(instance.current);
		}
		for (int p = 0; p < this.config.partitions(); p++) {
			for (String topic : this.world.plan.consumedTopics()) {
				this.allTopicPartitions.add(new TP(topic, p));
			}
		}
		assignOrphans(new ArrayList<>(this.allTopicPartitions));
		this.world.policy = this::decide;
		this.world.hook = this::beforeCall;
		this.world.landsAtCrash = (send) -> this.rnd.nextBoolean();
	}

	private void listen(Incarnation incarnation) {
		if (this.config.tenants() > 0) {
			// the container's Tenants: its tally and its wake of the re-reader are the
			// process's own
			incarnation.tenants = new TestTenants(SimWorld.GROUP, this::tenantOf, this.config.maxShare());
			incarnation.tenants.rereadWith(() -> this.stats.tenantLooks++);
			if (incarnation.tenants.capOf(this.config.maxInFlight()) != this.config.tenantCap()) {
				throw new IllegalStateException("a share of " + this.config.maxShare() + " of "
						+ this.config.maxInFlight() + " gives a cap of "
						+ incarnation.tenants.capOf(this.config.maxInFlight()) + ", not " + this.config.tenantCap());
			}
		}
		incarnation.table.addListener((key) -> {
			for (Work work : incarnation.works.values()) {
				for (Task task : work.tasks) {
					if (task.wait == Wait.KEY && key.equals(task.key)) {
						task.woken = true;
					}
				}
			}
		});
		incarnation.table.addPendingListener((lock) -> admissionNeeded(incarnation, lock));
		incarnation.table.addCommandListener((command) -> commandArrived(incarnation, command));
	}

	/**
	 * An operator's command was applied to an incarnation's table (the container's
	 * {@code commandArrived}): if the record it names is parked here, a pass of the
	 * re-reader for it is asked for; a record waiting in memory is woken by
	 * {@link #commanded(Task)}.
	 */
	private void commandArrived(Incarnation incarnation, OperatorCommand command) {
		if (!this.config.parking() || command.position().stage() > this.world.plan.lastStage()) {
			return;
		}
		Work work = incarnation.works
			.get(new TP(this.world.plan.stage(command.position().stage()).topic(), command.partition()));
		if (work != null && !work.revoked && work.parked.contains(command.position().offset())) {
			work.commandPasses.add(command.key());
			trace(() -> "    " + incarnation + " asks its re-reader for the key of " + work.tp + "/"
					+ command.position().offset() + ", which " + command + " names");
		}
	}

	/**
	 * Parks a task that waits for its due time, with every record of its key queued
	 * behind it (the container's {@code PartitionWork.park}): their offsets stay pending,
	 * the tasks are let go, and a pass of the re-reader takes them back. A key whose
	 * queue holds a running task (a rider of a batch) keeps waiting in memory.
	 */
	private void park(Task task, String indent) {
		Work work = task.work;
		ArrayDeque<Task> queue = (task.key != null) ? work.queues.get(task.key) : null;
		List<Task> parking = (queue != null) ? new ArrayList<>(queue) : List.of(task);
		if (parking.get(0) != task || parking.stream().anyMatch((t) -> t.rec == null || (t != task && t.running))) {
			return;
		}
		if (work.shares != null && parkedRuns(work) >= this.config.maxInFlight()) {
			this.stats.parkingFull++; // the container's park refuses: the task waits in
										// memory
			trace(() -> indent + "  " + work.owner + " keeps " + task + " in memory: " + work.tp + " has "
					+ parkedRuns(work) + " parked runs");
			return;
		}
		for (Task parked : parking) {
			work.tasks.remove(parked);
			work.parked.add(parked.rec.offset());
			this.stats.parked++;
			if (work.shares != null) {
				work.shares.released(parked.tenant); // let go of in memory
			}
		}
		if (work.shares != null) {
			work.lookAt = Math.min(work.lookAt, task.dueAt);
		}
		if (task.key != null) {
			work.queues.remove(task.key);
			work.parkedKeys.merge(task.key, parking.size(), Integer::sum);
		}
		trace(() -> indent + "  " + work.owner + " parks " + parking.size() + " record(s) of key " + keyName(task.rec)
				+ " from " + task);
		if (task.key != null && commanded(work, task.rec)) {
			work.commandPasses.add(task.key); // a command arrived while we were looking
		}
	}

	/**
	 * When the first parked record of a partition may run: a pass for due records starts
	 * there.
	 */
	private long parkedDue(Work work) {
		return work.owner.router.earliestRun(
				this.world.log(work.tp.topic(), work.tp.partition()).get(work.parked.first().intValue()).delivery());
	}

	/**
	 * One pass of the re-reader over a partition's parked records, from the first one,
	 * deciding with the container's own {@code ParkedPass}: for the keys commands asked
	 * for there, if any (a random part of them, as commands arrive while passes run),
	 * else for the records that are due. A record taken back queues behind the records of
	 * its key in memory, as a polled one does; one the partition has no room for ends the
	 * pass.
	 */
	private void reread(Work work) {
		Set<Bytes> keys = new LinkedHashSet<>();
		for (Bytes key : work.commandPasses) {
			if (keys.isEmpty() || this.rnd.nextBoolean()) {
				keys.add(key);
			}
		}
		work.commandPasses.removeAll(keys);
		keys.retainAll(work.parkedKeys.keySet()); // the others were taken back already
		if (keys.isEmpty() && Math.max(parkedDue(work), work.lookAt) > this.world.clock.millis()) {
			return;
		}
		TestParkedPass pass = keys.isEmpty() ? TestParkedPass.forDueRecords(0) : TestParkedPass.forCommands(keys);
		List<Rec> log = this.world.log(work.tp.topic(), work.tp.partition());
		long now = this.world.clock.millis();
		int taken = 0;
		boolean cutShort = false;
		for (Long offset : new ArrayList<>(work.parked)) {
			Rec rec = log.get(offset.intValue());
			Bytes key = (rec.key() != null) ? Bytes.wrap(rec.key()) : null;
			TestParkedPass.Verdict verdict = pass.next(key, () -> work.owner.router.earliestRun(rec.delivery()), now);
			if (verdict == TestParkedPass.Verdict.STOP) {
				break;
			}
			if (verdict == TestParkedPass.Verdict.LEAVE) {
				continue;
			}
			if (work.tasks.size() >= this.config.maxInFlight()) {
				cutShort = true;
				break;
			}
			String tenant = (work.shares != null) ? tenantOf(work, rec) : null;
			if (work.shares != null && work.shares.atCap(tenant)) {
				// the container's unpark refuses it: nothing after it is taken back
				this.stats.refusedAtCap++;
				cutShort = true;
				trace(() -> work.owner + " re-reads " + rec + " of tenant " + tenant + ", at its cap: the pass ends");
				break;
			}
			work.parked.remove(offset);
			if (key != null) {
				work.parkedKeys.computeIfPresent(key, (k, count) -> (count > 1) ? count - 1 : null);
			}
			if (work.parked.isEmpty()) {
				work.parkedKeys.clear();
			}
			Task back = new Task(work, rec, false);
			if (work.shares != null) {
				back.tenant = tenant;
				work.shares.unparked(tenant);
			}
			enqueue(work, back);
			admissionsNoLongerDeferred(work);
			taken++;
		}
		if (work.shares != null && keys.isEmpty()) {
			// the container's re-reader looks again after its idle interval when the pass
			// was cut short, and when the next parked record is due otherwise
			work.lookAt = cutShort ? now + 200 : 0;
		}
		int back = taken;
		if (keys.isEmpty()) {
			this.stats.duePasses++;
			this.stats.takenWhenDue += taken;
		}
		else {
			this.stats.commandPasses++;
			this.stats.takenForCommands += taken;
			for (Bytes key : keys) {
				if (work.parkedKeys.containsKey(key)) {
					if (!cutShort) {
						throw new SimViolation("(13) a pass of " + work.owner + " over " + work.tp + " for operators' "
								+ "commands left records of key " + new String(key.get(), StandardCharsets.UTF_8)
								+ " parked");
					}
					work.commandPasses.add(key); // cut short for lack of room: asked for
													// again
				}
			}
		}
		trace(() -> work.owner + " re-reads " + work.tp
				+ (keys.isEmpty() ? " (due records)" : " for commands on keys " + keys) + ": " + back + " taken back");
	}

	/**
	 * (13) An accepted command is acted on promptly (docs/PROTOCOL.md, rule 11): a parked
	 * record that a pending command applying to its lock names, at its owner, has a pass
	 * of the re-reader asked for (a record waiting in memory is woken at once, see
	 * {@link #commanded}).
	 */
	private void checkCommandWakes() {
		for (SimInstance instance : this.world.instances) {
			Incarnation inc = instance.current;
			if (inc.dead || !this.config.parking() || inc.table.commands().isEmpty()) {
				continue;
			}
			for (OperatorCommand command : inc.table.commands()) {
				if (command.position().stage() > this.world.plan.lastStage()) {
					continue;
				}
				Work work = inc.works
					.get(new TP(this.world.plan.stage(command.position().stage()).topic(), command.partition()));
				Lock lock = inc.table.find(command.lockId());
				long offset = command.position().offset();
				if (work != null && !work.revoked && work.parked.contains(offset) && lock != null
						&& command.appliesTo(lock) && !work.commandPasses.contains(command.key())) {
					throw new SimViolation("(13) " + command + " applies to " + lock + " at " + inc + ", where "
							+ work.tp + "/" + offset + " is parked with no pass of the re-reader asked for");
				}
			}
		}
	}

	/**
	 * (14) A tenant never holds more than its cap of a partition's records in memory
	 * (taken, not parked, not done), and the container's {@code TenantShares} of each
	 * partition count what the partition holds of each tenant, and its
	 * {@code TenantTally} the sum over the partitions its process holds.
	 */
	private void checkTenantShares() {
		List<String> tenants = new ArrayList<>(List.of(TENANTS).subList(0, this.config.tenants()));
		tenants.add(TenantResolver.UNKNOWN);
		for (SimInstance instance : this.world.instances) {
			Incarnation inc = instance.current;
			Map<String, Integer> total = new HashMap<>();
			for (Work work : inc.works.values()) {
				Map<String, Integer> held = new HashMap<>();
				for (Task task : work.tasks) {
					if (task.rec != null) {
						held.merge(task.tenant, 1, Integer::sum);
					}
				}
				for (String tenant : tenants) {
					int inMemory = held.getOrDefault(tenant, 0);
					if (inMemory > this.config.tenantCap()) {
						throw new SimViolation("(14) tenant " + tenant + " holds " + inMemory + " records of " + work.tp
								+ " in memory at " + inc + ", more than its cap of " + this.config.tenantCap() + ": "
								+ work.tasks);
					}
					if (work.shares.inFlight(tenant) != inMemory) {
						throw new SimViolation("(14) the tenant shares of " + work.tp + " at " + inc + " count "
								+ work.shares.inFlight(tenant) + " records of tenant " + tenant + " in memory, which "
								+ "holds " + inMemory + ": " + work.tasks);
					}
					total.merge(tenant, inMemory, Integer::sum);
				}
			}
			for (TenantTally.TenantFigures figures : inc.tenants.tally().figures()) {
				if (figures.inFlight() != total.getOrDefault(figures.tenant(), 0)) {
					throw new SimViolation("(14) the tally of " + inc + " counts " + figures.inFlight()
							+ " records of tenant " + figures.tenant() + " in flight, its partitions "
							+ total.getOrDefault(figures.tenant(), 0));
				}
			}
		}
	}

	/**
	 * A pending lock was applied to an incarnation's table: if it owns the lock's
	 * main-topic partition and has seen its barrier open, the admission joins the key's
	 * queue there, behind the records of the key taken so far (the container's
	 * {@code admissionNeeded}).
	 */
	private boolean admissionNeeded(Incarnation incarnation, Lock lock) {
		Work work = incarnation.works.get(new TP(SimWorld.MAIN, lock.originPartition()));
		if (work == null || !work.opened || work.revoked || !work.admissions.add(lock.id())) {
			return false; // the partition's owner admits it, or this one once its barrier
							// opens
		}
		if (work.parkedKeys.containsKey(lock.key())) {
			// records of its key taken before it are parked: it waits until they are
			// taken back
			work.deferredAdmissions.computeIfAbsent(lock.key(), (k) -> new ArrayList<>()).add(lock);
			trace(() -> "    " + incarnation + " defers the admission of " + lock.id() + " behind parked records");
			return true;
		}
		queueAdmission(work, lock);
		return true;
	}

	private void queueAdmission(Work work, Lock lock) {
		Task task = new Task(work, lock, work.fetchPos - 1);
		work.tasks.add(task);
		work.queues.computeIfAbsent(task.key, (k) -> new ArrayDeque<>()).add(task);
		trace(() -> "    " + work.owner + " queues the " + task);
	}

	/**
	 * The deferred admissions of keys with no record parked any more join their key's
	 * queue, behind the records taken back (the container's {@code unpark}).
	 */
	private void admissionsNoLongerDeferred(Work work) {
		for (Iterator<Map.Entry<Bytes, List<Lock>>> keys = work.deferredAdmissions.entrySet().iterator(); keys
			.hasNext();) {
			Map.Entry<Bytes, List<Lock>> deferred = keys.next();
			if (!work.parkedKeys.containsKey(deferred.getKey())) {
				keys.remove();
				deferred.getValue().forEach((lock) -> queueAdmission(work, lock));
			}
		}
	}

	/**
	 * The main-topic partitions of an incarnation whose sync barrier has just opened:
	 * their pending locks are admitted (the container's {@code open}).
	 */
	private void openBarriers(Incarnation incarnation) {
		for (Work work : incarnation.works.values()) {
			if (!work.opened && work.barrierOpen() && SimWorld.MAIN.equals(work.tp.topic())) {
				work.opened = true;
				for (Lock lock : incarnation.table.pending(work.tp.partition())) {
					if (admissionNeeded(incarnation, lock)) {
						this.stats.admissionsAtBarrier++;
					}
				}
			}
		}
	}

	private HandlerResult decide(SimWorld.Produced record, Delivery delivery) {
		if (record.poison) {
			return HandlerResult.poison(new IllegalArgumentException("cannot deserialize " + record));
		}
		boolean down = this.outageEnds.length > 0 && outageNow();
		double r = this.rnd.nextDouble();
		if (!down && r < this.config.pSuccess()) {
			return HandlerResult.success();
		}
		if (down ? r < this.config.pPermanent() : r < this.config.pSuccess() + this.config.pPermanent()) {
			return HandlerResult.failed(new PermanentFailureException("simulated permanent failure of " + record));
		}
		if (down) {
			return outageFailure(record, delivery);
		}
		return HandlerResult.failed(new IllegalStateException("simulated transient failure of " + record));
	}

	// ---- outages of the handler's dependency, and the container's hold (OutageHold)

	private void beginOutages() {
		for (int i = 0; i < this.outageStarts.length; i++) {
			if (this.outageEnds[i] < 0 && this.steps >= this.outageStarts[i]) {
				long millis = (long) (this.config.outageMillis() * (0.5 + this.outageRnd.nextDouble()));
				this.outageEnds[i] = this.world.clock.millis() + millis;
				trace(() -> "OUTAGE of the handler's dependency begins: every run fails until "
						+ SimWorld.rel(this.world.clock.millis() + millis));
			}
		}
	}

	private boolean outageNow() {
		long now = this.world.clock.millis();
		for (long end : this.outageEnds) {
			if (end >= 0 && now < end) {
				return true;
			}
		}
		return false;
	}

	/**
	 * A run during an outage fails transiently (unless it failed for good first). The
	 * run's instance opens its breaker at once when the handler says that its dependency
	 * is unavailable, or else now and then on a first attempt, as its window of records
	 * of the main topic trips: it holds from now on, this run included.
	 */
	private HandlerResult outageFailure(SimWorld.Produced record, Delivery delivery) {
		Incarnation inc = this.world.contexts.peek().incarnation;
		RuntimeException failure = this.config.unavailable()
				? new DependencyUnavailableException("simulated outage: the dependency of " + record + " is down")
				: new IllegalStateException("simulated outage: the dependency of " + record + " is down");
		if (!this.holds.containsKey(inc) && (OutageBreaker.isUnavailable(failure)
				|| (SimWorld.MAIN.equals(delivery.topic()) && this.outageRnd.nextDouble() < this.config.pTrip()))) {
			openHold(inc, OutageBreaker.isUnavailable(failure) ? "the handler says its dependency is unavailable"
					: "its window of first attempts tripped");
		}
		return HandlerResult.failed(failure);
	}

	private void openHold(Incarnation inc, String why) {
		Hold hold = new Hold(this.steps, this.world.clock.millis() + nextProbe(0));
		this.holds.put(inc, hold);
		this.stats.holds++;
		trace(() -> "    HOLD " + inc + " opens its outage breaker (" + why + "): it takes no records and runs none "
				+ "ready; first probe at " + SimWorld.rel(hold.probeAt));
	}

	private void closeHold(Incarnation inc, Hold hold, String why) {
		this.holds.remove(inc);
		trace(() -> "    HOLD " + inc + " closes its outage breaker (held since step " + hold.since + "): " + why
				+ "; every record held is routed again");
	}

	/**
	 * The probe interval, doubled after each failed probe up to eight times, less up to a
	 * fifth.
	 */
	private long nextProbe(int failedProbes) {
		long millis = Math.min((long) this.config.probeMillis() << Math.min(failedProbes, 10),
				8L * this.config.probeMillis());
		return millis - this.outageRnd.nextInt((int) (millis / 5) + 1);
	}

	/**
	 * Whether a failed run is held instead of handled (the breaker's {@code holds}): a
	 * failure saying that the dependency is unavailable always is, any other transient
	 * failure while the instance holds; a permanent failure or a poison record never is.
	 */
	private boolean heldFailure(Incarnation inc, HandlerResult result) {
		if (result == null || result.outcome() != HandlerResult.Outcome.FAILURE || result.failure() == null) {
			return false;
		}
		Throwable failure = result.failure();
		return OutageBreaker.isUnavailable(failure)
				|| (this.holds.containsKey(inc) && !this.world.classifier.isPermanent(failure));
	}

	/**
	 * The records an instance holds: ready to run but for its hold (failure handling is
	 * never held).
	 */
	private List<Task> heldTasks(Incarnation inc) {
		List<Task> held = new ArrayList<>();
		for (Work work : inc.works.values()) {
			for (Task task : work.tasks) {
				if (task.wait != Wait.FAILED && isReady(task)) {
					held.add(task);
				}
			}
		}
		return held;
	}

	/**
	 * A probe (the container's {@code OutageHold.probe}): one held record runs although
	 * the instance holds; with none held, the breaker closes.
	 */
	private void probe(Incarnation inc) {
		Hold hold = this.holds.get(inc);
		List<Task> held = heldTasks(inc);
		if (held.isEmpty()) {
			this.stats.holdsClosedEmpty++;
			closeHold(inc, hold, "no record was left to probe with");
			return;
		}
		Task task = held.get(this.rnd.nextInt(held.size()));
		this.stats.probes++;
		trace(() -> inc + " PROBE with " + task);
		hold.probing = true;
		try {
			route(task, hold);
		}
		finally {
			hold.probing = false;
		}
	}

	/**
	 * A probe that never reached {@code OutageHold.heldAfter}: an admission, or a route
	 * that threw. The simulation probes again at once, as for a probe that did not reach
	 * the handler.
	 */
	private void probeWithoutVerdict(Incarnation inc, Hold probe, String why) {
		this.stats.probesWithoutVerdict++;
		probeAgain(inc, probe, why);
	}

	/** The probe's run gave no verdict on the outage: another probe, now. */
	private void probeAgain(Incarnation inc, Hold probe, String why) {
		if (this.holds.get(inc) == probe) {
			probe.probeAt = this.world.clock.millis();
			trace(() -> "    " + inc + " probes again: " + why);
		}
	}

	/**
	 * After a run (the container's {@code OutageHold.heldAfter}): a failure that is held
	 * puts the record back, the rest of its step dropped (no write, no attempt counted),
	 * to be routed again from the start; a probe's other outcomes close the breaker, or,
	 * when the run did not reach the handler, call for another probe. Returns whether the
	 * record was held.
	 */
	private boolean heldAfter(Task task, Step step, Hold probe, String indent) {
		Incarnation inc = task.work.owner;
		boolean current = probe != null && this.holds.get(inc) == probe;
		HandlerResult failure = (step.kind() == Step.Kind.FAILED) ? step.failure() : null;
		if (failure != null && heldFailure(inc, failure)) {
			this.stats.heldRuns++;
			task.wait = Wait.NONE;
			if (current) {
				probe.failedProbes++;
				this.stats.failedProbes++;
				probe.probeAt = this.world.clock.millis() + nextProbe(probe.failedProbes);
			}
			trace(() -> indent + "  -> FAILED, held"
					+ (current ? " (probe failed; next at " + SimWorld.rel(probe.probeAt) + ")" : "")
					+ ": the rest of its step dropped, routed again once the hold ends");
			return true;
		}
		if (current) {
			switch (step.kind()) {
				case DONE, SETTLING, FAILED -> {
					this.stats.holdsClosedByProbe++;
					closeHold(inc, probe, "the probe " + task + " ran to " + step.kind());
				}
				default -> probeAgain(inc, probe, "the probe did not reach the handler");
			}
		}
		return false;
	}

	private Fail beforeCall(Incarnation incarnation, SimWorld.Call call) {
		boolean faults = faultsOn();
		if (faults && this.rnd.nextDouble() < this.config.pCrashPerCall()) {
			this.stats.crashesInRoute++;
			crash(incarnation.instance, "before its " + call + " call");
			return Fail.NONE; // the port throws Crash: the incarnation is dead
		}
		if (this.depth < MAX_NESTING && this.rnd.nextDouble() < this.config.pNestPerCall()) {
			// other workers, the tailer and time go on while this call waits: a burst of
			// actions
			this.depth++;
			try {
				do {
					this.stats.nestedActions++;
					step();
				}
				while (!incarnation.dead && this.rnd.nextInt(3) > 0 && this.steps < this.budget);
			}
			finally {
				this.depth--;
			}
		}
		if (faults && call.isWrite() && this.rnd.nextDouble() < this.config.pFailPerWrite()) {
			SimWorld.RouteContext context = this.world.contexts.peek();
			if (context != null && !context.failureInjected) {
				context.failureInjected = true;
				this.stats.injectedFailures++;
				return (this.config.ambiguousWrites() && this.rnd.nextBoolean()) ? Fail.AMBIGUOUS : Fail.CLEAN;
			}
		}
		return Fail.NONE;
	}

	private boolean faultsOn() {
		return this.steps < this.faultSteps && this.config.wFaults() > 0;
	}

	// ---- the scheduler

	private boolean finished() {
		if (this.world.produced.size() < this.config.records() || !this.world.sends.isEmpty()) {
			return false;
		}
		for (TP tp : this.allTopicPartitions) {
			if (this.world.committed(tp) < this.world.log(tp.topic(), tp.partition()).size()) {
				return false;
			}
			Incarnation owner = this.owners.get(tp);
			if (!owner.works.get(tp).tasks.isEmpty()) {
				return false;
			}
		}
		return true;
	}

	private enum Action {

		PRODUCE, POLL, ROUTE, TAILER, COMMIT, CLOCK, RECHECK, DUPLICATE, CRASH, REBALANCE, REPLAY, FOREIGN,

		/** A pass of an instance's re-reader over a partition's parked records. */
		REREAD,

		/** A send under way lands in its log; its acknowledgement comes later. */
		LAND,

		/**
		 * A send under way is acknowledged (landing first if it has not): what was
		 * chained on it runs.
		 */
		ACK,

		/**
		 * A send's timeout fires before its acknowledgement (with ambiguous writes only).
		 */
		TIMEOUT,

		/**
		 * A holding instance runs one of its held records as a probe, or closes its
		 * breaker when none is held.
		 */
		PROBE,

		/** A batch listener's instance runs a batch of its records that may run now. */
		BATCH,

		/**
		 * The result of a call of an asynchronous listener's method completes, on a
		 * thread of its own: a worker of its instance takes the rest of the record's
		 * step, unless its partition was revoked or its instance died meanwhile.
		 */
		COMPLETE,

		/**
		 * An operator's command on a held key is accepted by an instance and written to
		 * the lock topic.
		 */
		COMMAND

	}

	private void step() {
		this.steps++;
		if (this.outageStarts.length > 0) {
			beginOutages();
		}
		boolean faults = faultsOn();
		List<Work> pollable = new ArrayList<>();
		List<Task> ready = new ArrayList<>();
		List<Task> sleeping = new ArrayList<>();
		List<Work> committable = new ArrayList<>();
		List<long[]> tailers = new ArrayList<>();
		List<Incarnation> probing = new ArrayList<>();
		Map<Incarnation, List<Task>> batchable = new LinkedHashMap<>();
		List<Work> rereadable = new ArrayList<>();
		long nextDue = Long.MAX_VALUE;
		for (SimInstance instance : this.world.instances) {
			Incarnation inc = instance.current;
			Hold hold = this.holds.isEmpty() ? null : this.holds.get(inc);
			for (int p = 0; p < this.config.partitions(); p++) {
				if (inc.tailerPos[p] < this.world.lockEnd(p)) {
					tailers.add(new long[] { this.world.instances.indexOf(instance), p });
				}
			}
			// a route in progress below us may hold the router's monitor (a synchronized
			// section of
			// StageRouter): a worker of that instance would block on it, so none of its
			// routes runs here
			boolean routerBusy = Thread.holdsLock(inc.router);
			if (hold != null && !hold.probing && !routerBusy) {
				if (this.world.clock.millis() >= hold.probeAt) {
					probing.add(inc);
				}
				else {
					nextDue = Math.min(nextDue, hold.probeAt);
				}
			}
			for (Work work : inc.works.values()) {
				// a holding instance's partitions are paused: it takes no records
				if (hold == null && work.barrierOpen() && work.tasks.size() < this.config.maxInFlight()
						&& work.fetchPos < this.world.log(work.tp.topic(), work.tp.partition()).size()) {
					pollable.add(work);
				}
				if (work.committable() > this.world.committed(work.tp)) {
					committable.add(work);
				}
				// the container's passes start only with room in the partition's
				// in-flight bound
				if (!work.parked.isEmpty() && !inc.dead && !work.revoked
						&& work.tasks.size() < this.config.maxInFlight()) {
					long due = Math.max(parkedDue(work), work.lookAt);
					if (!work.commandPasses.isEmpty() || due <= this.world.clock.millis()) {
						rereadable.add(work);
					}
					else {
						nextDue = Math.min(nextDue, due);
					}
				}
				for (Task task : work.tasks) {
					if (task.wait == Wait.BATCH && !task.running && !routerBusy && !work.revoked && !inc.dead) {
						batchable.computeIfAbsent(inc, (i) -> new ArrayList<>()).add(task);
					}
					// an admission takes no router monitor: the container calls
					// ReplayAdmission itself
					if (isReady(task) && (!routerBusy || task.admission != null)) {
						// a holding instance holds what becomes ready, but for failure
						// handling
						if (hold == null || task.wait == Wait.FAILED) {
							ready.add(task);
						}
					}
					else if (!task.running && task.wait == Wait.KEY && !task.woken) {
						sleeping.add(task);
					}
					// a record held past its due time waits for the hold's end, not for
					// the clock
					if (!task.running && task.wait == Wait.UNTIL
							&& (hold == null || task.dueAt > this.world.clock.millis())) {
						nextDue = Math.min(nextDue, task.dueAt);
					}
				}
			}
		}
		double[] weights = new double[Action.values().length];
		weights[Action.PRODUCE.ordinal()] = (this.world.produced.size() < this.config.records()) ? 3 : 0;
		weights[Action.POLL.ordinal()] = pollable.isEmpty() ? 0 : 4;
		weights[Action.ROUTE.ordinal()] = ready.isEmpty() ? 0 : 8;
		weights[Action.TAILER.ordinal()] = tailers.isEmpty() ? 0 : this.config.wTailer();
		weights[Action.COMMIT.ordinal()] = committable.isEmpty() ? 0 : this.config.wCommit();
		weights[Action.RECHECK.ordinal()] = sleeping.isEmpty() ? 0 : 0.2;
		// a replay and a record of another group come at seeded moments, among everything
		// else
		weights[Action.REPLAY.ordinal()] = (this.replays < this.config.replays()) ? 0.08 : 0;
		weights[Action.FOREIGN.ordinal()] = (this.foreign < this.config.foreign()) ? 0.08 : 0;
		SimSends sends = this.world.sends;
		List<SimSends.Send> acks = sends.isEmpty() ? List.of() : sends.heads(this::mayComplete);
		List<SimSends.Send> landable = sends.isEmpty() ? List.of() : sends.landable();
		weights[Action.ACK.ordinal()] = acks.isEmpty() ? 0 : 6;
		weights[Action.LAND.ordinal()] = landable.isEmpty() ? 0 : 1.5;
		weights[Action.PROBE.ordinal()] = probing.isEmpty() ? 0 : 4;
		weights[Action.BATCH.ordinal()] = batchable.isEmpty() ? 0 : 5;
		// a worker whose router monitor a route below us holds would block: its
		// completions wait
		List<Task> completable = this.pendingResults.stream()
			.filter((task) -> task.work.revoked || task.work.owner.dead || !Thread.holdsLock(task.work.owner.router))
			.toList();
		List<PendingBatch> completableBatches = this.pendingBatches.stream()
			.filter((batch) -> batch.inc().dead || !Thread.holdsLock(batch.inc().router))
			.toList();
		weights[Action.COMPLETE.ordinal()] = (completable.isEmpty() && completableBatches.isEmpty()) ? 0 : 5;
		weights[Action.COMMAND.ordinal()] = (this.commandsWritten < this.config.commands()) ? 0.1 : 0;
		weights[Action.REREAD.ordinal()] = rereadable.isEmpty() ? 0 : 2;
		double busy = 0;
		for (double w : weights) {
			busy += w;
		}
		weights[Action.CLOCK.ordinal()] = (busy == 0) ? 1 : this.config.wClock();
		if (faults) {
			double f = this.config.wFaults();
			weights[Action.DUPLICATE.ordinal()] = 0.3 * f;
			weights[Action.CRASH.ordinal()] = 0.1 * f;
			// a rebalance inside a route in progress leaves that route running as a
			// zombie
			weights[Action.REBALANCE.ordinal()] = (this.depth == 0 || this.config.zombies()) ? 0.15 * f : 0;
		}
		List<SimSends.Send> awaited = (faults && this.config.ambiguousWrites() && !sends.isEmpty())
				? sends.awaited(this::mayComplete) : List.of();
		if (!awaited.isEmpty()) {
			weights[Action.TIMEOUT.ordinal()] = 0.05 * this.config.wFaults();
		}
		Action action = pick(weights);
		switch (action) {
			case PRODUCE -> produce();
			case POLL -> poll(pollable.get(this.rnd.nextInt(pollable.size())));
			case ROUTE -> route(ready.get(this.rnd.nextInt(ready.size())));
			case BATCH -> {
				List<Incarnation> runners = new ArrayList<>(batchable.keySet());
				Incarnation inc = runners.get(this.rnd.nextInt(runners.size()));
				runBatch(inc, batchable.get(inc));
			}
			case COMPLETE -> {
				int pick = this.rnd.nextInt(completable.size() + completableBatches.size());
				if (pick < completable.size()) {
					completeResult(completable.get(pick));
				}
				else {
					completeBatch(completableBatches.get(pick - completable.size()));
				}
			}
			case TAILER -> {
				long[] t = tailers.get(this.rnd.nextInt(tailers.size()));
				Incarnation inc = this.world.instances.get((int) t[0]).current;
				int p = (int) t[1];
				long unread = this.world.lockEnd(p) - inc.tailerPos[p];
				int max = this.rnd.nextBoolean() ? Integer.MAX_VALUE : 1 + this.rnd.nextInt((int) unread);
				int applied = this.world.tailerStep(inc, p, max);
				trace(() -> inc + " tailer reads " + applied + " lock records of partition " + p + ", now at "
						+ inc.tailerPos[p]);
				openBarriers(inc);
			}
			case COMMIT -> commit(committable.get(this.rnd.nextInt(committable.size())).owner);
			case CLOCK -> advanceClock(nextDue, busy == 0);
			case RECHECK -> {
				Task task = sleeping.get(this.rnd.nextInt(sleeping.size()));
				task.woken = true;
				trace(() -> task.work.owner + " recheck wakes " + task);
			}
			case DUPLICATE -> duplicate();
			case CRASH -> {
				SimInstance instance = this.world.instances.get(this.rnd.nextInt(this.world.instances.size()));
				crash(instance, "between actions");
			}
			case REBALANCE -> rebalance();
			case REPLAY -> replay();
			case FOREIGN -> plantForeign();
			case LAND -> {
				SimSends.Send send = landable.get(this.rnd.nextInt(landable.size()));
				this.stats.landedBeforeAck++;
				trace(() -> "LAND " + send);
				sends.land(send);
			}
			case ACK -> {
				SimSends.Send send = acks.get(this.rnd.nextInt(acks.size()));
				boolean lateLands = !send.timedOut || send.resolved || this.rnd.nextBoolean();
				String indent = "  ".repeat(this.depth) + ((this.depth > 0) ? "> " : "");
				trace(() -> indent + "ACK " + send);
				sends.ack(send, lateLands);
			}
			case TIMEOUT -> {
				SimSends.Send send = awaited.get(this.rnd.nextInt(awaited.size()));
				trace(() -> "TIMEOUT " + send);
				sends.timeOut(send);
			}
			case PROBE -> probe(probing.get(this.rnd.nextInt(probing.size())));
			case COMMAND -> command();
			case REREAD -> reread(rereadable.get(this.rnd.nextInt(rereadable.size())));
		}
	}

	/**
	 * Whether a future of the incarnation may complete now. Not while a route below us
	 * holds its router's monitor: what is chained on the future may confirm a move, which
	 * takes that monitor, and the callback thread would wait for it.
	 */
	private boolean mayComplete(Incarnation incarnation) {
		return !incarnation.dead && !Thread.holdsLock(incarnation.router);
	}

	private void rethrowDeferred() {
		Throwable ex = this.deferred;
		if (ex == null) {
			return;
		}
		if (ex instanceof SimViolation violation) {
			throw violation;
		}
		throw new IllegalStateException("thrown in a callback chained on a write", ex);
	}

	private Action pick(double[] weights) {
		double total = 0;
		for (double w : weights) {
			total += w;
		}
		double r = this.rnd.nextDouble() * total;
		for (int i = 0; i < weights.length; i++) {
			r -= weights[i];
			if (r < 0 && weights[i] > 0) {
				return Action.values()[i];
			}
		}
		for (int i = weights.length - 1; i >= 0; i--) {
			if (weights[i] > 0) {
				return Action.values()[i];
			}
		}
		throw new IllegalStateException("no action");
	}

	private boolean isReady(Task task) {
		Work work = task.work;
		if (task.running || work.revoked || work.owner.dead) {
			return false;
		}
		if (task.key != null && work.queues.get(task.key).peek() != task) {
			return false;
		}
		return switch (task.wait) {
			case NONE -> true;
			case UNTIL -> this.world.clock.millis() >= task.dueAt || commanded(task);
			case KEY -> task.woken;
			case TAILER -> work.owner.tailerPos[work.tp.partition()] >= task.tailerTarget;
			case SETTLING, BATCH, PENDING -> false;
			case FAILED -> true;
		};
	}

	private void produce() {
		if (this.config.tenants() > 0) {
			produceForTenants();
			return;
		}
		int keyIndex = this.rnd.nextInt(this.config.keys());
		boolean nullKey = this.rnd.nextDouble() < this.config.pNullKey();
		String key = nullKey ? null : "k" + keyIndex;
		int partition = nullKey ? this.rnd.nextInt(this.config.partitions()) : keyIndex % this.config.partitions();
		boolean poison = this.rnd.nextDouble() < this.config.pPoison();
		boolean junk = this.rnd.nextDouble() < this.config.pJunkHeaders();
		Rec rec = this.world.produce(key, partition, poison, junk);
		trace(() -> "produce " + rec + " key=" + key + (poison ? " (poison)" : "")
				+ (junk ? " (junk protocol headers)" : ""));
	}

	/**
	 * Produces a record of a seed with tenants: of the first tenant, which floods the
	 * topic, most of the time, else of another one; of a key of that tenant, or without a
	 * key (its tenant is then unknown). The keys of the tenants are spread so that the
	 * records of several tenants share a partition.
	 */
	private void produceForTenants() {
		int tenants = this.config.tenants();
		boolean nullKey = this.rnd.nextDouble() < this.config.pNullKey();
		int tenant = (this.rnd.nextDouble() < this.config.pFlood()) ? 0 : 1 + this.rnd.nextInt(tenants - 1);
		List<Integer> ofTenant = new ArrayList<>();
		for (int k = tenant; k < this.config.keys(); k += tenants) {
			ofTenant.add(k);
		}
		int keyIndex = ofTenant.get(this.rnd.nextInt(ofTenant.size()));
		String key = nullKey ? null : "k" + keyIndex;
		int partition = nullKey ? this.rnd.nextInt(this.config.partitions())
				: (keyIndex / tenants) % this.config.partitions();
		boolean poison = this.rnd.nextDouble() < this.config.pPoison();
		boolean junk = this.rnd.nextDouble() < this.config.pJunkHeaders();
		Rec rec = this.world.produce(key, partition, poison, junk);
		if (!nullKey && tenant > 0) {
			this.stats.beside++;
		}
		trace(() -> "produce " + rec + " key=" + key + " tenant=" + tenantOf(rec.delivery())
				+ (poison ? " (poison)" : "") + (junk ? " (junk protocol headers)" : ""));
	}

	/**
	 * The tenant of a record, as a seed with tenants resolves it: key {@code k<i>}
	 * belongs to tenant {@code t<i mod tenants>}; a record without a key (or with a key
	 * no produced record has) to none, which the container counts as
	 * {@code TenantResolver.UNKNOWN}.
	 */
	private String tenantOf(Delivery delivery) {
		byte[] key = delivery.key();
		if (key == null) {
			return null;
		}
		if (key.length < 2 || key.length > 3 || key[0] != 'k') {
			return null;
		}
		int index = 0;
		for (int i = 1; i < key.length; i++) {
			if (key[i] < '0' || key[i] > '9') {
				return null;
			}
			index = index * 10 + (key[i] - '0');
		}
		return (index < this.config.keys()) ? TENANTS[index % this.config.tenants()] : null;
	}

	private void poll(Work work) {
		int count = 1 + this.rnd.nextInt(3);
		List<Rec> log = this.world.log(work.tp.topic(), work.tp.partition());
		if (work.shares != null) {
			for (int i = 0; i < count && work.fetchPos < log.size()
					&& work.tasks.size() < this.config.maxInFlight(); i++) {
				if (!take(work, log.get((int) work.fetchPos), false)) {
					break; // held back: polled again once there is room
				}
				work.fetchPos++;
			}
			return;
		}
		for (int i = 0; i < count && work.fetchPos < log.size() && work.tasks.size() < this.config.maxInFlight(); i++) {
			Rec rec = log.get((int) work.fetchPos++);
			if (rec.key() != null && work.parkedKeys.containsKey(Bytes.wrap(rec.key()))) {
				// an earlier record of its key is parked: this one parks behind it, in
				// order
				work.pending.add(rec.offset());
				work.parked.add(rec.offset());
				work.parkedKeys.merge(Bytes.wrap(rec.key()), 1, Integer::sum);
				this.stats.parked++;
				trace(() -> work.owner + " polls " + rec + " key=" + keyName(rec) + ", parked behind its key");
				if (commanded(work, rec)) {
					work.commandPasses.add(Bytes.wrap(rec.key())); // the command arrived
																	// before the record
																	// did
				}
				continue;
			}
			enqueue(work, new Task(work, rec, false));
			trace(() -> work.owner + " polls " + rec + " key=" + keyName(rec));
		}
	}

	/**
	 * Takes a polled (or redelivered) record of a seed with tenants, as the container's
	 * {@code PartitionWork.take} does, asking the partition's real {@code TenantShares}:
	 * a record whose tenant holds as many records in memory as it may is held back if the
	 * partition has as many parked runs as its bound, and otherwise parked (its offset
	 * pending, so no commit passes it), to be read again by the re-reader at once; a
	 * record of a key with a parked record parks behind it; any other is held in memory,
	 * counted for its tenant. Returns false when the record was held back.
	 */
	private boolean take(Work work, Rec rec, boolean duplicate) {
		String tenant = tenantOf(work, rec);
		Bytes key = (rec.key() != null) ? Bytes.wrap(rec.key()) : null;
		boolean atCap = work.shares.atCap(tenant);
		if (atCap && parkedRuns(work) >= this.config.maxInFlight()) {
			this.stats.heldBackAtCap++;
			trace(() -> work.owner + " holds back " + rec + " of tenant " + tenant + ", at its cap, with "
					+ parkedRuns(work) + " parked runs in " + work.tp);
			return false;
		}
		String what = duplicate ? " gets a duplicate delivery of " : " polls ";
		boolean behind = key != null && work.parkedKeys.containsKey(key);
		if (behind || atCap) {
			work.pending.add(rec.offset());
			work.parked.add(rec.offset());
			if (key != null) {
				work.parkedKeys.merge(key, 1, Integer::sum);
			}
			if (behind) {
				this.stats.parked++;
				trace(() -> work.owner + what + rec + " key=" + keyName(rec) + ", parked behind its key");
			}
			else {
				work.shares.parkedAtCap(tenant);
				work.lookAt = 0;
				this.stats.parkedAtCap++;
				trace(() -> work.owner + what + rec + " key=" + keyName(rec) + ", parked: tenant " + tenant
						+ " is at its cap");
			}
			if (key != null && namedByCommand(work, rec)) {
				work.commandPasses.add(key); // the command arrived before the record did
			}
			return true;
		}
		Task task = new Task(work, rec, duplicate);
		task.tenant = tenant;
		work.shares.taken(tenant);
		enqueue(work, task);
		trace(() -> work.owner + what + rec + " key=" + keyName(rec) + " tenant=" + tenant);
		return true;
	}

	/**
	 * Whether a pending command in the owner's table names the lock a record carries, at
	 * the record (the container's {@code RecordTask.commandPending}), whether or not the
	 * lock is there yet: its write may be under way.
	 */
	private boolean namedByCommand(Work work, Rec rec) {
		String lockId = ProtocolHeaders.text(rec.headers(), ProtocolHeaders.LOCK_ID);
		int stage = this.world.plan.stageOf(rec.topic());
		if (this.config.commands() == 0 || lockId == null || stage <= 0) {
			return false;
		}
		Position position = new Position(stage, rec.offset());
		for (OperatorCommand command : work.owner.table.commands()) {
			if (command.lockId().equals(lockId) && command.partition() == rec.partition()
					&& command.position().equals(position)) {
				return true;
			}
		}
		return false;
	}

	/** The tenant of a record of a partition, as its owner's {@code Tenants} finds it. */
	private static String tenantOf(Work work, Rec rec) {
		return work.owner.tenants.tenantOf(rec.delivery());
	}

	/** Runs of consecutive parked offsets, which a partition's bound bounds. */
	private static int parkedRuns(Work work) {
		int runs = 0;
		long previous = -2;
		for (long offset : work.parked) {
			if (offset != previous + 1) {
				runs++;
			}
			previous = offset;
		}
		return runs;
	}

	private void enqueue(Work work, Task task) {
		work.pending.add(task.rec.offset());
		work.tasks.add(task);
		if (task.key != null) {
			work.queues.computeIfAbsent(task.key, (k) -> new ArrayDeque<>()).add(task);
		}
	}

	private void route(Task task) {
		route(task, null);
	}

	/**
	 * Routes a task, or runs its failure handling; {@code probe} is the hold it runs as a
	 * probe of, {@code null} for a task run in its turn.
	 */
	private void route(Task task, Hold probe) {
		Work work = task.work;
		Incarnation inc = work.owner;
		if (task.wait == Wait.TAILER) {
			task.tailerSynced = true;
		}
		if (task.admission != null) {
			admit(task);
			if (probe != null) {
				probeWithoutVerdict(inc, probe, "the probe was an admission");
			}
			return;
		}
		String indent = "  ".repeat(this.depth) + ((this.depth > 0) ? "> " : "");
		if (task.catchUpFirst) {
			catchUpFirst(task, indent);
			if (probe != null) {
				probeAgain(inc, probe, "the probe's record catches up first");
			}
			return;
		}
		Supplier<Step> rest = task.rest;
		if (rest != null && this.holds.containsKey(inc) && heldFailure(inc, task.failed)) {
			// the container's holdsFailureHandling: once the breaker is open, no record
			// moves into the ladder
			task.rest = null;
			task.failed = null;
			task.wait = Wait.NONE;
			this.stats.heldFailuresPutBack++;
			trace(() -> indent + inc + " holds " + task + " instead of handling its failure (the rest of its step "
					+ "dropped): routed again once the hold ends");
			return;
		}
		List<Lock> before = (task.key != null) ? inc.table.locksOf(task.key) : List.of();
		task.rest = null;
		task.failed = null;
		task.running = true;
		task.wait = Wait.NONE;
		task.woken = false;
		task.routes++;
		trace(() -> indent + inc + ((rest != null) ? " handles the failure of " : " routes ") + task + " key="
				+ keyName(task.rec) + " tailerSynced=" + task.tailerSynced + " at "
				+ SimWorld.rel(this.world.clock.millis()));
		Step step;
		try {
			// as the container: a failed run returns at once, and the rest of its step is
			// a turn of its own
			step = (rest != null) ? rest.get() : this.world.route(inc, task.rec.delivery(), task.tailerSynced, true);
		}
		catch (Crash ex) {
			trace(() -> indent + "  " + inc + " route of " + task + " ends: " + ex.getMessage());
			return;
		}
		catch (RuntimeException ex) {
			trace(() -> indent + "  " + inc + " route of " + task + " throws " + ex + "; retried later");
			routeFailed(task);
			if (probe != null) {
				probeWithoutVerdict(inc, probe, "the probe's route threw");
			}
			return;
		}
		finally {
			task.running = false;
		}
		took(task, step, rest == null, probe, indent, before);
	}

	/**
	 * Does what a record's step says, as the container does once a route returned.
	 * @param first whether the step is the record's first since it was routed (not the
	 * rest of a failed run's step)
	 */
	private void took(Task task, Step step, boolean first, Hold probe, String indent, List<Lock> before) {
		Work work = task.work;
		Incarnation inc = work.owner;
		Step result = step;
		if (step.kind() == Step.Kind.SETTLING) {
			// registered before anything else happens: the writes may complete in the
			// next action
			CompletableFuture<?> writes = step.writes();
			writes.whenComplete((ignored, ex) -> callback(() -> settled(task, ex)));
		}
		if (!inc.dead && first && step.kind() != Step.Kind.READY && heldAfter(task, step, probe, indent)) {
			return;
		}
		if (work.revoked || inc.dead) {
			this.stats.zombieResults++;
			trace(() -> indent + "  " + inc + " route of " + task + " -> " + describe(result)
					+ " (partition revoked meanwhile: result dropped)");
			return;
		}
		trace(() -> indent + "  -> " + describe(result));
		switch (step.kind()) {
			case DONE -> complete(task);
			case WAIT_UNTIL -> {
				this.stats.waitUntil++;
				task.wait = Wait.UNTIL;
				task.dueAt = step.dueAt();
				if (this.config.parking() && step.dueAt() - this.world.clock.millis() > this.config.parkAfterMillis()) {
					park(task, indent);
				}
			}
			case WAIT_FOR_KEY -> {
				this.stats.waitKey++;
				task.wait = Wait.KEY;
				task.woken = !inc.table.locksOf(task.key).equals(before); // changed while
																			// we were
																			// looking
			}
			case WAIT_FOR_TAILER -> {
				this.stats.waitTailer++;
				task.wait = Wait.TAILER;
				task.tailerTarget = this.world.lockEnd(work.tp.partition());
			}
			case SETTLING -> settling(task);
			case FAILED -> {
				this.stats.failedRuns++;
				task.wait = Wait.FAILED;
				task.rest = step.rest();
				task.failed = step.failure();
			}
			case READY -> {
				this.stats.readyRuns++;
				task.ready = step.ready();
				if (this.config.asyncResults() && !this.config.batches()) {
					// the method was called and returned a result that completes later:
					// no worker waits
					this.stats.asyncCalls++;
					task.wait = Wait.PENDING;
					this.pendingResults.add(task);
				}
				else {
					task.wait = Wait.BATCH;
				}
			}
		}
	}

	/**
	 * A pending result completes (the container's {@code AsyncRuns}): its outcome is the
	 * handler's, a port call where other actions may come; a worker then takes the rest
	 * of the step, as after a batch. A result whose partition was revoked, or whose
	 * instance died, meanwhile is dropped: the partition's owner runs the record again.
	 */
	private void completeResult(Task task) {
		this.pendingResults.remove(task);
		Incarnation inc = task.work.owner;
		if (task.work.revoked || inc.dead) {
			this.stats.asyncDropped++;
			trace(() -> "result of " + task + " completes after "
					+ (inc.dead ? inc + " died" : "its partition was revoked") + ": dropped");
			return;
		}
		trace(() -> inc + " result of " + task + " completes");
		task.running = true;
		HandlerResult result;
		try {
			result = this.world.runInBatch(inc, task.rec.delivery());
		}
		catch (Crash ex) {
			task.running = false;
			trace(() -> "  " + inc + " completion ends: " + ex.getMessage());
			return;
		}
		if (task.work.revoked || inc.dead) {
			task.running = false;
			this.stats.asyncDropped++;
			trace(() -> "  its partition was revoked meanwhile: dropped");
			return;
		}
		this.stats.asyncCompleted++;
		if (commanded(task)) {
			this.stats.asyncBesideCommand++; // a command came while the result was
												// pending: the step after it acts on it
		}
		afterBatch(task, result);
	}

	/**
	 * A batch listener's instance runs a batch of its records that may run now (the
	 * container's {@code BatchRuns}), at most the seed's batch size, in a random order.
	 * Half the batches end as a method that names a failed record: after a failed run,
	 * the records after it may not run. The others end as a bisected batch: each record's
	 * outcome is its own, and a record may run more than once before its last run counts.
	 * Every run is a port call of the handler, where other actions (a crash, a rebalance)
	 * may come; a crash ends the batch with nothing taken. Then each record that ran
	 * takes the rest of its step, and one that did not is routed again from the start.
	 */
	private void runBatch(Incarnation inc, List<Task> ready) {
		List<Task> batch = new ArrayList<>(ready);
		Collections.shuffle(batch, this.rnd);
		List<Task> taken = new ArrayList<>();
		try {
			for (Task head : batch) {
				if (taken.size() >= this.config.batchSize()) {
					break;
				}
				if (head.running || head.wait != Wait.BATCH || head.work.revoked || inc.dead) {
					continue; // taken meanwhile, by an action that came while a rider was
								// looked at
				}
				head.running = true;
				taken.add(head);
				int room = this.config.batchSize() - taken.size();
				if (room > 0) {
					taken.addAll(riders(inc, head, this.rnd.nextInt(room + 1)));
				}
			}
		}
		catch (Crash ex) {
			taken.forEach((task) -> task.running = false);
			trace(() -> "  " + inc + " gathering a batch ends: " + ex.getMessage());
			return;
		}
		if (taken.isEmpty()) {
			return;
		}
		if (this.config.asyncResults()) {
			// the method was called and returned a result that completes later: no worker
			// waits, the
			// records stay taken until it completes
			this.stats.asyncCalls++;
			this.pendingBatches.add(new PendingBatch(inc, taken));
			trace(() -> inc + " calls a batch whose result completes later: " + taken);
			return;
		}
		runTaken(inc, taken);
	}

	/**
	 * A pending batch's result completes (the container's {@code BatchRuns}): its
	 * records' outcomes are the handler's, as when the batch runs at once; on an instance
	 * that died meanwhile it is dropped, and a record whose partition was revoked is left
	 * to its owner.
	 */
	private void completeBatch(PendingBatch batch) {
		this.pendingBatches.remove(batch);
		Incarnation inc = batch.inc();
		if (inc.dead) {
			this.stats.asyncDropped++;
			trace(() -> "result of a batch of " + inc + " completes after it died: dropped");
			return;
		}
		// as a record's result: the handler's outcome is drawn at the completion, so the
		// records of a
		// partition revoked meanwhile are dropped before it (the container's revocation
		// waited for the
		// batch; its records are the new owner's)
		List<Task> taken = new ArrayList<>();
		for (Task task : batch.taken()) {
			if (task.work.revoked) {
				task.running = false;
				task.riding = false;
				this.stats.asyncDropped++;
			}
			else {
				taken.add(task);
			}
		}
		if (taken.isEmpty()) {
			trace(() -> "result of a batch of " + inc + " completes after its partitions were revoked: dropped");
			return;
		}
		this.stats.asyncCompleted++;
		this.stats.asyncBatches++;
		if (taken.stream().anyMatch(this::commanded)) {
			this.stats.asyncBesideCommand++; // a command came while the result was
												// pending: the step after it acts on it
		}
		trace(() -> inc + " result of a batch of " + taken + " completes");
		runTaken(inc, taken);
	}

	/**
	 * Runs the handler on the records taken for a batch, then each takes the rest of its
	 * step.
	 */
	private void runTaken(Incarnation inc, List<Task> taken) {
		boolean named = this.rnd.nextBoolean();
		this.stats.batches++;
		trace(() -> inc + " runs a batch (" + (named ? "naming its failed record" : "bisected") + ") of " + taken);
		HandlerResult[] results = new HandlerResult[taken.size()];
		taken.forEach((task) -> task.running = true);
		try {
			for (int i = 0; i < taken.size(); i++) {
				Task task = taken.get(i);
				if (task.riding
						&& (results[i - 1] == null || results[i - 1].outcome() != HandlerResult.Outcome.SUCCESS)) {
					this.stats.ridersHeldBack++;
					continue; // a rider runs only after every record of its key before it
								// succeeded
				}
				int runs = named ? 1 : 1 + this.rnd.nextInt(3);
				for (int run = 0; run < runs; run++) {
					if (run > 0) {
						this.stats.bisectionRuns++;
					}
					results[i] = this.world.runInBatch(inc, task.rec.delivery());
				}
				if (named && results[i].outcome() == HandlerResult.Outcome.FAILURE && this.rnd.nextBoolean()) {
					this.stats.partialBatches++;
					break; // the records after it did not run
				}
			}
		}
		catch (Crash ex) {
			taken.forEach((task) -> task.running = false);
			trace(() -> "  " + inc + " batch ends: " + ex.getMessage());
			return;
		}
		// a rider that did not run waits behind its head again before any outcome lets
		// the head go
		for (int i = 0; i < taken.size(); i++) {
			Task task = taken.get(i);
			if (task.riding && results[i] == null) {
				task.riding = false;
				task.running = false;
				task.wait = Wait.NONE;
				task.ready = null;
				this.stats.notRunInBatch++;
				trace(() -> "  " + task + " rode but did not run: routed again in its key's turn");
			}
		}
		// each record stays taken until its own step: other actions come between the
		// steps
		for (int i = 0; i < taken.size(); i++) {
			Task task = taken.get(i);
			HandlerResult result = results[i];
			if (result == null && !task.running) {
				continue; // a rider let go above
			}
			if (task.work.revoked || inc.dead) {
				task.running = false;
				this.stats.zombieResults++;
				continue; // the partition's new owner routes the record again
			}
			if (result == null) {
				task.running = false;
				this.stats.notRunInBatch++;
				task.wait = Wait.NONE;
				task.ready = null;
				trace(() -> "  " + task + " did not run: routed again");
				continue;
			}
			afterBatch(task, result);
		}
	}

	/**
	 * Lets records queued behind a ready head ride in its batch, as the container's
	 * {@code BatchRuns} does: those right behind it in its key's queue that the router
	 * lets run on the same view, at most {@code most}, none of them an admission.
	 */
	private List<Task> riders(Incarnation inc, Task head, int most) {
		if (head.key == null || head.ready == null || most == 0) {
			return List.of();
		}
		ArrayDeque<Task> queue = head.work.queues.get(head.key);
		if (queue == null || queue.peek() != head) {
			return List.of();
		}
		List<Task> riders = new ArrayList<>();
		// the container scans the queue under its partition's monitor: a poll meanwhile
		// queues behind
		List<Task> behind = new ArrayList<>(queue);
		for (Task next : behind.subList(1, behind.size())) {
			if (riders.size() >= most || next.admission != null || next.running || next.riding
					|| next.wait != Wait.NONE) {
				break;
			}
			ReadyRun run = this.world.readyBehind(inc, head.ready, next.rec.delivery());
			if (run == null || head.work.revoked || inc.dead || next.running || next.wait != Wait.NONE) {
				break;
			}
			next.running = true;
			next.riding = true;
			next.wait = Wait.BATCH;
			next.ready = run;
			riders.add(next);
			this.stats.riders++;
		}
		return riders;
	}

	/** A record ran in a batch: it takes the rest of its step, as after its own run. */
	private void afterBatch(Task task, HandlerResult result) {
		Incarnation inc = task.work.owner;
		ReadyRun ready = task.ready;
		task.ready = null;
		task.wait = Wait.NONE;
		task.running = true;
		List<Lock> before = (task.key != null) ? inc.table.locksOf(task.key) : List.of();
		trace(() -> "  " + inc + " takes the step of " + task + " after its batch: " + result.outcome());
		Step step;
		try {
			step = this.world.afterBatch(inc, task.rec.delivery(), result, () -> ready.ran(result, 0));
		}
		catch (Crash ex) {
			trace(() -> "  " + inc + " step of " + task + " ends: " + ex.getMessage());
			return;
		}
		catch (RuntimeException ex) {
			trace(() -> "  " + inc + " step of " + task + " throws " + ex + "; retried later");
			task.riding = false; // a rider waits behind its head again
			routeFailed(task);
			return;
		}
		finally {
			task.running = false;
		}
		took(task, step, true, null, "  ", before);
		task.riding = false; // done, or its failure handled in its key's turn
	}

	/**
	 * A route returned with its writes under way (the container's {@code settle}): the
	 * record stays at the head of its key's queue, so the key's later records wait, and
	 * its offset stays pending, so no commit passes it. The other keys go on routing
	 * meanwhile.
	 */
	private void settling(Task task) {
		this.stats.settling++;
		task.wait = Wait.SETTLING;
		for (Work work : task.work.owner.works.values()) {
			for (Task other : work.tasks) {
				if (other != task && other.wait == Wait.SETTLING && !Objects.equals(other.key, task.key)) {
					this.stats.overlappingMoves++; // another key's move is in flight at
													// this instance too
					return;
				}
			}
		}
	}

	/**
	 * The writes of a route completed (in the action that acknowledged the last of them):
	 * the record is done, or, when they failed, routed again after a backoff. A callback
	 * of a partition revoked meanwhile, or of a dead process, changes nothing: the new
	 * owner has its own task for the record.
	 */
	private void settled(Task task, Throwable ex) {
		Throwable cause = (ex != null) ? Futures.cause(ex) : null;
		if (cause instanceof Error && !(cause instanceof Crash)) {
			throw (Error) cause; // a violation found in a step of the move
		}
		Work work = task.work;
		Incarnation inc = work.owner;
		if (work.revoked || inc.dead) {
			this.stats.zombieCallbacks++;
			trace(() -> "    " + inc + " writes of " + task + " completed" + ((cause != null) ? " with " + cause : "")
					+ " after its partition was revoked or its process died: dropped");
			return;
		}
		if (task.wait != Wait.SETTLING) {
			throw new IllegalStateException("the writes of " + task + " completed while it was " + task.wait);
		}
		if (cause == null) {
			trace(() -> "    " + inc + " writes of " + task + " completed: done");
			complete(task);
			return;
		}
		this.stats.failedSettles++;
		trace(() -> "    " + inc + " writes of " + task + " failed (" + cause + "); routed again later");
		routeFailed(task);
	}

	/**
	 * A step failed, or its writes did (the container's {@code routeFailed}): after a
	 * backoff the record is routed again, on a lock table caught up with its lock
	 * partition, where a write of the failed step that landed although it reported a
	 * failure is seen.
	 */
	private void routeFailed(Task task) {
		task.wait = Wait.UNTIL;
		task.dueAt = this.world.clock.millis() + 500;
		task.tailerSynced = false;
		task.catchUpFirst = true;
	}

	/**
	 * The backoff after a failure is over: the tailer catches up first, then the record
	 * is routed.
	 */
	private void catchUpFirst(Task task, String indent) {
		task.catchUpFirst = false;
		task.wait = Wait.TAILER;
		task.tailerTarget = this.world.lockEnd(task.work.tp.partition());
		trace(() -> indent + task.work.owner + " catches up before routing " + task + " again");
	}

	/**
	 * Runs a callback chained on a future, keeping what it throws, which the future would
	 * swallow.
	 */
	private void callback(Runnable callback) {
		try {
			callback.run();
		}
		catch (Throwable ex) {
			if (this.deferred == null) {
				this.deferred = ex;
			}
		}
	}

	private static String describe(Step step) {
		return switch (step.kind()) {
			case WAIT_UNTIL -> "WAIT_UNTIL " + SimWorld.rel(step.dueAt());
			default -> step.kind().name();
		};
	}

	/**
	 * Runs an admission in its key's turn: first the lock tailer catches up with the lock
	 * partition, then the real {@code ReplayAdmission} admits the lock if it is still
	 * pending. A failed write makes it try again later, from a new catch-up (the
	 * container's {@code admit}).
	 */
	private void admit(Task task) {
		Work work = task.work;
		Incarnation inc = work.owner;
		String indent = "  ".repeat(this.depth) + ((this.depth > 0) ? "> " : "");
		task.wait = Wait.NONE;
		task.routes++;
		if (!task.tailerSynced) {
			task.wait = Wait.TAILER;
			task.tailerTarget = this.world.lockEnd(work.tp.partition());
			trace(() -> indent + inc + " catches up before the " + task);
			return;
		}
		task.running = true;
		trace(() -> indent + inc + " runs the " + task);
		boolean result;
		try {
			result = this.world.admit(inc, task.admission, task.lastTaken);
		}
		catch (Crash ex) {
			trace(() -> indent + "  " + inc + " admission ends: " + ex.getMessage());
			return;
		}
		catch (RuntimeException ex) {
			trace(() -> indent + "  " + inc + " admission throws " + ex + "; tried again later");
			task.tailerSynced = false;
			task.wait = Wait.UNTIL;
			task.dueAt = this.world.clock.millis() + 500;
			return;
		}
		finally {
			task.running = false;
		}
		boolean admitted = result;
		if (work.revoked || inc.dead) {
			this.stats.zombieResults++;
			trace(() -> indent + "  " + inc + " admission -> " + admitted + " (partition revoked meanwhile)");
			return;
		}
		trace(() -> indent + "  -> " + (admitted ? "admitted" : "not pending any more"));
		work.admissions.remove(task.admission);
		complete(task);
	}

	private void complete(Task task) {
		Work work = task.work;
		if (task.rec != null) {
			work.pending.remove(task.rec.offset());
			if (work.shares != null && !work.revoked) {
				work.shares.released(task.tenant); // the container's done
			}
		}
		work.tasks.remove(task);
		if (task.key != null) {
			ArrayDeque<Task> queue = work.queues.get(task.key);
			if (task.riding && queue.peek() != task) {
				queue.remove(task); // a rider done before the step of the record ahead of
									// it ended
			}
			else if (queue.poll() != task) {
				throw new IllegalStateException("completed " + task + " which was not the head of its key");
			}
			task.riding = false;
			if (queue.isEmpty()) {
				work.queues.remove(task.key);
			}
		}
	}

	private void commit(Incarnation inc) {
		for (Work work : inc.works.values()) {
			long offset = work.committable();
			if (offset > this.world.committed(work.tp)) {
				this.world.committed.put(work.tp, offset);
				this.world.progress++;
				trace(() -> inc + " commits " + work.tp + " at " + offset);
				checkCommit(inc, work.tp, offset);
			}
		}
	}

	/**
	 * (8) No offset is committed past a record whose move is unconfirmed
	 * (docs/PROTOCOL.md, rule 6): once committed, a record is never delivered again, so
	 * no live lock may name it as the source of its move in flight, nor as its carrier
	 * (which releases or moves it before it is done).
	 */
	private void checkCommit(Incarnation inc, TP tp, long offset) {
		for (Lock lock : this.world.liveLocks(tp.partition(), this.world.lockEnd(tp.partition()))) {
			Position named = lock.isMoving() ? lock.from() : lock.position();
			String topic = (named.stage() == 0) ? SimWorld.MAIN : this.world.plan.stage(named.stage()).topic();
			if (topic.equals(tp.topic()) && named.offset() < offset) {
				throw new SimViolation("(8) " + inc + " committed " + tp + " at " + offset + " past " + tp + "/"
						+ named.offset() + ", "
						+ (lock.isMoving() ? "the source of the unconfirmed move of " : "the carrier of ") + lock
						+ " (live in the lock log)");
			}
		}
	}

	private void advanceClock(long nextDue, boolean idle) {
		long now = this.world.clock.millis();
		long delta;
		if (idle && nextDue != Long.MAX_VALUE) {
			delta = Math.max(0, nextDue - now);
		}
		else if (nextDue != Long.MAX_VALUE && nextDue > now && this.rnd.nextInt(4) == 0) {
			delta = nextDue - now - ((this.rnd.nextBoolean()) ? 1 : 0); // exactly at, or
																		// just before, a
																		// due time
		}
		else {
			delta = 1 + this.rnd.nextInt(1500);
		}
		this.world.clock.advance(delta);
		trace(() -> "clock +" + delta + "ms -> " + SimWorld.rel(this.world.clock.millis()));
	}

	/**
	 * An operator replays a dead letter, or a record that succeeded, into stage 1 of its
	 * partition: a new life of the record, which enters its key's order where it is
	 * admitted.
	 */
	/**
	 * An operator's command (docs/PROTOCOL.md, rule 11), accepted by a random instance on
	 * what its own table shows (which may be behind the log): retry-now or
	 * dead-letter-now on the head of a held key. Some are written with a position the
	 * lock never had, some again (a duplicate), some with another group's owner. The
	 * accepting instance applies its own write at once, as the registry does on the
	 * acknowledgement, and may crash right after.
	 */
	private void command() {
		this.commandsWritten++;
		SimInstance instance = randomInstance();
		Incarnation inc = instance.current;
		int kind = this.rnd.nextInt(10);
		if (kind == 3) {
			commandBurst(instance);
			return;
		}
		OperatorCommand command;
		String group = null;
		if (kind == 0 && !this.ourCommands.isEmpty()) {
			command = this.ourCommands.get(this.rnd.nextInt(this.ourCommands.size()));
			this.stats.duplicateCommands++;
		}
		else {
			List<Lock> heads = new ArrayList<>();
			for (Lock lock : inc.table.snapshot()) {
				if (!lock.isPending() && !lock.isMoving() && inc.table.predecessor(lock) == null) {
					heads.add(lock);
				}
			}
			if (heads.isEmpty()) {
				trace(() -> inc + " has no held key for an operator's command");
				return;
			}
			Lock lock = heads.get(this.rnd.nextInt(heads.size()));
			OperatorCommand.Action action = this.rnd.nextBoolean() ? OperatorCommand.Action.RETRY_NOW
					: OperatorCommand.Action.DEAD_LETTER_NOW;
			command = OperatorCommand.on(lock, action, "operator", "c" + this.commandsWritten,
					this.world.clock.instant());
			if (kind == 1) {
				command = new OperatorCommand(command.id(), action, lock.id(), lock.key(), lock.originPartition(),
						new Position(lock.stage(), lock.at() + 1), "operator", command.requested());
				this.stats.voidCommands++;
			}
			else if (kind == 2) {
				group = "shipping";
				this.stats.foreignCommands++;
			}
		}
		accept(instance, command, group);
		if (faultsOn() && this.rnd.nextInt(4) == 0) {
			this.stats.crashesAfterAccepting++;
			crash(instance, "right after accepting a command");
		}
	}

	/**
	 * An operator clearing a backlog: commands, retry-now and dead-letter-now at random,
	 * on every head of one lock partition that the accepting instance's table shows, one
	 * after the other in one action, so they arrive together and while earlier ones are
	 * acted on.
	 */
	private void commandBurst(SimInstance instance) {
		Incarnation inc = instance.current;
		int partition = this.rnd.nextInt(this.config.partitions());
		List<Lock> heads = new ArrayList<>();
		for (Lock lock : inc.table.snapshot()) {
			if (lock.originPartition() == partition && !lock.isPending() && !lock.isMoving()
					&& inc.table.predecessor(lock) == null) {
				heads.add(lock);
			}
		}
		if (heads.isEmpty()) {
			trace(() -> inc + " has no held key in lock partition " + partition + " for a burst of commands");
			return;
		}
		this.stats.commandBursts++;
		trace(() -> inc + " accepts a burst of " + heads.size() + " commands on lock partition " + partition);
		for (Lock lock : heads) {
			OperatorCommand.Action action = this.rnd.nextBoolean() ? OperatorCommand.Action.RETRY_NOW
					: OperatorCommand.Action.DEAD_LETTER_NOW;
			accept(instance, OperatorCommand.on(lock, action, "operator", "c" + this.commandsWritten + "." + lock.id(),
					this.world.clock.instant()), null);
		}
	}

	/**
	 * Writes a command accepted by an instance; one of our group's is applied to the
	 * instance's own table at once, as the registry does on the acknowledgement.
	 */
	private void accept(SimInstance instance, OperatorCommand command, String group) {
		Incarnation inc = instance.current;
		if (group == null && inc.table.commands().stream().anyMatch((c) -> c.partition() == command.partition())) {
			this.stats.commandsBesideOthers++;
		}
		SimWorld.LockRec rec = this.world.appendCommand(command.partition(), command, command, instance.name, group);
		this.stats.commands++;
		if (group == null) {
			this.ourCommands.add(command);
			inc.table.applyCommand(rec.partition(), rec.offset(), command.id(), command);
		}
		String of = (group != null) ? " of group " + group : "";
		trace(() -> inc + " accepts " + command + of + " @locks/" + rec.partition() + "/" + rec.offset());
	}

	/**
	 * Whether a record waiting for its due time is woken for an operator's command: its
	 * owner's table holds one that applies to the lock the record carries, at the record,
	 * as the container wakes such a record when the command arrives (or right after it
	 * starts to wait).
	 */
	private boolean commanded(Task task) {
		return task.rec != null && commanded(task.work, task.rec); // an admission waits
																	// for no due time
	}

	/**
	 * Whether a pending command applying to the lock a record carries names it, at its
	 * owner.
	 */
	private boolean commanded(Work work, Rec rec) {
		if (this.config.commands() == 0) {
			return false;
		}
		String lockId = ProtocolHeaders.text(rec.headers(), ProtocolHeaders.LOCK_ID);
		int stage = this.world.plan.stageOf(rec.topic());
		Lock lock = (lockId != null && stage > 0) ? work.owner.table.find(lockId) : null;
		return lock != null && new Position(stage, rec.offset()).equals(lock.position())
				&& work.owner.table.commandFor(lock) != null;
	}

	private void replay() {
		List<Rec> letters = new ArrayList<>();
		List<Rec> succeeded = new ArrayList<>();
		for (int p = 0; p < this.config.partitions(); p++) {
			letters.addAll(this.world.log(this.world.plan.dlqTopic(), p));
		}
		for (SimWorld.Produced p : this.world.produced) {
			if (p.firstSuccess >= 0 && p.key != null) {
				succeeded.add(this.world.log(SimWorld.MAIN, p.partition).get((int) p.offset));
			}
		}
		if (letters.isEmpty() && succeeded.isEmpty()) {
			return;
		}
		boolean letter = !letters.isEmpty() && (succeeded.isEmpty() || this.rnd.nextInt(3) > 0);
		List<Rec> from = letter ? letters : succeeded;
		Rec source = from.get(this.rnd.nextInt(from.size()));
		this.replays++;
		SimWorld.Replay replay = this.world.replay(source);
		trace(() -> "REPLAY " + (letter ? "dead letter " : "record that succeeded ") + source + " as " + replay
				+ " lock " + replay.lockId + " key=" + keyName(source));
	}

	/**
	 * Another consumer group (or a tool that writes no owner) puts a record on one of
	 * this group's ladder topics: a stage record that looks like ours (the lock.id of one
	 * of our live locks, a replay entry of our key, a record without a key due at once,
	 * one with broken headers), or a lock record (a tombstone or another version of one
	 * of our live locks, a new lock or a pending replay on one of our keys). None of them
	 * may change anything.
	 */
	private void plantForeign() {
		this.foreign++;
		String group = (this.rnd.nextInt(3) == 0) ? null : SimWorld.OTHER_GROUP;
		List<Lock> live = new ArrayList<>();
		for (int p = 0; p < this.config.partitions(); p++) {
			live.addAll(this.world.liveLocks(p, this.world.lockEnd(p)));
		}
		Lock target = live.isEmpty() ? null : live.get(this.rnd.nextInt(live.size()));
		int partition = (target != null) ? target.originPartition() : this.rnd.nextInt(this.config.partitions());
		List<SimWorld.Produced> ofPartition = new ArrayList<>();
		for (SimWorld.Produced p : this.world.produced) {
			if (p.partition == partition && p.key != null) {
				ofPartition.add(p);
			}
		}
		SimWorld.Produced like = ofPartition.isEmpty() ? null : ofPartition.get(this.rnd.nextInt(ofPartition.size()));
		Bytes key = (target != null) ? target.key()
				: (like != null) ? like.key : Bytes.wrap(("k" + partition).getBytes(StandardCharsets.UTF_8));
		String owner = (group != null) ? "group " + group : "no owner";
		if (this.rnd.nextBoolean()) {
			int kind = this.rnd.nextInt(4);
			int stage = (kind == 1) ? 1 : 1 + this.rnd.nextInt(this.world.plan.lastStage());
			String topic = this.world.plan.stage(stage).topic();
			RecordHeaders headers = new RecordHeaders();
			if (like != null) {
				headers.add(SimWorld.USER_HEADER, like.value);
				put(headers, ProtocolHeaders.ORIGINAL_TOPIC, SimWorld.MAIN);
				put(headers, ProtocolHeaders.ORIGINAL_PARTITION, Integer.toString(like.partition));
				put(headers, ProtocolHeaders.ORIGINAL_OFFSET, Long.toString(like.offset));
			}
			byte[] recordKey = key.get();
			String what;
			switch (kind) {
				case 0 -> {
					String lockId = (target != null) ? target.id() : "L1";
					put(headers, ProtocolHeaders.RETRY_COUNT,
							Integer.toString((target != null) ? target.retryCount() : 0));
					put(headers, ProtocolHeaders.LOCK_ID, lockId);
					if (target != null) {
						topic = this.world.plan.stage(target.stage()).topic();
					}
					what = "a copy carrying lock " + lockId;
				}
				case 1 -> {
					put(headers, ProtocolHeaders.RETRY_COUNT, "0");
					put(headers, ProtocolHeaders.REPLAY_FROM_DLQ, this.world.plan.dlqTopic() + "/" + partition + "/0");
					what = "a replay entry";
				}
				case 2 -> {
					put(headers, ProtocolHeaders.RETRY_COUNT, "0");
					recordKey = null;
					what = "a record without a key";
				}
				default -> what = "a record without retry.count";
			}
			if (group != null) {
				put(headers, Ownership.HEADER, group);
			}
			byte[] value = (like != null) ? like.value : "forged".getBytes(StandardCharsets.UTF_8);
			Rec rec = this.world.plantStage(topic, partition, recordKey, value, headers);
			trace(() -> "PLANT " + rec + " of " + owner + ": " + what + " key=" + keyName(rec));
			return;
		}
		int kind = (target != null) ? this.rnd.nextInt(4) : 2 + this.rnd.nextInt(2);
		String id = (kind < 2) ? target.id() : "F" + this.foreign;
		Lock forged = switch (kind) {
			case 0 -> null;
			// our lock moved to where no record of ours is
			case 1 -> new Lock(id, key, partition, target.originOffset(), 1,
					(long) this.world.log(this.world.plan.stage(1).topic(), partition).size(), null, 0, null,
					SimWorld.FORGED, target.entry());
			case 2 ->
				new Lock(id, key, partition, (like != null) ? like.offset : 0, 1, 0L, null, 1, null, SimWorld.FORGED);
			default -> Lock.pendingReplay(id, key, partition, 0, SimWorld.FORGED);
		};
		SimWorld.LockRec rec = this.world.plantLock(partition, id, key, forged, group);
		trace(() -> "PLANT locks/" + partition + "/" + rec.offset() + " of " + owner + ": " + ((forged == null)
				? "a tombstone of our " + target : forged + ((kind == 1) ? ", over our " + target : "")));
	}

	private static void put(Headers headers, String name, String value) {
		headers.add(name, value.getBytes(StandardCharsets.UTF_8));
	}

	private void duplicate() {
		List<Object[]> candidates = new ArrayList<>();
		for (SimInstance instance : this.world.instances) {
			if (this.holds.containsKey(instance.current)) {
				continue; // its partitions are paused: its consumer delivers nothing
			}
			for (Work work : instance.current.works.values()) {
				List<Rec> log = this.world.log(work.tp.topic(), work.tp.partition());
				for (long o = this.world.committed(work.tp); o < work.fetchPos; o++) {
					Rec rec = log.get((int) o);
					if (!work.pending.contains(o)
							&& (rec.key() == null || !work.queues.containsKey(Bytes.wrap(rec.key())))) {
						candidates.add(new Object[] { work, rec });
					}
				}
			}
		}
		if (candidates.isEmpty()) {
			return;
		}
		Object[] pick = candidates.get(this.rnd.nextInt(candidates.size()));
		Work work = (Work) pick[0];
		if (work.shares != null) {
			// taken as a polled record is; one refused (at the bound, or held back) is
			// dropped: it is a record done already, delivered again
			if (work.tasks.size() < this.config.maxInFlight() && take(work, (Rec) pick[1], true)) {
				this.stats.duplicates++;
			}
			return;
		}
		Task task = new Task(work, (Rec) pick[1], true);
		enqueue(work, task);
		this.stats.duplicates++;
		trace(() -> work.owner + " gets a duplicate delivery of " + task);
	}

	/**
	 * The instance's process dies: its table and uncommitted progress are gone; it
	 * restarts.
	 */
	private void crash(SimInstance instance, String when) {
		Incarnation old = instance.current;
		old.works.values().forEach(this::countFailuresLost);
		Hold hold = this.holds.remove(old);
		if (hold != null) {
			// the hold dies with the process: the records it held were never committed
			this.stats.holdCrashes++;
			old.works.values().forEach((work) -> this.stats.heldDropped += work.tasks.size());
			trace(() -> "CRASH of " + old + " while it holds (since step " + hold.since + ")");
		}
		Incarnation fresh = this.world.restart(instance);
		listen(fresh);
		this.stats.crashes++;
		List<TP> orphaned = new ArrayList<>();
		this.owners.forEach((tp, owner) -> {
			if (owner == old) {
				orphaned.add(tp);
			}
		});
		orphaned.forEach(this.owners::remove);
		trace(() -> "CRASH " + old + " " + when + "; restarts as " + fresh + "; orphaned " + orphaned);
		assignOrphans(orphaned);
	}

	private void rebalance() {
		List<TP> moving = new ArrayList<>();
		TP first = this.allTopicPartitions.get(this.rnd.nextInt(this.allTopicPartitions.size()));
		if (this.config.splitOwnership()) {
			moving.add(first);
		}
		else {
			this.allTopicPartitions.stream().filter((tp) -> tp.partition() == first.partition()).forEach(moving::add);
		}
		if (!this.config.zombies()) {
			// the writes of a revoked partition's moves in flight go on (the container
			// does not wait
			// for them): a zombie, which compensate mode does not fence; off unless asked
			// for
			for (TP tp : moving) {
				Incarnation owner = this.owners.get(tp);
				if (movesInFlight(owner, tp)) {
					this.stats.deferredRebalances++;
					trace(() -> "REBALANCE of " + moving + " not now: " + owner + " has moves of " + tp + " in flight");
					return;
				}
			}
		}
		this.stats.rebalances++;
		for (TP tp : moving) {
			Incarnation old = this.owners.remove(tp);
			Work work = old.works.remove(tp);
			if (this.holds.containsKey(old)) {
				this.stats.holdRevocations++;
				this.stats.heldDropped += work.tasks.size();
			}
			long offset = work.committable(); // onPartitionsRevoked commits what is done
			if (offset > this.world.committed(tp)) {
				this.world.committed.put(tp, offset);
				checkCommit(old, tp, offset);
			}
			work.revoked = true;
			if (work.shares != null) {
				work.shares.revoked();
			}
			countFailuresLost(work);
			trace(() -> "REBALANCE revokes " + tp + " from " + old + " (commits " + offset + ")");
		}
		assignOrphans(moving);
	}

	private void countFailuresLost(Work work) {
		for (Task task : work.tasks) {
			if (task.wait == Wait.FAILED) {
				this.stats.failuresLost++;
			}
		}
	}

	private boolean movesInFlight(Incarnation owner, TP tp) {
		for (Task task : owner.works.get(tp).tasks) {
			if (task.wait == Wait.SETTLING) {
				return true;
			}
		}
		return this.world.sends.inFlightFrom(owner, tp);
	}

	private void assignOrphans(List<TP> orphaned) {
		if (orphaned.isEmpty()) {
			return;
		}
		Map<Integer, SimInstance> byPartition = new LinkedHashMap<>();
		for (TP tp : orphaned) {
			SimInstance to = this.config.splitOwnership() ? randomInstance()
					: byPartition.computeIfAbsent(tp.partition(), (p) -> randomInstance());
			Incarnation inc = to.current;
			Work work = new Work(tp, inc, this.world.committed(tp), this.world.lockEnd(tp.partition()));
			if (inc.tenants != null) {
				// a tenant drained to half its cap with records parked at it: the
				// re-reader looks at the partition's parked records at once
				work.shares = inc.tenants.shares(this.config.maxInFlight(), () -> {
					work.lookAt = 0;
					trace(() -> "    " + inc + " asks its re-reader to look at " + tp + " now: a tenant has room");
				});
			}
			inc.works.put(tp, work);
			this.owners.put(tp, inc);
			if (this.holds.containsKey(inc)) {
				this.stats.holdAssignments++; // paused from the start
			}
			trace(() -> "assign " + tp + " to " + inc + " from offset " + work.fetchPos + " (barrier: lock offset "
					+ work.barrierEnd + ")");
		}
		for (SimInstance instance : this.world.instances) {
			openBarriers(instance.current);
		}
	}

	private SimInstance randomInstance() {
		return this.world.instances.get(this.rnd.nextInt(this.world.instances.size()));
	}

	private String describeState() {
		StringBuilder out = new StringBuilder();
		out.append("clock ").append(SimWorld.rel(this.world.clock.millis())).append('\n');
		for (TP tp : this.allTopicPartitions) {
			Incarnation owner = this.owners.get(tp);
			Work work = owner.works.get(tp);
			out.append("  ")
				.append(tp)
				.append(" owner ")
				.append(owner)
				.append(" committed ")
				.append(this.world.committed(tp))
				.append(" end ")
				.append(this.world.log(tp.topic(), tp.partition()).size())
				.append(" fetch ")
				.append(work.fetchPos)
				.append(" barrierOpen ")
				.append(work.barrierOpen())
				.append(work.parked.isEmpty() ? "" : " parked " + work.parked)
				.append(work.commandPasses.isEmpty() ? "" : " passes asked for " + work.commandPasses)
				.append((work.shares == null) ? ""
						: " tenants in memory " + tenantsHeld(work) + " lookAt "
								+ ((work.lookAt == 0) ? "0" : SimWorld.rel(work.lookAt)))
				.append('\n');
			for (Task task : work.tasks) {
				out.append("    ")
					.append(task)
					.append(" key=")
					.append((task.key != null) ? new String(task.key.get(), StandardCharsets.UTF_8) : "null")
					.append(" wait=")
					.append(task.wait)
					.append((task.wait == Wait.UNTIL) ? " " + SimWorld.rel(task.dueAt) : "")
					.append(" woken=")
					.append(task.woken)
					.append(" routes=")
					.append(task.routes)
					.append('\n');
				String diagnosis = diagnose(task);
				if (diagnosis != null) {
					out.append("      ").append(diagnosis).append('\n');
				}
			}
		}
		for (SimInstance instance : this.world.instances) {
			Hold hold = this.holds.get(instance.current);
			if (hold != null) {
				out.append("  ")
					.append(instance.current)
					.append(" holds since step ")
					.append(hold.since)
					.append(", next probe at ")
					.append(SimWorld.rel(hold.probeAt))
					.append(" (failed probes: ")
					.append(hold.failedProbes)
					.append(")\n");
			}
			out.append("  table of ")
				.append(instance.current)
				.append(": ")
				.append(instance.current.table.snapshot())
				.append('\n');
			List<SimSends.Send> sends = this.world.sends.of(instance.current);
			if (!sends.isEmpty()) {
				out.append("  sends under way at ").append(instance.current).append(": ").append(sends).append('\n');
			}
		}
		out.append("  lock log replayed: ").append(this.world.replayLockLog().snapshot());
		for (Lock lock : this.world.replayLockLog().snapshot()) {
			Position carrier = lock.isMoving() ? lock.from() : lock.position();
			String topic = (carrier.stage() == 0) ? SimWorld.MAIN : this.world.plan.stage(carrier.stage()).topic();
			TP tp = new TP(topic, lock.originPartition());
			if (carrier.offset() < this.world.committed(tp)) {
				out.append("\n  LEAKED: ")
					.append(lock)
					.append(" names ")
					.append(tp)
					.append('/')
					.append(carrier.offset())
					.append(lock.isMoving() ? " as the source of its move" : " as its carrier")
					.append(", but that offset is committed: no record will ever route or release this lock");
			}
		}
		return out.toString();
	}

	/**
	 * Explains why a task waiting for its key can never go on, when the reason is a known
	 * one.
	 */
	private String diagnose(Task task) {
		if (task.wait != Wait.KEY || task.key == null || task.rec == null) {
			return null;
		}
		int stage = this.world.plan.stageOf(task.rec.topic());
		String lockId = ProtocolHeaders.text(task.rec.headers(), ProtocolHeaders.LOCK_ID);
		Lock lock = (lockId != null) ? task.work.owner.table.find(lockId) : null;
		if (stage > 0 && lock != null && lock.isMoving() && lock.from().stage() == stage
				&& lock.from().offset() > task.rec.offset()) {
			return "DEADLOCK: " + task + " is a stale copy of " + lock
					+ "; it waits for that move to be confirmed, but " + "the move's source " + task.rec.topic() + "/"
					+ task.rec.partition() + "/" + lock.from().offset()
					+ " is queued behind it (same key, same topic partition) and is never routed";
		}
		if (lockId == null && stage == 1 && ProtocolHeaders.isReplayEntry(task.rec.headers())) {
			lockId = SimWorld.replayLockId(task.rec);
			lock = task.work.owner.table.find(lockId);
		}
		Lock predecessor = (lock != null && !lock.isMoving() && !lock.isPending())
				? task.work.owner.table.predecessor(lock) : null;
		if (stage > 0 && predecessor != null && predecessor.isMoving() && predecessor.from().stage() == stage
				&& predecessor.from().offset() > task.rec.offset() && lock.at() == task.rec.offset()) {
			return "BLOCKED: " + task + " carries " + lock + ", which waits for its predecessor " + predecessor
					+ " to be confirmed, but that move's source " + task.rec.topic() + "/" + task.rec.partition() + "/"
					+ predecessor.from().offset() + " is queued behind " + task
					+ " (same key, same topic partition) and is never routed";
		}
		return null;
	}

	private String tenantsHeld(Work work) {
		Map<String, Integer> held = new LinkedHashMap<>();
		for (int t = 0; t < this.config.tenants(); t++) {
			held.put(TENANTS[t], work.shares.inFlight(TENANTS[t]));
		}
		held.put(TenantResolver.UNKNOWN, work.shares.inFlight(TenantResolver.UNKNOWN));
		return held.toString();
	}

	private static String keyName(Rec rec) {
		return (rec.key() != null) ? new String(rec.key(), StandardCharsets.UTF_8) : "null";
	}

	private void trace(Supplier<String> line) {
		if (this.world.trace != null) {
			String prefix = "[" + this.steps + "] ";
			this.world.trace.add(prefix + line.get());
		}
	}

}
