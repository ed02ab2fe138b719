package io.github.kafkaresilience.simulation;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

import io.github.kafkaresilience.simulation.SimWorld.Fail;
import io.github.kafkaresilience.simulation.SimWorld.Incarnation;
import io.github.kafkaresilience.simulation.SimWorld.RouteContext;
import io.github.kafkaresilience.simulation.SimWorld.TP;
import org.apache.kafka.common.KafkaException;

/**
 * The writes that no thread waits for: every send of a lock write or a publish made
 * through the async ports ({@code LockStore.writing}, {@code releasing},
 * {@code RecordPublisher.sending}) is held here until the scheduler lets it land and
 * acknowledges it, as a producer and its broker would.
 * <p>
 * A send first <em>lands</em> (its record is appended to its log, where tailers and
 * consumers see it; a clean failure lands nothing) and is then <em>acknowledged</em>: its
 * future completes, on the scheduler's thread, so whatever the router chained on it (the
 * next step of a move, its compensation) runs inside that action, as it runs on a
 * callback thread of the library. An ambiguous failure lands and is then reported failed.
 * A timeout fails the future at once while the send stays queued: it lands later, or
 * never.
 * <p>
 * Kafka's order is kept: the sends of one incarnation to one topic partition land and are
 * acknowledged in the order they were sent (an idempotent producer); sends to different
 * partitions, or of different incarnations, go in any order. When an incarnation crashes,
 * each of its sends not landed yet lands or is lost (per partition, a prefix lands) and
 * no future of it ever completes: the process is gone.
 */
final class SimSends {

	/** One send in flight. */
	static final class Send {

		final long id;

		final Incarnation from;

		final TP tp;

		/** What it writes, for the trace. */
		final String what;

		/**
		 * The route (or the move chained on it) that sent it: its checks run in that
		 * context.
		 */
		final RouteContext context;

		final Fail fail;

		/**
		 * Appends the record and makes the checks of a write; returns the record's
		 * offset.
		 */
		final LongSupplier write;

		final CompletableFuture<Long> future = new CompletableFuture<>();

		/**
		 * Landed (written) or, for a clean failure or a send lost for good, resolved
		 * unwritten.
		 */
		boolean resolved;

		boolean landed;

		long offset = -1;

		boolean timedOut;

		Send(long id, Incarnation from, TP tp, String what, RouteContext context, Fail fail, LongSupplier write) {
			this.id = id;
			this.from = from;
			this.tp = tp;
			this.what = what;
			this.context = context;
			this.fail = fail;
			this.write = write;
		}

		@Override
		public String toString() {
			return "s" + this.id + "(" + this.from + " " + this.what + " to " + this.tp
					+ (this.landed ? " landed @" + this.offset : this.resolved ? " not written" : "")
					+ (this.timedOut ? " timed out" : "") + ((this.fail != Fail.NONE) ? " fails " + this.fail : "")
					+ ")";
		}

	}

	private final SimWorld world;

	/**
	 * Every send not acknowledged yet (nor lost in a crash), in the order it was sent.
	 */
	private final List<Send> sends = new ArrayList<>();

	private long ids;

	/** Sends made, landed and acknowledged so far; for the stats. */
	long sent;

	long acknowledged;

	long timeouts;

	long landedAtCrash;

	long lostAtCrash;

	SimSends(SimWorld world) {
		this.world = world;
	}

	/**
	 * Sends a record without waiting.
	 * @param fail what the hook decided for this write: it lands and is acknowledged as
	 * usual, lands nothing and fails, or lands and fails
	 * @param write appends the record; called when it lands
	 * @return the future of the record's offset, completed when it is acknowledged
	 */
	CompletableFuture<Long> send(Incarnation from, TP tp, String what, Fail fail, LongSupplier write) {
		Send send = new Send(++this.ids, from, tp, what, this.world.contexts.peek(), fail, write);
		this.sends.add(send);
		this.sent++;
		this.world.trace(() -> "    " + from + " sends " + send);
		return send.future;
	}

	boolean isEmpty() {
		return this.sends.isEmpty();
	}

	/**
	 * The sends that an acknowledgement may complete next: the oldest of each incarnation
	 * and partition.
	 */
	List<Send> heads(Predicate<Incarnation> allowed) {
		List<Send> heads = new ArrayList<>();
		Set<String> seen = new HashSet<>();
		for (Send send : this.sends) {
			if (seen.add(send.from + " " + send.tp) && allowed.test(send.from)) {
				heads.add(send);
			}
		}
		return heads;
	}

	/**
	 * The sends that may land next: the oldest not landed yet of each incarnation and
	 * partition.
	 */
	List<Send> landable() {
		List<Send> next = new ArrayList<>();
		Set<String> seen = new HashSet<>();
		for (Send send : this.sends) {
			if (!send.resolved && seen.add(send.from + " " + send.tp)) {
				next.add(send);
			}
		}
		return next;
	}

	/** The sends whose futures have not completed: any of them may time out. */
	List<Send> awaited(Predicate<Incarnation> allowed) {
		List<Send> awaited = new ArrayList<>();
		for (Send send : this.sends) {
			if (!send.future.isDone() && allowed.test(send.from)) {
				awaited.add(send);
			}
		}
		return awaited;
	}

