package io.github.kafkaresilience.outage;

/**
 * The last attempts of a listener, at most a given number and not older than a given time:
 * whether each failed transiently, and the hash of its key. Not thread-safe: the breaker
 * guards it.
 */
final class FailureWindow {

	private final long[] times;

	private final boolean[] failed;

	private final int[] keys;

	private final long windowMillis;

	private int next;

	private int size;

	FailureWindow(int capacity, long windowMillis) {
		this.times = new long[capacity];
		this.failed = new boolean[capacity];
		this.keys = new int[capacity];
		this.windowMillis = windowMillis;
	}

	void add(long now, boolean failedTransiently, int keyHash) {
		this.times[this.next] = now;
		this.failed[this.next] = failedTransiently;
		this.keys[this.next] = keyHash;
		this.next = (this.next + 1) % this.times.length;
		this.size = Math.min(this.size + 1, this.times.length);
	}

	void clear() {
		this.size = 0;
		this.next = 0;
	}

	/**
	 * Whether the attempts of the last {@code windowMillis} before {@code now} say that every
	 * key fails: at least {@code minimumAttempts} of them, at least {@code failureRate} of them
	 * failed, across at least {@code minimumKeys} keys.
	 */
	boolean tripped(long now, int minimumAttempts, double failureRate, int minimumKeys) {
		int attempts = 0;
		int failures = 0;
		int[] failingKeys = new int[minimumKeys];
		int distinct = 0;
		for (int i = 0; i < this.size; i++) {
			int slot = Math.floorMod(this.next - 1 - i, this.times.length);
			if (now - this.times[slot] > this.windowMillis) {
				break; // the rest is older still
			}
			attempts++;
			if (this.failed[slot]) {
				failures++;
				if (distinct < minimumKeys && !contains(failingKeys, distinct, this.keys[slot])) {
					failingKeys[distinct++] = this.keys[slot];
				}
			}
		}
		return attempts >= minimumAttempts && failures >= failureRate * attempts && distinct >= minimumKeys;
	}

	private static boolean contains(int[] keys, int count, int key) {
		for (int i = 0; i < count; i++) {
			if (keys[i] == key) {
				return true;
			}
		}
		return false;
	}

}
