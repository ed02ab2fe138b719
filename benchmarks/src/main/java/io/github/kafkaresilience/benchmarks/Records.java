package io.github.kafkaresilience.benchmarks;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The records the scenarios send: each value starts with the record's sequence number (8
 * bytes, big-endian), so that a handler can tell which record it got without decoding
 * anything else; the rest of the value is padding up to the requested size.
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

	static long seq(byte[] value) {
		return ByteBuffer.wrap(value).getLong(0);
	}

	static byte[] key(String key) {
		return key.getBytes(StandardCharsets.UTF_8);
	}

}
