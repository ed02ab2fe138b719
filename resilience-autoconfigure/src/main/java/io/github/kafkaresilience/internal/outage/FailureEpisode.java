package io.github.kafkaresilience.internal.outage;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

/**
 * The first attempts of a listener since its latest transient failure began an episode:
 * how many there were, how many failed transiently, across which keys. An episode starts
 * with a transient failure when none runs, and lasts at most a window; successes before
 * it do not count, so that a long healthy stretch does not hide an outage that begins
 * after it, and the breaker asks it for a minimum duration, so that a burst (many keys
 * failing at once while others still succeed, which on a freshly started instance may
 * open with a stretch of failures only) is not taken for an outage. The breaker guards
 * it, but for {@link #running()} and {@link #succeeded()}, which a healthy listener calls
 * for every record and which take no lock.
 */
final class FailureEpisode {

	private final long windowMillis;

	private final int[] failingKeys;

	private volatile boolean running;

	private long start;

	/** The most keys of failed first attempts an episode remembers for {@link #held}. */
	static final int MAX_EPISODE_KEYS = 4096;

	private final LongAdder successes = new LongAdder();

	/**
	 * The keys whose first attempt failed in this episode: only records held behind one
	 * of those count, not those of keys held since before it (after a restart, a backlog
	 * of keys in the ladder would look like an outage).
	 */
	private final Set<Integer> episodeKeys = new HashSet<>();

	private int failures;

	private int distinctKeys;

	FailureEpisode(long windowMillis, int keysToTell) {
		this.windowMillis = windowMillis;
		this.failingKeys = new int[keysToTell];
	}

	/** When the running episode began, epoch millis. */
	long start() {
		return this.start;
	}

	/** Whether an episode runs: without one, a success need not be counted. */
	boolean running() {
		return this.running;
	}

	void failed(long now, int keyHash) {
		restartIfOver(now);
		if (!this.running) {
			this.running = true;
			this.start = now;
		}
		this.failures++;
		addKey(keyHash);
		if (this.episodeKeys.size() < MAX_EPISODE_KEYS) {
			this.episodeKeys.add(keyHash);
		}
	}

	private void addKey(int keyHash) {
		if (this.distinctKeys < this.failingKeys.length && !contains(keyHash)) {
			this.failingKeys[this.distinctKeys++] = keyHash;
		}
	}

	/**
	 * Counts a record that could not run because its key is held (it follows its key into
	 * the ladder) as a failure of the running episode, when its key's first attempt
	 * failed in this episode; otherwise does nothing: a key held since before says
	 * nothing about now.
	 */
	void held(int keyHash) {
		if (this.running && this.episodeKeys.contains(keyHash)) {
			this.failures++;
		}
	}

	/** Counts a success in the running episode; without one, does nothing. */
	void succeeded() {
		if (this.running) {
			this.successes.increment();
		}
	}

	void clear() {
		this.running = false;
		this.episodeKeys.clear();
		this.successes.reset();
		this.failures = 0;
		this.distinctKeys = 0;
	}

	/**
	 * Whether the episode says that every key fails: it has lasted at least
	 * {@code minimumMillis}, with at least {@code minimumAttempts} attempts, at least
	 * {@code failureRate} of them failed, across at least {@code minimumKeys} keys.
	 */
	boolean tripped(long now, long minimumMillis, int minimumAttempts, double failureRate, int minimumKeys) {
		long attempts = this.failures + this.successes.sum();
		return this.running && now - this.start >= minimumMillis && attempts >= minimumAttempts
				&& this.failures >= failureRate * attempts && this.distinctKeys >= minimumKeys;
	}

	private void restartIfOver(long now) {
		if (this.running && now - this.start > this.windowMillis) {
			clear();
		}
	}

	private boolean contains(int keyHash) {
		for (int i = 0; i < this.distinctKeys; i++) {
			if (this.failingKeys[i] == keyHash) {
				return true;
			}
		}
		return false;
	}

}
