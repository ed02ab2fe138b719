package io.github.kafkaresilience.benchmarks;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The records the scenarios send: each value starts with the record's sequence number (8
 * bytes, big-endian), so that a handler can tell which record it got without decoding
 * anything else; the rest of the value is padding up to the requested size. A timed value
 * holds, in the next 8 bytes, the {@link System#nanoTime()} at which it was sent: the
 * producer and the handlers share the suite's JVM, so the handler can take the
 * produce-to-handle latency from it, to the nanosecond and unmoved by changes of the wall
 * clock (a record's CreateTime has milliseconds only).
 */
final class Records {

	private Records() {
	}

	static byte[] value(long seq, int size) {
		byte[] value = new byte[Math.max(size, Long.BYTES)];
		ByteBuffer.wrap(value).putLong(0, seq);
		for (int i = Long.BYTES; i < value.length; i++) {
			value[i] = (byte) ('a' + (i % 26));
		}
		return value;
	}

	/**
	 * A value that also carries when it was sent.
	 * @param seq the sequence number
	 * @param sentNanos {@link System#nanoTime()} just before the value is handed to the
	 * producer
	 * @param size the size of the value; at least 16 bytes are written
	 * @return the value
	 */
	static byte[] timedValue(long seq, long sentNanos, int size) {
		byte[] value = value(seq, Math.max(size, 2 * Long.BYTES));
		ByteBuffer.wrap(value).putLong(Long.BYTES, sentNanos);
		return value;
	}

	/** When a {@link #timedValue timed value} was sent ({@link System#nanoTime()}). */
	static long sentNanos(byte[] value) {
		return ByteBuffer.wrap(value).getLong(Long.BYTES);
	}

	static long seq(byte[] value) {
		return ByteBuffer.wrap(value).getLong(0);
	}

	static byte[] key(String key) {
		return key.getBytes(StandardCharsets.UTF_8);
	}

}
