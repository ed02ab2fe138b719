package io.github.kafkaresilience.simulation;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.Consumer;
import java.util.stream.LongStream;

import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.internal.ladder.Step;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.Ownership;
import io.github.kafkaresilience.internal.lock.Position;
import io.github.kafkaresilience.simulation.SimWorld.Call;
import io.github.kafkaresilience.simulation.SimWorld.Fail;
import io.github.kafkaresilience.simulation.SimWorld.Incarnation;
import io.github.kafkaresilience.simulation.SimWorld.Rec;
import io.github.kafkaresilience.simulation.SimWorld.SimInstance;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * Checks the ordered-retry protocol (docs/PROTOCOL.md, "Lock records", rules 1 and 2, "An
 * example") without a broker: the real {@code StageRouter} and {@code LockTable} run in a
 * simulated cluster ({@link SimWorld}), driven by a seeded random scheduler
 * ({@link ProtocolSimulation}).
 * <p>
 * {@link #randomRunsKeepEveryInvariant()} runs seeds {@code 0..N-1},
 * {@code N = -Dsimulation.seeds} (10,000 by default); {@code -Dsimulation.seed=S} runs
 * seed {@code S} alone and prints its trace ({@code -Dsimulation.traceTail=LINES} prints
 * more of it). By default a seed simulates what the protocol says it survives: crashes
 * between any two port calls and between actions, rebalances that move one partition
 * behind the sync barrier while the instance's other partitions run on, as cooperative
 * and {@code consumer}-protocol rebalances revoke only what moves (in a quarter of the
 * seeds the main and stage topic partitions of one partition number are owned and moved
 * apart, as a listener's two consumers hold them; {@code -Dsimulation.split=true|false}
 * makes every seed one or the other), duplicate deliveries, publishes and lock writes
 * that fail cleanly (undone in compensate mode, docs/PROTOCOL.md, rule 6), and
 * concurrency inside an instance (other workers, the tailer and the clock run while a
 * route waits in a port call; off with {@code -Dsimulation.concurrency=false}). Two
 * harsher fault classes are off unless asked for ({@code true} or {@code random}, per
 * seed): {@code -Dsimulation.zombies} lets a route that was running, or a move that was
 * under way, when its partition was revoked go on writing (compensate mode does not fence
 * zombies; without it a partition is not revoked while one of its routes runs or one of
 * its moves is in flight, as the container waits for both before a revoked partition's
 * commit, and a zombie is what outlives that wait's timeout);
 * {@code -Dsimulation.ambiguous} makes some failing writes land anyway (the ack is lost).
 * <p>
 * Some seeds also replay dead letters (or records that succeeded) into stage 1, where the
 * owner of the main-topic partition admits them into their key's order with the real
 * {@code ReplayAdmission} (docs/PROTOCOL.md, rule 2.0), and plant records of another
 * consumer group, or without an owner, in the stage and lock topics (docs/PROTOCOL.md,
 * "Topics"). The invariants then also say: (6) no such record is run, applied to a lock
 * table, moved or dead-lettered; (7) a replay runs to success or the DLQ after every
 * record of its key with a live lock when it was admitted, and before every record of its
 * key taken from the main topic after that, and no pending lock is left. And for every
 * seed: (2d) the handlers of two records of one key never run at once (a handler runs
 * from the moment its port call is entered, where other actions go on, until it returns).
 * <p>
 * About four seeds in five write without waiting (docs/PROTOCOL.md, rule 6): lock writes
 * and publishes are sent, land and are acknowledged in later actions (in order per
 * instance and partition), the next step of a move runs when its write is acknowledged, a
 * crash lands some of the sends under way and loses the others, and with
 * {@code -Dsimulation.ambiguous} a send may also time out and land later. The others
 * write before returning; {@code -Dsimulation.async=true|false} makes every seed one or
 * the other. And for every seed: (8) no offset is committed past a record whose move is
 * unconfirmed (no live lock names a committed record as its move's source or its
 * carrier).
 * <p>
 * About a third of the seeds have operators' commands (docs/PROTOCOL.md, rule 11;
 * {@code -Dsimulation.commands=true|false}): a random instance accepts a retry-now or
 * dead-letter-now on the head of a held key as its own table shows it (so some are void
 * when written), and may crash right after; some are written twice, some for a position
 * the lock never had, some by another group. The invariants then also say: (12) a record
 * runs before its due time, or reaches the DLQ with {@code dlq.reason=operator}, only
 * when a command of ours named the lock it carries at that very record, and an operator's
 * dead letter counts no attempt; every other invariant (order, nothing lost, no live lock
 * left) holds with commands as without. Some commands come in bursts, one on every head
 * of a lock partition in one action, as an operator clearing a backlog sends them, so
 * they arrive together and while earlier ones of the partition are acted on.
 * <p>
 * Half the seeds park ({@code -Dsimulation.parking=true|false}): a record that waits
 * longer than the seed's park-after for its due time is let go of with the records of its
 * key queued behind it, and a later record of a parked key parks at once, as the
 * container's {@code PartitionWork} does; passes of the re-reader take them back,
 * deciding with the container's own {@code ParkedPass}: for due records, and for the keys
 * of the parked records commands name (asked for when a command arrives at the record's
 * owner, when such a record parks, and when it parks at once behind its key). Then (13):
 * a parked record that a command applying to its lock names always has a pass asked for
 * its key, and a pass for commands takes back every parked record of the keys it was
 * asked for unless its partition has no room (then they are asked for again); a pass that
 * took back a record ahead of a parked earlier record of its key would leave the key
 * waiting for ever (liveness).
 * <p>
 * About a third of the seeds are a batch listener's (docs/PROTOCOL.md, rule 10;
 * {@code -Dsimulation.batches=true|false} makes every seed one or the other): its routers
 * leave each run to a batch, which runs records of any partition and stage that may run
 * now. Half the batches stop at a failed record the method names (the records after it
 * are routed again, no attempt counted); the others are bisected (a record may run more
 * than once, its last run counts). Crashes, rebalances and other actions come inside the
 * batch's runs and between the steps its records take afterwards. These seeds have no
 * outages.
 * <p>
 * About a third of the other seeds have one or two outages of the handler's dependency:
 * for a few seconds of the simulated clock every run fails, transiently but for the
 * seed's share of permanent failures ({@code -Dsimulation.outages=true|false} makes every
 * seed one or the other). An instance's outage breaker opens on such a failure (at once
 * when the handler throws {@code DependencyUnavailableException}, or else now and then on
 * a record of the main topic), and the instance holds as the container's
 * {@code OutageHold} does: it takes no records, runs none that becomes ready, holds a run
 * that fails transiently instead of handling its failure (the rest of its step dropped:
 * no write, no attempt counted) and puts back the failure handling it had queued; now and
 * then one held record runs as a probe, and a probe that succeeds (or fails for good)
 * ends the hold. Crashes of the holding instance and rebalances of its partitions fall
 * into holds; the invariants above still hold, the held records being uncommitted and
 * delivered again.
 * <p>
 * About a third of the seeds have tenants ({@code -Dsimulation.tenants=true|false}; they
 * park, whatever the seed drew for parking, as the container parks records of tenants
 * only with parking on): each key belongs to one of two or three tenants, the first of
 * which produces most records (a flood), and a record without a key to none (the
 * container's {@code unknown}); a tenant may hold at most a small cap (one to three) of a
 * partition's records in memory. Each process asks its own {@code Tenants} (the real one,
 * with its tally) for a record's tenant and each partition its own {@code TenantShares}
 * whether the tenant is at its cap, as the container's {@code PartitionWork} does: a
 * polled (or redelivered) record whose tenant is at its cap is parked (its offset
 * pending, later records of its key parked behind it), or held back and polled again when
 * the partition has as many parked runs as its bound; a pass of the re-reader ends at a
 * record whose tenant is at its cap, and looks again a little later, or at once when the
 * tenant has drained to half its cap; a record done or parked for its due time leaves its
 * tenant's count. Then (14): a tenant never holds more than its cap of a partition's
 * records in memory, and the shares of each partition and the tally of each process count
 * what they hold; every invariant above holds with tenants as without. A replay's
 * admission whose key has records parked waits until they are taken back, and joins its
 * key's queue behind them (seed 122 found it passing them: (7)).
 * <p>
 * The other tests replay the trace of docs/PROTOCOL.md, "An example", step by step, and
 * crashes between its steps (docs/PROTOCOL.md, rule 6), and reproduce, deterministically,
 * the protocol bugs the simulation found, and scripted cases of replays and foreign
 * records.
 */
class ProtocolSimulationTest {

