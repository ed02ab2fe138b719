package io.github.kafkaresilience.internal.lock;

import java.time.Instant;
import java.util.Locale;
import java.util.Objects;

import org.apache.kafka.common.utils.Bytes;

/**
 * An operator's command on one live lock (docs/PROTOCOL.md, rule 11): run the record that
 * carries it now, or dead-letter that record now. It is a record of the lock topic, in
 * the lock's partition, keyed {@code cmd:<id>}; it names the lock and the position at
 * which the operator saw it confirmed, and it is acted on only while the lock is still
 * confirmed there, by whichever instance holds the record at that position.
 *
 * @param id the command's own id (a random UUID; its record's key is {@code cmd:<id>})
 * @param action what to do with the record
 * @param lockId the lock the command is about
 * @param key the lock's business key (raw record key bytes)
 * @param partition the lock's partition (its lock partition, and its record's partition
 * in every topic of the ladder)
 * @param position the lock's confirmed position as the operator saw it
 * @param by who asked: the authenticated principal, or {@code anonymous}
 * @param requested when the command was accepted
 * @since 0.1.0
 */
public record OperatorCommand(String id, Action action, String lockId, Bytes key, int partition, Position position,
		String by, Instant requested) {

	/** The prefix of a command record's key, which no lock id has. */
	public static final String KEY_PREFIX = "cmd:";

	public OperatorCommand {
		Objects.requireNonNull(id, "id");
		Objects.requireNonNull(action, "action");
		Objects.requireNonNull(lockId, "lockId");
		Objects.requireNonNull(key, "key");
		Objects.requireNonNull(position, "position");
		Objects.requireNonNull(by, "by");
		Objects.requireNonNull(requested, "requested");
		if (position.stage() < 1) {
			throw new IllegalArgumentException(
					"A command names a lock's position in a retry stage (1..n), not stage " + position.stage());
		}
		if (partition < 0) {
			throw new IllegalArgumentException("A partition cannot be negative but was " + partition);
		}
	}

	/**
	 * A new command on {@code lock} as it is now: the lock must be confirmed at its
	 * stage.
	 * @throws IllegalArgumentException when the lock is moving or pending admission
	 */
	public static OperatorCommand on(Lock lock, Action action, String by, String id, Instant now) {
		Position position = lock.position();
		if (position == null || lock.isPending()) {
			throw new IllegalArgumentException(lock + " is " + (lock.isPending() ? "pending admission" : "moving")
					+ ": a command needs a lock confirmed at its stage");
		}
		return new OperatorCommand(id, action, lock.id(), lock.key(), lock.originPartition(), position, by, now);
	}

	/** The key of this command's record in the lock topic. */
	public String recordKey() {
		return KEY_PREFIX + this.id;
	}

	/** Whether a lock-topic record key is a command's rather than a lock id. */
	public static boolean isCommandKey(String recordKey) {
		return recordKey.startsWith(KEY_PREFIX);
	}

	/**
	 * Whether {@code lock} is still where this command found it: confirmed at the same
	 * position.
	 */
	public boolean appliesTo(Lock lock) {
		return lock.id().equals(this.lockId) && !lock.isPending() && this.position.equals(lock.position());
	}

	/** What a command asks for. */
	public enum Action {

		/**
		 * The record runs without waiting for its due time; the attempt counts as any
		 * other.
		 */
		RETRY_NOW,

		/**
		 * The record goes to the dead-letter topic with {@code dlq.reason=operator}; its
		 * lock is released.
		 */
		DEAD_LETTER_NOW;

		/**
		 * The action's name on the wire and in the API: {@code retry-now},
		 * {@code dead-letter-now}.
		 */
		public String value() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

		/**
		 * The action named {@code value}.
		 * @throws IllegalArgumentException for any other name
		 */
		public static Action of(String value) {
			for (Action action : values()) {
				if (action.value().equals(value)) {
					return action;
				}
			}
			throw new IllegalArgumentException(
					"Unknown operator action '" + value + "'; expected retry-now or " + "dead-letter-now");
		}

	}

}