	/** The sends of an incarnation, in the order they were sent. */
	List<Send> of(Incarnation incarnation) {
		List<Send> of = new ArrayList<>();
		for (Send send : this.sends) {
			if (send.from == incarnation) {
				of.add(send);
			}
		}
		return of;
	}

	/**
	 * Whether a route of a record of {@code source} at {@code incarnation} has a send in
	 * flight.
	 */
	boolean inFlightFrom(Incarnation incarnation, TP source) {
		for (Send send : this.sends) {
			if (send.from == incarnation && send.context != null && send.context.delivery != null
					&& send.context.delivery.topic().equals(source.topic())
					&& send.context.delivery.partition() == source.partition()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Lands a send (appends its record), unless it fails cleanly; it waits for its
	 * acknowledgement. Every earlier send of its incarnation to its partition lands
	 * first.
	 */
	void land(Send send) {
		for (Send earlier : this.sends) {
			if (earlier == send) {
				break;
			}
			if (!earlier.resolved && earlier.from == send.from && earlier.tp.equals(send.tp)) {
				resolve(earlier, true);
			}
		}
		resolve(send, true);
	}

	/**
	 * Lands every send of the incarnation to {@code tp}: a write it now awaits comes
	 * after them.
	 */
	void flush(Incarnation incarnation, TP tp) {
		for (Send send : List.copyOf(this.sends)) {
			if (!send.resolved && send.from == incarnation && send.tp.equals(tp)) {
				resolve(send, true);
			}
		}
	}

	/**
	 * Acknowledges the oldest send of its incarnation and partition: lands it first if it
	 * has not landed, then completes its future, which runs what was chained on it. A
	 * send that timed out has no future left to complete: it lands now, or, when
	 * {@code lateLands} is false, never.
	 */
	void ack(Send send, boolean lateLands) {
		for (Send earlier : this.sends) {
			if (earlier == send) {
				break;
			}
			if (earlier.from == send.from && earlier.tp.equals(send.tp)) {
				throw new IllegalStateException("acknowledging " + send + " before " + earlier);
			}
		}
		if (!send.resolved) {
			resolve(send, !send.timedOut || lateLands);
		}
		this.sends.remove(send);
		this.acknowledged++;
		this.world.progress++;
		if (send.timedOut) {
			this.world
				.trace(() -> "    " + send.from + " hears of " + send + " after its timeout: nothing waits for it");
			return;
		}
		if (send.fail != Fail.NONE) {
			this.world.trace(() -> "    " + send.from + " ack of " + send + ": FAILED (injected"
					+ (send.landed ? ", ack lost" : ", not written") + ")");
			complete(send, null,
					new KafkaException("injected " + send.what + " failure" + (send.landed ? " after the write" : "")));
			return;
		}
		this.world.trace(() -> "    " + send.from + " ack of " + send);
		complete(send, send.offset, null);
	}

	/** The send's timeout fires: its future fails, the send itself goes on. */
	void timeOut(Send send) {
		send.timedOut = true;
		this.timeouts++;
		this.world.progress++;
		this.world.trace(() -> "    " + send.from + " TIMEOUT of " + send + " (it may still land)");
		complete(send, null, new KafkaException("Could not " + send.what + " within the timeout (simulated)"));
	}

	/**
	 * The incarnation died: each of its sends not landed yet lands or is lost, per
	 * partition a prefix landing ({@code lands} decides, in order), and none is ever
	 * acknowledged.
	 */
	void crash(Incarnation incarnation, Predicate<Send> lands) {
		Set<TP> lost = new HashSet<>();
		for (Send send : of(incarnation)) {
			if (!send.resolved) {
				boolean landing = !lost.contains(send.tp) && lands.test(send);
				if (!landing) {
					lost.add(send.tp);
				}
				resolve(send, landing);
				if (send.landed) {
					this.landedAtCrash++;
				}
				else {
					this.lostAtCrash++;
				}
			}
			this.sends.remove(send);
		}
	}

	private void resolve(Send send, boolean landing) {
		send.resolved = true;
		if (!landing || send.fail == Fail.CLEAN) {
			this.world.trace(() -> "    " + send.from + " " + send + " lands nothing");
			return;
		}
		RouteContext context = send.context;
		if (context != null) {
			this.world.contexts.push(context);
		}
		try {
			send.offset = send.write.getAsLong();
			send.landed = true;
		}
		finally {
			if (context != null) {
				this.world.contexts.pop();
			}
		}
	}

	/**
	 * Completes a future in the context of the route that sent it: the next step of its
	 * move runs.
	 */
	private void complete(Send send, Long offset, Throwable failure) {
		RouteContext context = send.context;
		if (context != null) {
			this.world.contexts.push(context);
		}
		try {
			if (failure != null) {
				send.future.completeExceptionally(failure);
			}
			else {
				send.future.complete(offset);
			}
		}
		finally {
			if (context != null) {
				this.world.contexts.pop();
			}
		}
	}

}