	@Test
	void randomRunsKeepEveryInvariant() {
		Long only = Long.getLong("simulation.seed");
		if (only != null) {
			ProtocolSimulation.Result result = ProtocolSimulation.run(only, true);
			System.out.println("seed " + only + ": " + (result.ok() ? "ok" : result.failure()) + "\n" + result.config()
					+ "\nstats: " + result.stats() + "\ntrace tail:\n" + result.trace());
			if (!result.ok()) {
				fail(report(result));
			}
			return;
		}
		int seeds = Integer.getInteger("simulation.seeds", 10_000);
		ProtocolSimulation.Stats total = new ProtocolSimulation.Stats();
		Map<Long, String> failures = new ConcurrentSkipListMap<>();
		long start = System.nanoTime();
		LongStream.range(0, seeds).parallel().forEach((seed) -> {
			ProtocolSimulation.Result result = ProtocolSimulation.run(seed, false);
			total.add(result.stats());
			if (!result.ok()) {
				failures.put(seed, firstLine(result.failure()));
			}
		});
		long millis = (System.nanoTime() - start) / 1_000_000;
		System.out.println("Protocol simulation: " + seeds + " seeds in " + millis + " ms, " + failures.size()
				+ " failed\n" + total);
		failures.forEach((seed, failure) -> System.out.println("  seed " + seed + ": " + failure));
		if (!failures.isEmpty()) {
			Map<String, List<Long>> byKind = new TreeMap<>();
			failures
				.forEach((seed, failure) -> byKind.computeIfAbsent(kind(failure), (k) -> new ArrayList<>()).add(seed));
			StringBuilder summary = new StringBuilder();
			byKind.forEach((kind, list) -> summary.append("  ")
				.append(list.size())
				.append(" x ")
				.append(kind)
				.append(": seeds ")
				.append(list.subList(0, Math.min(15, list.size())))
				.append((list.size() > 15) ? " ..." : "")
				.append('\n'));
			long first = failures.keySet().iterator().next();
			ProtocolSimulation.Result replay = ProtocolSimulation.run(first, true);
			fail(failures.size() + " of " + seeds + " seeds broke the protocol:\n" + summary + "\n" + report(replay));
		}
		if (seeds >= 1_000) {
			// the container's failure handling is a turn of its own: crashes fall between
			// the two too
			assertThat(total.failuresLost).as("failure handling lost to a crash or rebalance before it ran")
				.isPositive();
			if (!"false".equals(System.getProperty("simulation.batches"))) {
				// batches ran, some stopped short, some ran records again, and crashes
				// fell between their steps
				assertThat(total.batches).as("batches run").isPositive();
				assertThat(total.partialBatches).as("batches the method stopped short at a failed record").isPositive();
				assertThat(total.notRunInBatch).as("records a batch did not get to, routed again").isPositive();
				assertThat(total.bisectionRuns).as("records run again in a bisected batch").isPositive();
				assertThat(total.riders).as("records that rode behind an earlier record of their key").isPositive();
				assertThat(total.ridersHeldBack).as("riders held back by a failure of their key before them")
					.isPositive();
			}
			if (!"false".equals(System.getProperty("simulation.async-results"))) {
				// results completed later, some after their partition was revoked or
				// their instance died,
				// some while an operator's command named their record
				assertThat(total.asyncCompleted).as("results that completed and were taken on").isPositive();
				assertThat(total.asyncDropped).as("results that completed after a revocation or a crash").isPositive();
				assertThat(total.asyncBesideCommand).as("results that completed while a command named their record")
					.isPositive();
				if (!"false".equals(System.getProperty("simulation.batches"))) {
					assertThat(total.asyncBatches).as("batches whose result completed and was taken on").isPositive();
				}
			}
			if (!"false".equals(System.getProperty("simulation.commands"))) {
				// operators' commands were written, acted on, ended, and crashes fell
				// right after accepting them
				assertThat(total.commands).as("operator commands written").isPositive();
				assertThat(total.commandedRuns).as("records a retry-now ran before their due time").isPositive();
				assertThat(total.commandedDeadLetters).as("records a dead-letter-now sent to the DLQ").isPositive();
				assertThat(total.commandsEnded).as("commands ended by the instance that acted on them").isPositive();
				assertThat(total.voidCommands).as("commands written for a position their lock never had").isPositive();
				assertThat(total.foreignCommands).as("commands of another group").isPositive();
				assertThat(total.duplicateCommands).as("commands written twice").isPositive();
				assertThat(total.crashesAfterAccepting).as("crashes of the accepting instance").isPositive();
				// an operator clearing a backlog: many commands on one partition, beside
				// pending ones
				assertThat(total.commandBursts).as("bursts of commands on the heads of one partition").isPositive();
				assertThat(total.commandsBesideOthers)
					.as("commands accepted while others of their partition were pending")
					.isPositive();
			}
			if (!"false".equals(System.getProperty("simulation.parking"))) {
				// records parked and taken back by the re-reader's passes, for their due
				// time and for commands
				assertThat(total.parked).as("records parked").isPositive();
				assertThat(total.takenWhenDue).as("parked records taken back when due").isPositive();
				if (!"false".equals(System.getProperty("simulation.commands"))) {
					assertThat(total.takenForCommands).as("parked records taken back for operators' commands")
						.isPositive();
				}
			}
			if (!"false".equals(System.getProperty("simulation.tenants"))) {
				// tenants' records were parked at their cap, passes ended at a record
				// whose
				// tenant was at it, and tenants that drained asked for a look at once
				assertThat(total.parkedAtCap).as("records parked at their tenant's cap").isPositive();
				assertThat(total.heldBackAtCap).as("records held back at their tenant's cap").isPositive();
				assertThat(total.refusedAtCap).as("passes cut short at a record whose tenant was at its cap")
					.isPositive();
				assertThat(total.tenantLooks).as("looks asked for by a tenant that drained to half its cap")
					.isPositive();
			}
			boolean batchesOnly = "true".equals(System.getProperty("simulation.batches"));
			if (!"false".equals(System.getProperty("simulation.outages")) && !batchesOnly) {
				// holds happened, held runs and queued failure handling, and crashes and
				// rebalances fell into them
				assertThat(total.holds).as("outage holds").isPositive();
				assertThat(total.heldRuns).as("runs held instead of handled").isPositive();
				assertThat(total.heldFailuresPutBack).as("queued failure handling put back by a hold").isPositive();
				assertThat(total.holdsClosedByProbe).as("holds ended by a probe").isPositive();
				assertThat(total.heldDropped)
					.as("records in flight at a holding instance taken by a crash or a rebalance")
					.isPositive();
				assertThat(total.seedsWithHoldCrash).as("seeds in which a holding instance crashed")
					.isGreaterThanOrEqualTo(seeds / 100);
				assertThat(total.seedsWithHoldRevocation)
					.as("seeds in which a partition was revoked from a holding instance")
					.isGreaterThanOrEqualTo(seeds / 100);
			}
		}
	}

	/** The invariant a failure broke: its leading parenthesis. */
	private static String kind(String failure) {
		int close = failure.indexOf(')');
		return (failure.startsWith("(") && close > 0) ? failure.substring(0, close + 1) : firstLine(failure);
	}

	private static String report(ProtocolSimulation.Result result) {
		StringBuilder options = new StringBuilder();
		for (String option : List.of("split", "zombies", "ambiguous", "concurrency", "async", "outages", "batches",
				"commands", "parking", "tenants")) {
			String value = System.getProperty("simulation." + option);
			if (value != null) {
				options.append(" -Dsimulation.").append(option).append('=').append(value);
			}
		}
		long seed = result.config().seed();
		return "Seed " + seed + ": " + result.failure() + "\n\nConfig: " + result.config()
				+ "\n\nTrace tail (the last actions before the failure; '>' marks actions run inside a port call of "
				+ "the route above them, indented lines are port calls):\n" + result.trace()
				+ "\nReplay it with: mvn -o test -Dtest='ProtocolSimulationTest#randomRunsKeepEveryInvariant' "
				+ "-Dsimulation.seed=" + seed + options;
	}

	private static String firstLine(String text) {
		int newline = text.indexOf('\n');
		return (newline < 0) ? text : text.substring(0, newline);
	}

	@Test
	void aSeedReplaysTheSameRun() {
		for (long seed = 0; seed < 20; seed++) {
			ProtocolSimulation.Result a = ProtocolSimulation.run(seed, true);
			ProtocolSimulation.Result b = ProtocolSimulation.run(seed, true);
			assertThat(a.trace()).isEqualTo(b.trace());
			assertThat(a.stats().toString()).isEqualTo(b.stats().toString());
		}
	}

	// ---- the trace of docs/PROTOCOL.md, "An example", as steps 1 to 7: stages 30s and
	// 5m, key k,
	// A, B, C at offsets 10, 11, 14 of T (the page has them at 40, 41, 45)

