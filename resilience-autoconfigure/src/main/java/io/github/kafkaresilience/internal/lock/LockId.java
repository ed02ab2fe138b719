package io.github.kafkaresilience.internal.lock;

import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A lock id as the {@link LockTable} keeps it: two longs when the id is a UUID in its
 * canonical lower-case form (every id the library writes,
 * {@code UUID.randomUUID().toString()}), the string itself otherwise, so that any id read
 * from the lock topic comes back exactly as it was written.
 *
 * @param high the first 16 hex digits of a UUID id
 * @param low the last 16 hex digits of a UUID id
 * @param text the id when it is not a canonical UUID, else {@code null}
 */
record LockId(long high, long low, @Nullable String text) {

	private static final int LENGTH = 36;

	static LockId of(String id) {
		if (id.length() != LENGTH) {
			return new LockId(0, 0, id);
		}
		long high = 0;
		long low = 0;
		int digits = 0;
		for (int i = 0; i < LENGTH; i++) {
			char c = id.charAt(i);
			if (i == 8 || i == 13 || i == 18 || i == 23) {
				if (c != '-') {
					return new LockId(0, 0, id);
				}
				continue;
			}
			int digit = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
			if (digit < 0) {
				// upper case or not hex: UUID.toString would not give it back
				return new LockId(0, 0, id);
			}
			if (digits++ < 16) {
				high = (high << 4) | digit;
			}
			else {
				low = (low << 4) | digit;
			}
		}
		return new LockId(high, low, null);
	}

	static int hash(long high, long low, @Nullable String text) {
		return (text != null) ? text.hashCode() : Long.hashCode(high ^ low);
	}

	/**
	 * Orders ids as their strings do, which for two UUIDs is by their digits as unsigned
	 * numbers.
	 */
	static int compare(long high, long low, @Nullable String text, long otherHigh, long otherLow,
			@Nullable String otherText) {
		if (text == null && otherText == null) {
			int byHigh = Long.compareUnsigned(high, otherHigh);
			return (byHigh != 0) ? byHigh : Long.compareUnsigned(low, otherLow);
		}
		return toString(high, low, text).compareTo(toString(otherHigh, otherLow, otherText));
	}

	static String toString(long high, long low, @Nullable String text) {
		return (text != null) ? text : new UUID(high, low).toString();
	}

	int hash() {
		return hash(this.high, this.low, this.text);
	}

	@Override
	public String toString() {
		return toString(this.high, this.low, this.text);
	}

}
