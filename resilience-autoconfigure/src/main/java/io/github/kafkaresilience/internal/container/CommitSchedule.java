package io.github.kafkaresilience.internal.container;

import java.time.Clock;
import java.util.Collection;

import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.internal.container.offsets.WritesUnderWay;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;

/**
 * When a container commits the offsets of the records done: every commit interval, and as
 * it lets go of partitions (those revoked, or all of them on shutdown) once their writes
 * under way have settled. A failed commit is logged; a later one commits the same offsets
 * or further ones. Poll thread only.
 */
final class CommitSchedule {

	/** Logs under the container's name, as operators configure it. */
	private static final Log logger = LogFactory.getLog(CommitSchedule.class);

	private final String id;

	private final OffsetCommitter committer;

	private final ContainerOffsets offsets;

	private final WritesUnderWay settling;

	private final ContainerSettings settings;

	private final Clock clock;

	private long lastCommit;

	CommitSchedule(String id, OffsetCommitter committer, ContainerOffsets offsets, WritesUnderWay settling,
			ContainerSettings settings, Clock clock) {
		this.id = id;
		this.committer = committer;
		this.offsets = offsets;
		this.settling = settling;
		this.settings = settings;
		this.clock = clock;
	}

	/** Whether a commit interval has passed since the last commit. */
	boolean due() {
		return this.clock.millis() - this.lastCommit >= this.settings.commitInterval().toMillis();
	}

	/**
	 * The commit of every interval: commits the offsets of some partitions that may be
	 * committed now, or has them committed soon without waiting (in {@code transaction}
	 * mode). A failure is logged, but for a wakeup: the container is stopping, and the
	 * caller ends what it does.
	 */
	void commit(Consumer<byte[], byte[]> consumer, Collection<TopicPartition> which) {
		commit(consumer, which, false);
	}

	private void commit(Consumer<byte[], byte[]> consumer, Collection<TopicPartition> which, boolean now) {
		this.lastCommit = this.clock.millis();
		try {
			if (now) {
				this.committer.commit(consumer, this.offsets.of(which));
			}
			else {
				this.committer.commitSoon(consumer, this.offsets.of(which));
			}
		}
		catch (WakeupException ex) {
			throw ex;
		}
		catch (RebalanceInProgressException ex) {
			// a cooperative or consumer-protocol rebalance under way: the partitions that
			// stay
			// are committed at the next interval, those that go when they are revoked
			if (logger.isDebugEnabled()) {
				logger.debug("Listener '" + this.id + "' commits the offsets of " + which
						+ " after the rebalance under way");
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Listener '" + this.id + "' could not commit the offsets of " + which + "; will try again", ex);
		}
	}

	/**
	 * The last commit of revoked partitions, once their writes under way have settled.
	 */
	void revoking(Consumer<byte[], byte[]> consumer, Collection<TopicPartition> revoked) {
		awaitSettling(revoked);
		commit(consumer, revoked, true);
	}

	/**
	 * The last commit on shutdown, once every write under way has settled; a failure is
	 * logged. The stop's wakeup, asked for while the poll loop was not in a poll, is
	 * raised by this commit, the consumer's next blocking call: the commit is made again,
	 * the wakeup being spent.
	 * @param assigned the partitions assigned still
	 */
	void shutdown(Consumer<byte[], byte[]> consumer, Collection<TopicPartition> assigned) {
		awaitSettling(null);
		try {
			try {
				commit(consumer, assigned, true);
			}
			catch (WakeupException ex) {
				commit(consumer, assigned, true);
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Listener '" + this.id + "' could not commit on shutdown", ex);
		}
	}

	/**
	 * Lets the writes under way of some partitions (all when {@code null}) finish before
	 * their last commit: a clean stop or a revocation then does not deliver their records
	 * again, and a move of this instance never lands after the partition's next owner has
	 * started (it would find the lock unknown, or moving on). Bounded by the shutdown
	 * timeout; the writes themselves are bounded by the write timeouts.
	 */
	private void awaitSettling(@Nullable Collection<TopicPartition> which) {
		if (!this.settling.await(which, this.settings.shutdownTimeout())) {
			logger.warn("Listener '" + this.id + "' let go of " + ((which != null) ? which : "its partitions")
					+ " before all writes under way completed; their records are delivered again");
		}
	}

}