	private static final String STAGE_1 = SimWorld.GROUP + "." + SimWorld.MAIN + ".retry.30s";

	private static final String STAGE_2 = SimWorld.GROUP + "." + SimWorld.MAIN + ".retry.5m";

	private static final Bytes K = Bytes.wrap("k".getBytes(StandardCharsets.UTF_8));

	/**
	 * A world with one instance and a scripted handler: the listed runs fail, all others
	 * succeed.
	 */
	@SuppressWarnings("unchecked")
	private static final class Script {

		final SimWorld world;

		final SimInstance instance;

		final List<String> runs = new ArrayList<>();

		final List<String> failing = new ArrayList<>();

		/** Runs that fail permanently: the record goes to the DLQ at once. */
		final List<String> permanent = new ArrayList<>();

		/**
		 * Actions to run before a port call: {call, calls of that kind to let through,
		 * action, at once}.
		 */
		final List<Object[]> triggers = new ArrayList<>();

		final List<Runnable> deferred = new ArrayList<>();

		/** How the next port calls of a kind fail, in turn; none listed: they do not. */
		final Map<Call, ArrayDeque<Fail>> failures = new EnumMap<>(Call.class);

		Script() {
			this(1);
		}

		/**
		 * Ten records of other keys at offsets 0-9 of partition 0, so that key k's start
		 * at 10.
		 */
		Script(int partitions) {
			this.world = new SimWorld(SimWorld.plan(List.of(Duration.ofSeconds(30), Duration.ofMinutes(5)), 4),
					partitions, true);
			this.instance = this.world.addInstance("I1");
			this.world.trace = new SimWorld.Trace(200);
			this.world.policy = (record, delivery) -> {
				String run = value(delivery.value()) + "@" + delivery.topic();
				this.runs.add(run);
				if (this.permanent.remove(run)) {
					return HandlerResult.failed(new PermanentFailureException("no way " + run));
				}
				return this.failing.remove(run) ? HandlerResult.failed(new IllegalStateException("boom " + run))
						: HandlerResult.success();
			};
			this.world.hook = (incarnation, call) -> {
				for (Object[] trigger : List.copyOf(this.triggers)) {
					if (trigger[0] == call) {
						int skip = (Integer) trigger[1];
						trigger[1] = skip - 1;
						if (skip == 0) {
							this.triggers.remove(trigger);
							Runnable action = () -> ((Consumer<Incarnation>) trigger[2]).accept(incarnation);
							if ((Boolean) trigger[3]) {
								action.run();
							}
							else {
								this.deferred.add(action);
							}
						}
					}
				}
				runDeferred(incarnation);
				ArrayDeque<Fail> next = this.failures.get(call);
				return (next != null && !next.isEmpty()) ? next.poll() : Fail.NONE;
			};
			for (int i = 0; i < 10; i++) {
				this.world.produce("other" + i, 0, false, false);
			}
		}

		Incarnation inc() {
			return this.instance.current;
		}

		/**
		 * Makes the next call of that kind (after those already listed) fail that way.
		 */
		void failNext(Call call, Fail fail) {
			this.failures.computeIfAbsent(call, (c) -> new ArrayDeque<>()).add(fail);
		}

		/**
		 * Makes the ports send without waiting: a write lands and completes when the
		 * script says so.
		 */
		void sendWithoutWaiting() {
			this.world.async = true;
		}

		/** The sends under way of the current process, oldest first. */
		List<SimSends.Send> sends() {
			return this.world.sends.of(inc());
		}

		/** The only send under way of the current process to that topic partition. */
		SimSends.Send sendTo(String topic, int partition) {
			List<SimSends.Send> to = sends().stream()
				.filter((send) -> send.tp.topic().equals(topic) && send.tp.partition() == partition)
				.toList();
			assertThat(to).as("sends under way to %s/%d", topic, partition).hasSize(1);
			return to.get(0);
		}

		/**
		 * Acknowledges a send (it lands first): what the router chained on it runs now.
		 */
		void ack(SimSends.Send send) {
			this.world.sends.ack(send, true);
			runDeferred(inc());
		}

		/** Acknowledges the sends under way, oldest first, until there are none. */
		void ackAll() {
			while (!this.world.sends.isEmpty()) {
				ack(this.world.sends.heads((incarnation) -> true).get(0));
			}
		}

		Rec produce(String key, int partition) {
			return this.world.produce(key, partition, false, false);
		}

		Step route(String topic, int partition, long offset) {
			Rec rec = this.world.log(topic, partition).get((int) offset);
			return this.world.route(inc(), rec.delivery(), false);
		}

		Rec produce(String key) {
			return this.world.produce(key, 0, false, false);
		}

		Step route(String topic, long offset) {
			return route(topic, offset, false);
		}

		Step route(String topic, long offset, boolean tailerSynced) {
			Rec rec = this.world.log(topic, 0).get((int) offset);
			Incarnation incarnation = inc();
			try {
				return this.world.route(incarnation, rec.delivery(), tailerSynced);
			}
			finally {
				runDeferred(incarnation);
			}
		}

		/**
		 * Runs the triggered actions, unless the route in progress holds its router's
		 * monitor (a synchronized section of StageRouter): another worker of the instance
		 * would block on it, so its action waits until the monitor is free (the next port
		 * call outside, or the end of the route).
		 */
		private void runDeferred(Incarnation incarnation) {
			if (Thread.holdsLock(incarnation.router)) {
				return;
			}
			while (!this.deferred.isEmpty()) {
				this.deferred.remove(0).run();
			}
		}

		/** The process dies right before the {@code skip+1}-th call of that kind. */
		void crashBefore(Call call, int skip) {
			this.triggers.add(new Object[] { call, skip,
					(Consumer<Incarnation>) (incarnation) -> this.world.restart(incarnation.instance), true });
		}

		/**
		 * Runs an action (another worker's route, say) right before the {@code skip+1}-th
		 * call of that kind, or as soon after as the router's monitor allows.
		 */
		void before(Call call, int skip, Consumer<Incarnation> action) {
			this.triggers.add(new Object[] { call, skip, action, false });
		}

		void advance(Duration duration) {
			this.world.clock.advance(duration.toMillis());
		}

		List<Lock> locks() {
			return inc().table.locksOf(K);
		}

		/** Records (topic/offset) the drain saw done. */
		final Set<String> done = new HashSet<>();

		final Set<String> synced = new HashSet<>();

		final List<String> stuck = new ArrayList<>();

		/**
		 * Routes records like the container until nothing moves: each given topic from
		 * its start offset, in offset order, one record at a time per key; a record
		 * waiting for its due time gets it, one waiting for the tailer gets a caught-up
		 * table.
		 */
		void drain(Map<String, Long> start) {
			boolean progress = true;
			for (int round = 0; progress && round < 100; round++) {
				progress = false;
				for (String topic : this.world.plan.consumedTopics()) {
					if (!start.containsKey(topic)) {
						continue;
					}
					List<Rec> log = this.world.log(topic, 0);
					Set<Bytes> busy = new HashSet<>();
					for (long offset = start.get(topic); offset < log.size(); offset++) {
						Rec rec = log.get((int) offset);
						String id = topic + "/" + offset;
						if (this.done.contains(id) || !busy.add(Bytes.wrap(rec.key()))) {
							continue;
						}
						Step step = this.world.route(inc(), rec.delivery(), this.synced.contains(id));
						if (step.kind() == Step.Kind.WAIT_UNTIL) {
							advance(Duration.ofMillis(Math.max(0, step.dueAt() - this.world.clock.millis())));
							step = this.world.route(inc(), rec.delivery(), this.synced.contains(id));
						}
						if (step.kind() == Step.Kind.WAIT_FOR_TAILER) {
							this.world.catchUp(inc());
							this.synced.add(id);
							step = this.world.route(inc(), rec.delivery(), true);
						}
						if (step.kind() == Step.Kind.DONE) {
							this.done.add(id);
							busy.remove(Bytes.wrap(rec.key()));
							progress = true;
						}
					}
				}
			}
			this.stuck.clear();
			start.forEach((topic, from) -> {
				for (long offset = from; offset < this.world.log(topic, 0).size(); offset++) {
					if (!this.done.contains(topic + "/" + offset)) {
						this.stuck.add(topic + "/" + offset);
					}
				}
			});
		}

		/** The last drain left every record it was given done, and no lock is left. */
		void assertQuiet(String when) {
			assertThat(this.stuck)
				.as("records never done " + when + " (key k is stuck); live locks: "
						+ this.world.replayLockLog().snapshot())
				.isEmpty();
			assertThat(this.world.replayLockLog().snapshot()).as("live locks " + when).isEmpty();
		}

