package io.github.kafkaresilience.internal.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.lock.FailureInfo;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * The held keys of a ladder, as an operator looks for them: one row per key with live
 * locks, about its head (the lock with the lowest origin, the record the key waits for),
 * oldest first, searched by key, one page at a time. A page is built from one pass over
 * the live locks, so 100,000 of them cost a pass and a sort, never a page of 100,000
 * rows.
 *
 * @since 0.1.0
 */
public final class HeldKeys {

	private HeldKeys() {
	}

	/**
	 * One page of the held keys of one ladder.
	 * @param keyContains keeps the keys whose text contains it, ignoring case;
	 * {@code null} for all
	 * @param page the page, from 0
	 * @param size the rows per page
	 */
	static HeldPage page(String listenerId, LadderPlan plan, LockRegistry registry, @Nullable String keyContains,
			int page, int size, Instant now, @Nullable LastErrors lastErrors) {
		return page(listenerId, plan, registry.snapshot(), registry::commandsOf, keyContains, page, size, now,
				(lastErrors != null) ? lastErrors::of : null);
	}

	/**
	 * One page of the held keys of one ladder, from its live locks.
	 * @param live the live locks, read once
	 * @param commandsOf the pending commands on a lock
	 * @param lastErrors the last failures of the records at some places, {@code null} for
	 * none
	 */
	static HeldPage page(String listenerId, LadderPlan plan, Collection<Lock> live,
			Function<String, List<OperatorCommand>> commandsOf, @Nullable String keyContains, int page, int size,
			Instant now,
			@Nullable Function<List<LastErrors.Place>, Map<LastErrors.Place, LastErrors.LastError>> lastErrors) {
		Map<Bytes, Lock> heads = new HashMap<>();
		Map<Bytes, Integer> counts = new HashMap<>();
		int locks = 0;
		for (Lock lock : live) {
			locks++;
			counts.merge(lock.key(), 1, Integer::sum);
			heads.merge(lock.key(), lock, (a, b) -> (Lock.BY_ORIGIN.compare(a, b) <= 0) ? a : b);
		}
		String needle = (keyContains != null && !keyContains.isBlank()) ? keyContains.toLowerCase(Locale.ROOT) : null;
		List<Lock> rows = new ArrayList<>();
		for (Lock head : heads.values()) {
			if (needle == null || ConsoleViews.keyText(head.key()).toLowerCase(Locale.ROOT).contains(needle)) {
				rows.add(head);
			}
		}
		rows.sort(Comparator.comparing(Lock::updated).thenComparing(Lock::id));
		int from = (int) Math.min((long) page * size, rows.size());
		int to = Math.min(from + size, rows.size());
		List<Lock> shown = rows.subList(from, to);
		Map<LastErrors.Place, LastErrors.LastError> errors = (lastErrors != null)
				? lastErrors.apply(shown.stream().map((head) -> place(plan, head)).filter(Objects::nonNull).toList())
				: Map.of();
		List<HeldKey> keys = new ArrayList<>(to - from);
		for (Lock head : shown) {
			LastErrors.Place place = place(plan, head);
			keys.add(row(listenerId, plan, commandsOf, head, Objects.requireNonNull(counts.get(head.key())), now,
					(place != null) ? errors.get(place) : null));
		}
		return new HeldPage(listenerId, plan.group(), plan.mainTopic(), locks, heads.size(), rows.size(), page, size,
				keys);
	}

	/** Where the record that carries a confirmed head is; {@code null} while it moves. */
	private static LastErrors.@Nullable Place place(LadderPlan plan, Lock head) {
		if (head.at() == null || head.stage() > plan.lastStage()) {
			return null;
		}
		return new LastErrors.Place(plan.topicOf(head.stage()), head.originPartition(), head.at());
	}

	private static HeldKey row(String listenerId, LadderPlan plan, Function<String, List<OperatorCommand>> commandsOf,
			Lock head, int records, Instant now, LastErrors.@Nullable LastError lastError) {
		String stageTopic = (head.stage() <= plan.lastStage()) ? plan.topicOf(head.stage()) : null;
		Instant due = null;
		if (!head.isMoving() && !head.isPending() && head.retryCount() > 0 && head.stage() <= plan.lastStage()) {
			due = head.updated().plus(plan.stage(head.stage()).delay());
		}
		// a moving lock holds the failure that moves it; a confirmed one's is on its
		// record
		FailureInfo failure = head.failure();
		String errorClass = (failure != null) ? failure.exception()
				: (lastError != null) ? lastError.exception() : null;
		String errorMessage = (failure != null) ? failure.message() : (lastError != null) ? lastError.message() : null;
		List<String> commands = commandsOf.apply(head.id())
			.stream()
			.filter((command) -> command.appliesTo(head))
			.map((command) -> command.action().value())
			.toList();
		boolean actionable = !head.isMoving() && !head.isPending();
		return new HeldKey(ConsoleViews.keyText(head.key()), head.id(), records, head.stage(), stageTopic, head.at(),
				head.isMoving(), head.isPending(), head.retryCount(), head.updated(),
				Duration.between(head.updated(), now), due, errorClass, errorMessage, actionable, commands, listenerId,
				plan.mainTopic());
	}

	/**
	 * A page of held keys of one ladder.
	 *
	 * @param listener the listener id
	 * @param group its consumer group
	 * @param topic the main topic
	 * @param locks live locks in all
	 * @param keys keys with live locks in all
	 * @param matching keys that match the search
	 * @param page this page, from 0
	 * @param size rows per page
	 * @param held the rows of this page, oldest first
	 */
	public record HeldPage(String listener, String group, String topic, int locks, int keys, int matching, int page,
			int size, List<HeldKey> held) {
	}

	/**
	 * One held key, described by its head: the record it waits for.
	 *
	 * @param key the record key (text, or {@code base64:...})
	 * @param lockId the head's lock id, what an action names
	 * @param records the key's records in the ladder (its live locks)
	 * @param stage the stage the head waits in, or moves to
	 * @param stageTopic that stage's topic
	 * @param at the head's offset in that topic; {@code null} while it moves
	 * @param moving whether a move of the head is in flight
	 * @param pending whether the head is a replay not admitted yet
	 * @param attempts the failed attempts of the head so far
	 * @param since when the head's lock was last written
	 * @param age how long ago that was
	 * @param due when the head comes due (about: the lock is written right after its
	 * record); {@code null} for a head that runs as soon as its turn comes, or moves
	 * @param errorClass the exception class of the head's last failure (from the failure
	 * that moves it, or from its record's {@code error.exception}); {@code null} when it
	 * never ran
	 * @param errorMessage that failure's message
	 * @param actionable whether an operator may act on it now: confirmed at its stage
	 * @param commands operator commands pending on it
	 * @param listener the listener id
	 * @param topic the main topic
	 */
	public record HeldKey(String key, String lockId, int records, int stage, @Nullable String stageTopic,
			@Nullable Long at, boolean moving, boolean pending, int attempts, Instant since, Duration age,
			@Nullable Instant due, @Nullable String errorClass, @Nullable String errorMessage, boolean actionable,
			List<String> commands, String listener, String topic) {
	}

}