		Rec record(String topic, long offset) {
			return this.world.log(topic, 0).get((int) offset);
		}

		String value(byte[] bytes) {
			return new String(bytes, StandardCharsets.UTF_8);
		}

	}

	private static void assertLock(Lock lock, long origin, int stage, long at, int retryCount) {
		assertThat(lock.originOffset()).as("origin of %s", lock).isEqualTo(origin);
		assertThat(lock.stage()).as("stage of %s", lock).isEqualTo(stage);
		assertThat(lock.at()).as("at of %s", lock).isEqualTo(at);
		assertThat(lock.retryCount()).as("retry count of %s", lock).isEqualTo(retryCount);
	}

	private static String header(Rec rec, String name) {
		return ProtocolHeaders.text(rec.headers(), name);
	}

	/**
	 * Steps 1-2 of the trace: A and B at offsets 10 and 11, two records of other keys at
	 * 12 and 13.
	 */
	private static void stepsOneAndTwo(Script s) {
		Rec a = s.produce("k");
		Rec b = s.produce("k");
		assertThat(a.offset()).isEqualTo(10);
		assertThat(b.offset()).isEqualTo(11);
		s.produce("other-x");
		s.produce("other-y");

		// 1: A fails on T -> L_A moved to stage 1 with retry.count=1
		s.failing.add("v10@" + SimWorld.MAIN);
		assertThat(s.route(SimWorld.MAIN, 10).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.locks()).hasSize(1);
		assertLock(s.locks().get(0), 10, 1, 0, 1);
		assertThat(header(s.record(STAGE_1, 0), ProtocolHeaders.RETRY_COUNT)).isEqualTo("1");

		// 2: B arrives, k is locked -> follower L_B moved to stage 1 with retry.count=0,
		// B does not run
		assertThat(s.route(SimWorld.MAIN, 11).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.runs).containsExactly("v10@orders");
		assertThat(s.locks()).hasSize(2);
		assertLock(s.locks().get(0), 10, 1, 0, 1);
		assertLock(s.locks().get(1), 11, 1, 1, 0);
		assertThat(header(s.record(STAGE_1, 1), ProtocolHeaders.RETRY_COUNT)).isEqualTo("0");
	}

	@Test
	void workedTraceOfSection11GivesTheLockTableOfEachStep() {
		Script s = new Script();
		stepsOneAndTwo(s);
		// B in stage 1 is not the head: it waits for A
		assertThat(s.route(STAGE_1, 1).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		// A in stage 1 is the head but not due before 30s
		Step early = s.route(STAGE_1, 0);
		assertThat(early.kind()).isEqualTo(Step.Kind.WAIT_UNTIL);
		assertThat(early.dueAt()).isEqualTo(s.record(STAGE_1, 0).timestamp() + 30_000);

		// 3: stage 1 at 30s: A is head, fails again -> L_A moved to stage 2
		s.advance(Duration.ofSeconds(30));
		s.failing.add("v10@" + STAGE_1);
		assertThat(s.route(STAGE_1, 0).kind()).isEqualTo(Step.Kind.DONE);
		assertLock(s.locks().get(0), 10, 2, 0, 2);
		assertLock(s.locks().get(1), 11, 1, 1, 0);

		// 4: stage 1 reaches B: predecessor L_A sits at (2, 0), after (1, 1) -> forward B
		// to stage 2
		assertThat(s.route(STAGE_1, 1).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.locks()).hasSize(2);
		assertLock(s.locks().get(1), 11, 2, 1, 0);
		assertThat(header(s.record(STAGE_2, 1), ProtocolHeaders.RETRY_COUNT)).isEqualTo("0");

		// 5: C arrives on T -> follower L_C moved to stage 1; on reaching it, forwarded
		// behind L_B
		Rec c = s.produce("k");
		assertThat(c.offset()).isEqualTo(14);
		assertThat(s.route(SimWorld.MAIN, 14).kind()).isEqualTo(Step.Kind.DONE);
		assertLock(s.locks().get(2), 14, 1, 2, 0);
		assertThat(s.route(STAGE_1, 2).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.locks()).hasSize(3);
		assertLock(s.locks().get(2), 14, 2, 2, 0);
		// B and C in stage 2 wait for A
		assertThat(s.route(STAGE_2, 1).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		assertThat(s.route(STAGE_2, 2).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);

		// 6: stage 2 at 5m: A succeeds -> L_A released
		assertThat(s.route(STAGE_2, 0).kind()).isEqualTo(Step.Kind.WAIT_UNTIL);
		s.advance(Duration.ofMinutes(5));
		assertThat(s.route(STAGE_2, 0).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.locks()).hasSize(2);
		assertLock(s.locks().get(0), 11, 2, 1, 0);
		assertLock(s.locks().get(1), 14, 2, 2, 0);

		// 7: B is now head, retry.count=0 -> runs at once, succeeds, released; then C
		// likewise
		assertThat(s.route(STAGE_2, 2).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		assertThat(s.route(STAGE_2, 1).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.locks()).hasSize(1);
		assertThat(s.route(STAGE_2, 2).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.locks()).isEmpty();
		assertThat(s.runs).containsExactly("v10@orders", "v10@" + STAGE_1, "v10@" + STAGE_2, "v11@" + STAGE_2,
				"v14@" + STAGE_2);
		assertThat(s.world.replayLockLog().size()).isZero();
		assertThat(s.world.log(s.world.plan.dlqTopic(), 0)).isEmpty();
	}

	@Test
	void crashAfterStep3PublishIsHealedByTheRedeliveredSource() {
		Script s = new Script();
		stepsOneAndTwo(s);
		s.advance(Duration.ofSeconds(30));
		s.failing.add("v10@" + STAGE_1);
		// step 3 writes {stage 2, from (1, 0)}, publishes to stage 2, and dies before
		// writing at
		s.crashBefore(Call.WRITE, 1);
		assertThatThrownBy(() -> s.route(STAGE_1, 0)).isInstanceOf(Crash.class);
		assertThat(s.record(STAGE_2, 0).value()).isEqualTo("v10".getBytes(StandardCharsets.UTF_8));

		// the new incarnation rebuilds its table from the lock log (the sync barrier)
		s.world.catchUp(s.inc());
		Lock moving = s.locks().get(0);
		assertThat(moving.isMoving()).isTrue();
		assertThat(moving.stage()).isEqualTo(2);
		assertThat(moving.from()).isEqualTo(new Position(1, 0));
		assertThat(moving.retryCount()).isEqualTo(2);

		// the copy already in stage 2 is not the source of the move: it waits
		assertThat(s.route(STAGE_2, 0).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		// B waits for its predecessor's move
		assertThat(s.route(STAGE_1, 1).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);

		// A is redelivered from stage 1, finds L_A.from == (1, 0) and completes the move
		// without running again
		int runsBefore = s.runs.size();
		assertThat(s.route(STAGE_1, 0).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.runs).hasSize(runsBefore);
		assertLock(s.locks().get(0), 10, 2, 1, 2);
		assertThat(header(s.record(STAGE_2, 1), ProtocolHeaders.ERROR_CLASS)).isEqualTo("transient");

		// whichever record at does not name is skipped as stale, once the tailer has
		// caught up
		assertThat(s.route(STAGE_2, 0).kind()).isEqualTo(Step.Kind.WAIT_FOR_TAILER);
		assertThat(s.route(STAGE_2, 0, true).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.runs).hasSize(runsBefore);

		// B is forwarded behind A's confirmed position (2, 1)
		assertThat(s.route(STAGE_1, 1).kind()).isEqualTo(Step.Kind.DONE);
		assertLock(s.locks().get(1), 11, 2, 2, 0);

		s.advance(Duration.ofMinutes(5));
		assertThat(s.route(STAGE_2, 2).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		assertThat(s.route(STAGE_2, 1).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.route(STAGE_2, 2).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.locks()).isEmpty();
		assertThat(s.runs).containsExactly("v10@orders", "v10@" + STAGE_1, "v10@" + STAGE_2, "v11@" + STAGE_2);
		assertThat(s.world.replayLockLog().size()).isZero();
	}

	@Test
	void crashAfterStep6TombstoneSkipsTheRedeliveredRecord() {
		Script s = new Script();
		stepsOneAndTwo(s);
		s.advance(Duration.ofSeconds(30));
		s.failing.add("v10@" + STAGE_1);
		assertThat(s.route(STAGE_1, 0).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.route(STAGE_1, 1).kind()).isEqualTo(Step.Kind.DONE);
		s.advance(Duration.ofMinutes(5));

		// 6: A succeeds and L_A is released; the process dies before the offset is
		// committed
		assertThat(s.route(STAGE_2, 0).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.locks()).hasSize(1);
		s.world.restart(s.instance);
		int runsBefore = s.runs.size();

		// A is redelivered from stage 2 before the new table has caught up: it waits for
		// the tailer
		assertThat(s.route(STAGE_2, 0).kind()).isEqualTo(Step.Kind.WAIT_FOR_TAILER);
		s.world.catchUp(s.inc());
		// after catching up L_A is gone: A is a copy of finished work and is skipped
		assertThat(s.route(STAGE_2, 0, true).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.runs).hasSize(runsBefore);
		assertThat(s.locks()).hasSize(1);
		assertLock(s.locks().get(0), 11, 2, 1, 0);

		// 7 goes on as before
		assertThat(s.route(STAGE_2, 1).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.locks()).isEmpty();
		assertThat(s.runs).endsWith("v11@" + STAGE_2);
		assertThat(s.world.replayLockLog().size()).isZero();
	}

	@Test
	void crashBetweenAFollowersLockAndItsPublishIsHealedFromTheMainTopic() {
		// a crash between step 2's lock write and its publish: B is redelivered from T
		// and completes the move
		Script s = new Script();
		Rec a = s.produce("k");
		Rec b = s.produce("k");
		s.failing.add("v10@" + SimWorld.MAIN);
		assertThat(s.route(SimWorld.MAIN, a.offset()).kind()).isEqualTo(Step.Kind.DONE);
		s.crashBefore(Call.PUBLISH, 0);
		assertThatThrownBy(() -> s.route(SimWorld.MAIN, b.offset())).isInstanceOf(Crash.class);
		s.world.catchUp(s.inc());
		assertThat(s.locks()).hasSize(2);
		assertThat(s.locks().get(1).isMoving()).isTrue();
		assertThat(s.locks().get(1).from()).isEqualTo(new Position(0, 11));
		assertThat(s.route(SimWorld.MAIN, b.offset()).kind()).isEqualTo(Step.Kind.DONE);
		assertLock(s.locks().get(1), 11, 1, 1, 0);
		assertThat(s.runs).containsExactly("v10@orders");
	}

	// ---- moves whose writes complete in callbacks (docs/PROTOCOL.md, rule 6): the route
	// returns, the
	// move goes on

	private static final String LOCKS = SimWorld.GROUP + "." + SimWorld.MAIN + ".locks";

	private static final Bytes J = Bytes.wrap("j".getBytes(StandardCharsets.UTF_8));

	@Test
	void movesOfTwoKeysAreUnderWayAtOnceAndTheLaterOneMayBeConfirmedFirst() {
		Script s = new Script(2);
		s.sendWithoutWaiting();
		Rec a = s.produce("k", 0);
		Rec b = s.produce("j", 1);
		s.failing.add("v10@" + SimWorld.MAIN);
		s.failing.add("v11@" + SimWorld.MAIN);

		// A fails and its move starts; the route returns with the lock write under way,
		// and so does B's
		Step movingA = s.route(SimWorld.MAIN, 0, a.offset());
		Step movingB = s.route(SimWorld.MAIN, 1, b.offset());
		assertThat(movingA.kind()).isEqualTo(Step.Kind.SETTLING);
		assertThat(movingB.kind()).isEqualTo(Step.Kind.SETTLING);
		assertThat(s.sends()).extracting((send) -> send.tp.toString()).containsExactly(LOCKS + "/0", LOCKS + "/1");

		// B's writes are acknowledged first, each step starting the next: lock, publish,
		// confirmation
		s.ack(s.sendTo(LOCKS, 1));
		assertThat(s.inc().table.locksOf(J).get(0).isMoving()).isTrue();
		s.ack(s.sendTo(STAGE_1, 1));
		assertThat(movingB.writes()).isNotDone();
		s.ack(s.sendTo(LOCKS, 1));
		assertThat(movingB.writes()).isCompleted();
		assertLock(s.inc().table.locksOf(J).get(0), 0, 1, 0, 1);

		// A's move has not even written its lock: A is nowhere but in the main topic,
		// which must
		// not be committed past it (the container keeps its offset pending)
		assertThat(movingA.writes()).isNotDone();
		assertThat(s.world.lockEnd(0)).isZero();
		assertThat(s.locks()).isEmpty();
		assertThat(s.sends()).hasSize(1);

		s.ack(s.sendTo(LOCKS, 0));
		s.ack(s.sendTo(STAGE_1, 0));
		s.ack(s.sendTo(LOCKS, 0));
		assertThat(movingA.writes()).isCompleted();
		assertLock(s.locks().get(0), 10, 1, 0, 1);
		assertThat(s.sends()).isEmpty();
		assertThat(s.runs).containsExactly("v10@" + SimWorld.MAIN, "v11@" + SimWorld.MAIN);
	}

	@Test
	void crashAfterTheLockWriteLandedAndBeforeThePublishWasSentIsHealedFromTheMainTopic() {
		Script s = new Script();
		s.sendWithoutWaiting();
		s.produce("k");
		s.failing.add("v10@" + SimWorld.MAIN);
		Incarnation first = s.inc();
		Step moving = s.route(SimWorld.MAIN, 10);
		assertThat(moving.kind()).isEqualTo(Step.Kind.SETTLING);

		// the lock write is acknowledged; the process dies in the callback, before it
		// sends the publish
		s.crashBefore(Call.PUBLISH, 0);
		s.ack(s.sendTo(LOCKS, 0));
		assertThat(first.dead).isTrue();
		assertThat(s.world.log(STAGE_1, 0)).isEmpty();
		assertThat(s.world.sends.isEmpty()).isTrue();

		// the new process sees the lock in flight, from (0, 10)
		s.world.catchUp(s.inc());
		Lock inFlight = s.locks().get(0);
		assertThat(inFlight.isMoving()).isTrue();
		assertThat(inFlight.from()).isEqualTo(new Position(0, 10));

		// A is delivered again from T and finishes the move without running again
		Step completing = s.route(SimWorld.MAIN, 10);
		assertThat(completing.kind()).isEqualTo(Step.Kind.SETTLING);
		s.ackAll();
		assertThat(completing.writes()).isCompleted();
		assertLock(s.locks().get(0), 10, 1, 0, 1);
		assertThat(s.runs).containsExactly("v10@" + SimWorld.MAIN);

		s.advance(Duration.ofSeconds(30));
		Step released = s.route(STAGE_1, 0);
		assertThat(released.kind()).isEqualTo(Step.Kind.SETTLING);
		s.ackAll();
		assertThat(released.writes()).isCompleted();
		assertThat(s.locks()).isEmpty();
		assertThat(s.world.replayLockLog().snapshot()).isEmpty();
		assertThat(s.runs).containsExactly("v10@" + SimWorld.MAIN, "v10@" + STAGE_1);
	}

	@Test
	void crashWithThePublishUnderWayThatStillLandsLeavesACopyThatTheRedeliveryMakesStale() {
		Script s = new Script();
		s.sendWithoutWaiting();
		s.produce("k");
		s.failing.add("v10@" + SimWorld.MAIN);
		Step moving = s.route(SimWorld.MAIN, 10);
		s.ack(s.sendTo(LOCKS, 0));
		s.sendTo(STAGE_1, 0);

		// the process dies with the publish under way; the broker still takes it
		s.world.landsAtCrash = (send) -> true;
		s.world.restart(s.instance);
		assertThat(moving.writes()).as("nothing completes the writes of a dead process").isNotDone();
		assertThat(s.world.log(STAGE_1, 0)).hasSize(1);
		assertThat(header(s.record(STAGE_1, 0), ProtocolHeaders.LOCK_ID))
			.isEqualTo(s.world.replayLockLog().snapshot().iterator().next().id());

		// the new process sees the lock in flight; the copy may become its carrier, so it
		// waits
		s.world.catchUp(s.inc());
		assertThat(s.locks().get(0).isMoving()).isTrue();
		assertThat(s.route(STAGE_1, 0).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);

		// A is delivered again from T and finishes the move with a second copy, without
		// running again
		Step completing = s.route(SimWorld.MAIN, 10);
		s.ackAll();
		assertThat(completing.writes()).isCompleted();
		assertLock(s.locks().get(0), 10, 1, 1, 1);

		// the copy that landed after the crash is stale, once the tailer has caught up
		assertThat(s.route(STAGE_1, 0).kind()).isEqualTo(Step.Kind.WAIT_FOR_TAILER);
		assertThat(s.route(STAGE_1, 0, true).kind()).isEqualTo(Step.Kind.DONE);
		s.advance(Duration.ofSeconds(30));
		Step released = s.route(STAGE_1, 1);
		s.ackAll();
		assertThat(released.writes()).isCompleted();
		assertThat(s.locks()).isEmpty();
		assertThat(s.runs).containsExactly("v10@" + SimWorld.MAIN, "v10@" + STAGE_1);
	}

	/**
	 * Found by the simulation once writes completed in callbacks and could fail in two
	 * ways in one move (seeds 1128, 1443 and 2458 with
	 * {@code -Dsimulation.ambiguous=random}): a lock write landed although it reported a
	 * failure (its acknowledgement was lost, or it timed out and landed before the next
	 * route), and the undo of it failed too. The container routed the record again after
	 * a backoff, on a table that had never seen the lock: A ran again and wrote a second
	 * lock for the same record, and the first stayed in flight with its source committed,
	 * blocking the key until the reaper would remove it. A redelivery after a crash does
	 * not have this problem, since it waits behind the sync barrier; a record routed
	 * again after a failure now also waits for the tailer to catch up with its lock
	 * partition.
	 */
	@Test
	void aMoveWhoseLockWriteLandedUnacknowledgedAndWhoseUndoFailedIsFinishedOnACaughtUpTable() {
		Script s = new Script();
		s.sendWithoutWaiting();
		s.produce("k");
		s.failing.add("v10@" + SimWorld.MAIN);
		s.failNext(Call.WRITE, Fail.AMBIGUOUS);
		s.failNext(Call.RELEASE, Fail.CLEAN);
		Step moving = s.route(SimWorld.MAIN, 10);
		s.ack(s.sendTo(LOCKS, 0)); // the lock write lands, its acknowledgement is lost:
									// undone ...
		s.ack(s.sendTo(LOCKS, 0)); // ... but the release fails
		assertThat(moving.writes()).isCompletedExceptionally();

		// the lock is in flight in the lock topic, and this instance's table has not seen
		// it: a route
		// now would take A for a record never handled (docs/PROTOCOL.md, rule 1.3) rather
		// than one whose move
		// is unfinished (docs/PROTOCOL.md, rule 1.1)
		assertThat(s.world.replayLockLog().snapshot()).singleElement()
			.satisfies((lock) -> assertThat(lock.from()).isEqualTo(new Position(0, 10)));
		assertThat(s.locks()).isEmpty();

		// caught up, the route finishes that move, without running A again or writing a
		// second lock
		s.world.catchUp(s.inc());
		Step completing = s.route(SimWorld.MAIN, 10, true);
		s.ackAll();
		assertThat(completing.writes()).isCompleted();
		assertLock(s.locks().get(0), 10, 1, 0, 1);
		assertThat(s.world.replayLockLog().snapshot()).hasSize(1);
		assertThat(s.runs).containsExactly("v10@" + SimWorld.MAIN);
	}

	/**
	 * The same failure on a release (seed 1025 with
	 * {@code -Dsimulation.ambiguous=random}): the tombstone landed, its acknowledgement
	 * was lost, and the table still held the lock. Routed again on it, A ran a second
	 * time, failed, and its move wrote the released lock back.
	 */
	@Test
	void aReleaseThatLandedUnacknowledgedIsSeenOnACaughtUpTableAndTheRecordIsNotRunAgain() {
		Script s = new Script();
		s.sendWithoutWaiting();
		s.produce("k");
		s.failing.add("v10@" + SimWorld.MAIN);
		s.route(SimWorld.MAIN, 10);
		s.ackAll();
		s.advance(Duration.ofSeconds(30));
		s.failNext(Call.RELEASE, Fail.AMBIGUOUS);
		Step releasing = s.route(STAGE_1, 0);
		s.ack(s.sendTo(LOCKS, 0));
		assertThat(releasing.writes()).isCompletedExceptionally();
		assertThat(s.world.replayLockLog().snapshot()).isEmpty();
		assertThat(s.locks()).hasSize(1);

		s.world.catchUp(s.inc());
		assertThat(s.route(STAGE_1, 0, true).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.locks()).isEmpty();
		assertThat(s.runs).containsExactly("v10@" + SimWorld.MAIN, "v10@" + STAGE_1);
	}

	/**
	 * Found by the simulation once tenants parked records of the main topic: a replay's
	 * admission queued behind the records of its key in memory only, so a record of its
	 * key parked at its tenant's cap was passed, and the replay ran before it (seed 122,
	 * without any fault). The admission now waits until its key's parked records are
	 * taken back.
	 */
	@Test
	void aReplaysAdmissionWaitsForTheParkedRecordsOfItsKey() {
		ProtocolSimulation.Result result = ProtocolSimulation.run(ProtocolSimulation.Config.of(122), true);
		assertThat(result.config().tenants()).isGreaterThan(0);
		assertThat(result.config().replays()).isGreaterThan(0);
		if (!result.ok()) {
			fail(report(result));
		}
	}

	@Test
	void seedsThatRoutedARecordAgainOnATableThatMissedItsLandedWrite() {
		for (long seed : new long[] { 1025, 1128, 1443, 2458 }) {
			// found before seeds had outages and tenants: without them, each seed runs as
			// it
			// did then
			ProtocolSimulation.Result result = ProtocolSimulation
				.run(ProtocolSimulation.Config.of(seed).withoutTenants().withAmbiguousWrites().withoutOutages(), true);
			assertThat(result.config().asyncWrites()).isTrue();
			if (!result.ok()) {
				fail(report(result));
			}
		}
	}

	/**
	 * Found by the simulation in the first router (about 1% of the seeds, e.g. 501 with
	 * crashes only, 744 without concurrency); a regression test since. A lock whose
	 * record moves within one stage topic (the last stage re-appends it; a forward can
	 * stay in its stage; a completed move may leave a second copy) has an old copy at (s,
	 * x) and its carrier at (s, x') with x < x'. If the process dies after writing the
	 * next move {from (s, x')} and before publishing, and (s, x) was not committed, the
	 * new owner gets (s, x) first. The rule for a move in flight (docs/PROTOCOL.md, rule
	 * 2.3, as it then read) makes it wait for the move, but the move's source (s, x') has
	 * the same key in the same partition, so the container routes it only once (s, x) is
	 * done: the key never moves again and the partition's committed offset is stuck. (Any
	 * copy that the move publishes to that topic comes after (s, x'), so (s, x) can only
	 * be stale.)
	 * <p>
	 * Here the old copy is the one a crash after step 3's publish leaves behind
	 * ({@code crashAfterStep3PublishIsHealedByTheRedeliveredSource}): (2, 0) stale, (2,
	 * 1) carrying L_A; A fails again in stage 2, the last stage, and the process dies
	 * between writing {stage 2, from (2, 1)} and publishing.
	 */
	@Test
	void staleCopyQueuedBeforeTheSourceOfAnUnfinishedMoveMustNotBlockIt() {
		Script s = new Script();
		stepsOneAndTwo(s);
		s.advance(Duration.ofSeconds(30));
		s.failing.add("v10@" + STAGE_1);
		s.crashBefore(Call.WRITE, 1);
		assertThatThrownBy(() -> s.route(STAGE_1, 0)).isInstanceOf(Crash.class);
		s.world.catchUp(s.inc());
		assertThat(s.route(STAGE_1, 0).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.route(STAGE_1, 1).kind()).isEqualTo(Step.Kind.DONE);
		assertLock(s.locks().get(0), 10, 2, 1, 2);
		assertLock(s.locks().get(1), 11, 2, 2, 0);

		// stage 2, in offset order: the stale copy is skipped (on a caught-up table),
		// then A fails a third time
		s.advance(Duration.ofMinutes(5));
		assertThat(s.route(STAGE_2, 0, true).kind()).isEqualTo(Step.Kind.DONE);
		s.failing.add("v10@" + STAGE_2);
		s.crashBefore(Call.PUBLISH, 0);
		assertThatThrownBy(() -> s.route(STAGE_2, 1)).isInstanceOf(Crash.class);
		s.world.catchUp(s.inc());
		Lock moving = s.locks().get(0);
		assertThat(moving.isMoving()).isTrue();
		assertThat(moving.from()).isEqualTo(new Position(2, 1));

		// the new process consumes stage 2 again from its committed offset, 0
		s.drain(Map.of(SimWorld.MAIN, 14L, STAGE_1, 2L, STAGE_2, 0L));
		s.assertQuiet("after L_A's move from (2, 1) was left unfinished and stage 2 was delivered again from offset 0");
		assertThat(s.runs).containsExactly("v10@orders", "v10@" + STAGE_1, "v10@" + STAGE_2, "v10@" + STAGE_2,
				"v11@" + STAGE_2);
	}

	/**
	 * Found by the simulation in the first router (seed 2891 with crashes only; 1174,
	 * 3195; 13226 loses a record); a regression test since. Two completions of one
	 * unfinished move can run at once: after a crash in the middle of step 3's move (lock
	 * written, nothing published), A is delivered again both from stage 1
	 * (docs/PROTOCOL.md, rule 2.3: it is the move's source) and, as T's offset 10 was not
	 * committed yet, from T (docs/PROTOCOL.md, rule 1.1, as it then read: a live lock has
	 * its origin and no {@code at}: complete the move). The container routes the two on
	 * two workers (different topic partitions). Each publishes a copy of A to stage 2 and
	 * then writes {@code at} unconditionally, so the later confirmation can name a copy
	 * that the stage-2 worker has already skipped as stale, and the other copy is then
	 * skipped too: A is lost, L_A is never released and B, forwarded behind it, waits
	 * forever. (When the first confirmed copy runs and releases L_A first, the late
	 * confirmation brings the released lock back instead: a leak.)
	 */
	@Test
	void concurrentCompletionsOfOneMoveMustNotLoseTheRecord() {
		Script s = new Script();
		stepsOneAndTwo(s);
		s.advance(Duration.ofSeconds(30));
		s.failing.add("v10@" + STAGE_1);
		s.crashBefore(Call.PUBLISH, 0);
		assertThatThrownBy(() -> s.route(STAGE_1, 0)).isInstanceOf(Crash.class);
		s.world.catchUp(s.inc());
		assertThat(s.locks().get(0).isMoving()).isTrue();

		// worker 1 routes A from stage 1 and publishes copy (2, 0); before it writes at
		// ...
		s.before(Call.WRITE, 0, (incarnation) -> {
			// ... worker 2 routes A from T (it may complete the move: copy (2, 1), at=1)
			// ...
			s.drain(Map.of(SimWorld.MAIN, 10L));
			// ... and the stage-2 worker reads (2, 0)
			if (s.route(STAGE_2, 0).kind() == Step.Kind.DONE) {
				s.done.add(STAGE_2 + "/0");
			}
		});
		assertThat(s.route(STAGE_1, 0).kind()).isEqualTo(Step.Kind.DONE);
		s.done.add(STAGE_1 + "/0");
		s.advance(Duration.ofMinutes(5));
		s.drain(Map.of(SimWorld.MAIN, 10L, STAGE_1, 0L, STAGE_2, 0L));
		assertThat(s.runs)
			.as("A (T/10) neither succeeded nor reached the DLQ: every copy of it in stage 2 was skipped "
					+ "as stale; lock log: " + s.world.replayLockLog().snapshot())
			.contains("v10@" + STAGE_2);
		s.assertQuiet("after two workers completed L_A's move concurrently");
		assertThat(s.runs).containsSubsequence("v10@" + STAGE_2, "v11@" + STAGE_2);
	}

	// ---- replays (docs/PROTOCOL.md, rule 2.0) and records of other groups
	// (docs/PROTOCOL.md, "Topics")

	private static final String DLQ = SimWorld.GROUP + "." + SimWorld.MAIN + ".dlq";

	/**
	 * Dead-letters a new record of key k at once, from the main topic; returns its dead
	 * letter.
	 */
	private static Rec deadLetterOfK(Script s) {
		Rec record = s.produce("k");
		s.permanent.add("v" + record.offset() + "@" + SimWorld.MAIN);
		assertThat(s.route(SimWorld.MAIN, record.offset()).kind()).isEqualTo(Step.Kind.DONE);
		List<Rec> letters = s.world.log(s.world.plan.dlqTopic(), 0);
		assertThat(letters).isNotEmpty();
		Rec letter = letters.get(letters.size() - 1);
		assertThat(letter.topic()).isEqualTo(DLQ);
		assertThat(header(letter, ProtocolHeaders.ORIGINAL_OFFSET)).isEqualTo(Long.toString(record.offset()));
		return letter;
	}

	@Test
	void aReplayAdmittedWhileItsKeyHasTwoRecordsInTheLadderRunsAfterBoth() {
		Script s = new Script();
		Rec letter = deadLetterOfK(s); // D, born at offset 10
		Rec a = s.produce("k");
		Rec b = s.produce("k");
		assertThat(a.offset()).isEqualTo(11);
		assertThat(b.offset()).isEqualTo(12);
		// A fails on T and moves to stage 1; B follows it there without running
		s.failing.add("v11@" + SimWorld.MAIN);
		assertThat(s.route(SimWorld.MAIN, 11).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.route(SimWorld.MAIN, 12).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.locks()).hasSize(2);

		// D is replayed into stage 1: its entry gets a pending lock and waits for
		// admission
		SimWorld.Replay replay = s.world.replay(letter);
		assertThat(replay.entry.topic()).isEqualTo(STAGE_1);
		assertThat(replay.entry.offset()).isEqualTo(2);
		assertThat(s.route(STAGE_1, 2, true).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		Lock pending = s.inc().table.find(replay.lockId);
		assertThat(pending.isPending()).isTrue();
		assertThat(pending.entry()).isEqualTo(2);
		assertThat(s.inc().table.pending(0)).containsExactly(pending);
		assertThat(s.route(STAGE_1, 2, true).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);

		// the owner of orders/0 admits it in k's turn, after offset 12, the last record
		// it took,
		// moving the entry to the end of stage 1
		assertThat(s.world.admit(s.inc(), replay.lockId, 12)).isTrue();
		Lock admitted = s.inc().table.find(replay.lockId);
		assertThat(admitted.originOffset()).isEqualTo(12);
		assertThat(admitted.isMoving()).isTrue();
		assertThat(admitted.from()).isEqualTo(new Position(1, 2));
		assertThat(admitted.entry()).isEqualTo(2);
		// it sorts after B, whose origin is the same offset: a main-topic record first
		assertThat(s.locks()).extracting(Lock::originOffset).containsExactly(11L, 12L, 12L);
		assertThat(s.locks().get(2).id()).isEqualTo(replay.lockId);
		assertThat(s.inc().table.pending(0)).isEmpty();
		// a second admission finds nothing pending
		assertThat(s.world.admit(s.inc(), replay.lockId, 12)).isFalse();
		// the entry finishes that move without running: D is written again at (1, 3)
		assertThat(s.route(STAGE_1, 2, true).kind()).isEqualTo(Step.Kind.DONE);
		assertLock(s.inc().table.find(replay.lockId), 12, 1, 3, 0);
		assertThat(s.runs).containsExactly("v10@orders", "v11@orders");

		// D waits behind B, B behind A, and A for its due time
		assertThat(s.route(STAGE_1, 3, true).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		assertThat(s.route(STAGE_1, 1, true).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		assertThat(s.route(STAGE_1, 0, true).kind()).isEqualTo(Step.Kind.WAIT_UNTIL);
		s.advance(Duration.ofSeconds(30));
		assertThat(s.route(STAGE_1, 3, true).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		assertThat(s.route(STAGE_1, 0, true).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.route(STAGE_1, 3, true).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		assertThat(s.route(STAGE_1, 1, true).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.route(STAGE_1, 3, true).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.runs).containsExactly("v10@orders", "v11@orders", "v11@" + STAGE_1, "v12@" + STAGE_1,
				"v10@" + STAGE_1);
		assertThat(replay.firstSuccess).isGreaterThan(s.world.produced.get(12).firstSuccess);
		assertThat(s.world.replayLockLog().snapshot()).isEmpty();
		assertThat(s.world.log(s.world.plan.dlqTopic(), 0)).containsExactly(letter);
	}

	@Test
	void aCrashBeforeTheAdmissionLeavesThePendingLockForTheRedeliveredEntryToFind() {
		Script s = new Script();
		Rec letter = deadLetterOfK(s);
		SimWorld.Replay replay = s.world.replay(letter);
		assertThat(s.route(STAGE_1, 0, true).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		long written = s.world.lockEnd(0);
		assertThat(s.world.replayLockLog().find(replay.lockId).isPending()).isTrue();

		// the process dies after writing the pending lock, before the owner of orders/0
		// admitted it
		s.world.restart(s.instance);
		// the entry is delivered again: on a table that has not caught up it writes
		// nothing ...
		assertThat(s.route(STAGE_1, 0).kind()).isEqualTo(Step.Kind.WAIT_FOR_TAILER);
		s.world.catchUp(s.inc());
		// ... and on a caught-up one it finds its pending lock (the same id) and waits
		// for it
		assertThat(s.route(STAGE_1, 0, true).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		assertThat(s.world.lockEnd(0)).isEqualTo(written);
		// the new owner of orders/0 finds it when its barrier opens; it dies again before
		// its write
		assertThat(s.inc().table.pending(0)).extracting(Lock::id).containsExactly(replay.lockId);
		s.crashBefore(Call.WRITE, 0);
		assertThatThrownBy(() -> s.world.admit(s.inc(), replay.lockId, 10)).isInstanceOf(Crash.class);
		assertThat(s.world.lockEnd(0)).isEqualTo(written);

		// the next one admits it, and the entry runs
		s.world.catchUp(s.inc());
		assertThat(s.inc().table.pending(0)).extracting(Lock::id).containsExactly(replay.lockId);
		assertThat(s.world.admit(s.inc(), replay.lockId, 10)).isTrue();
		assertThat(s.inc().table.find(replay.lockId).from()).isEqualTo(new Position(1, 0));
		assertThat(s.route(STAGE_1, 0, true).kind()).isEqualTo(Step.Kind.DONE);
		assertLock(s.inc().table.find(replay.lockId), 10, 1, 1, 0);
		assertThat(s.route(STAGE_1, 1, true).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.runs).containsExactly("v10@orders", "v10@" + STAGE_1);
		assertThat(replay.runs).isEqualTo(1);
		assertThat(s.world.replayLockLog().snapshot()).isEmpty();
	}

	@Test
	void aForeignTombstoneNamingOneOfOurLiveLocksDoesNotReleaseIt() {
		Script s = new Script();
		s.produce("k");
		s.failing.add("v10@" + SimWorld.MAIN);
		assertThat(s.route(SimWorld.MAIN, 10).kind()).isEqualTo(Step.Kind.DONE);
		Lock ours = s.locks().get(0);
		assertLock(ours, 10, 1, 0, 1);

		// another group releases L_A in the lock topic, so does a writer that names no
		// group;
		// the other group also moves it, and puts a lock and a pending replay on key k
		s.world.plantLock(0, ours.id(), K, null, SimWorld.OTHER_GROUP);
		s.world.plantLock(0, ours.id(), K, null, null);
		s.world.plantLock(0, ours.id(), K, new Lock(ours.id(), K, 0, 10, 2, 0L, null, 1, null, SimWorld.FORGED),
				SimWorld.OTHER_GROUP);
		s.world.plantLock(0, "F1", K, new Lock("F1", K, 0, 9, 1, 5L, null, 1, null, SimWorld.FORGED),
				SimWorld.OTHER_GROUP);
		s.world.plantLock(0, "F2", K, Lock.pendingReplay("F2", K, 0, 7, SimWorld.FORGED), SimWorld.OTHER_GROUP);
		// and it puts a copy of A that carries L_A's id in stage 1
		Rec a = s.record(SimWorld.MAIN, 10);
		RecordHeaders headers = new RecordHeaders();
		headers.add(SimWorld.USER_HEADER, a.value());
		headers.add(ProtocolHeaders.RETRY_COUNT, "1".getBytes(StandardCharsets.UTF_8));
		headers.add(ProtocolHeaders.LOCK_ID, ours.id().getBytes(StandardCharsets.UTF_8));
		headers.add(ProtocolHeaders.ORIGINAL_TOPIC, SimWorld.MAIN.getBytes(StandardCharsets.UTF_8));
		headers.add(ProtocolHeaders.ORIGINAL_PARTITION, "0".getBytes(StandardCharsets.UTF_8));
		headers.add(ProtocolHeaders.ORIGINAL_OFFSET, "10".getBytes(StandardCharsets.UTF_8));
		headers.add(Ownership.HEADER, SimWorld.OTHER_GROUP.getBytes(StandardCharsets.UTF_8));
		Rec copy = s.world.plantStage(STAGE_1, 0, a.key(), a.value(), headers);

		// the tailer reads past all of them and applies none: L_A is live and where it
		// was
		s.world.catchUp(s.inc());
		assertThat(s.locks()).containsExactly(ours);
		assertThat(s.inc().table.pending(0)).isEmpty();
		// so does a new process that builds its table from the whole lock topic
		s.world.restart(s.instance);
		s.world.catchUp(s.inc());
		assertThat(s.locks()).containsExactly(ours);
		assertThat(s.inc().table.find("F1")).isNull();
		assertThat(s.inc().table.pending(0)).isEmpty();

		// the copy is skipped, although it names a live lock of ours: not run, moved or
		// dead-lettered
		s.advance(Duration.ofSeconds(30));
		int stageRecords = s.world.log(STAGE_1, 0).size();
		assertThat(s.route(STAGE_1, copy.offset(), true).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.runs).containsExactly("v10@orders");
		assertThat(s.world.log(STAGE_1, 0)).hasSize(stageRecords);
		assertThat(s.world.log(STAGE_2, 0)).isEmpty();
		assertThat(s.world.log(s.world.plan.dlqTopic(), 0)).isEmpty();

		// A runs from its own record and releases L_A; nothing of the other group is left
		// in our view
		assertThat(s.route(STAGE_1, 0, true).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.runs).containsExactly("v10@orders", "v10@" + STAGE_1);
		assertThat(s.locks()).isEmpty();
		assertThat(s.world.replayLockLog().snapshot()).isEmpty();
		assertThat(s.world.ownership.foreignRecords(s.world.plan.lockTopic())).isPositive();
	}

	/**
	 * Found by the simulation (seed 67706 of the long run; 88789, 98028, 104471, 114675,
	 * 152516, 170816, 197397 and 199266 too), when an admitted replay still carried its
	 * lock where it had entered stage 1. A replay entry delivered again after its lock
	 * was released enters again (its lock id is named after the entry, so the new pending
	 * lock has the old id) and is admitted behind every live lock of its key. When one of
	 * those locks had a move in flight whose source record sat in stage 1 behind the
	 * entry (same key, same partition), the entry waited for that move to be confirmed,
	 * while the container routes the source only once the entry is done: neither ever
	 * moved, and the key was blocked for good. Now the admission moves the entry to the
	 * end of stage 1, behind that source, as a forward would.
	 * <p>
	 * Here: D's replay entry (1, 0) is moved to (1, 1), runs, fails and moves to stage 2;
	 * B follows it from T to (1, 2); routing B, the process writes {stage 2, from (1, 2)}
	 * (a forward behind D) and dies before publishing. The new process runs D in stage 2
	 * (it succeeds, its lock is released) and reads stage 1 again from offset 0: the
	 * entry enters again, is admitted behind B's lock and moved behind B's source, which
	 * finishes B's move first.
	 */
	@Test
	void aReplayEntryDeliveredAgainMustNotWaitForAMoveQueuedBehindIt() {
		Script s = new Script();
		Rec letter = deadLetterOfK(s); // D, born at offset 10
		SimWorld.Replay replay = s.world.replay(letter);
		assertThat(s.route(STAGE_1, 0, true).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		assertThat(s.world.admit(s.inc(), replay.lockId, 10)).isTrue();
		assertThat(s.route(STAGE_1, 0, true).kind()).isEqualTo(Step.Kind.DONE);
		s.failing.add("v10@" + STAGE_1);
		assertThat(s.route(STAGE_1, 1, true).kind()).isEqualTo(Step.Kind.DONE);
		assertLock(s.inc().table.find(replay.lockId), 10, 2, 0, 1);

		// B arrives on T while D is in the ladder: a follower, to (1, 2)
		Rec b = s.produce("k");
		assertThat(s.route(SimWorld.MAIN, b.offset()).kind()).isEqualTo(Step.Kind.DONE);
		assertLock(s.locks().get(1), 11, 1, 2, 0);
		// routing B in stage 1, the process forwards it behind D and dies before the
		// publish
		s.crashBefore(Call.PUBLISH, 0);
		assertThatThrownBy(() -> s.route(STAGE_1, 2)).isInstanceOf(Crash.class);
		s.world.catchUp(s.inc());
		Lock moving = s.locks().get(1);
		assertThat(moving.isMoving()).isTrue();
		assertThat(moving.from()).isEqualTo(new Position(1, 2));

		// the new process runs D in stage 2: it succeeds and its lock is released
		s.advance(Duration.ofMinutes(5));
		assertThat(s.route(STAGE_2, 0, true).kind()).isEqualTo(Step.Kind.DONE);
		assertThat(s.inc().table.find(replay.lockId)).isNull();

		// stage 1 is delivered again from its committed offset, 0: the entry enters
		// again, and
		// the owner of orders/0 admits it behind B's lock
		assertThat(s.route(STAGE_1, 0, true).kind()).isEqualTo(Step.Kind.WAIT_FOR_KEY);
		assertThat(s.world.admit(s.inc(), replay.lockId, 11)).isTrue();
		s.drain(Map.of(STAGE_1, 0L, STAGE_2, 1L));
		s.assertQuiet("after D's replay entry entered again behind B, whose move from (1, 1) is in flight");
	}

}
