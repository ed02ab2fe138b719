package io.github.kafkaresilience.internal.container;

import java.util.Set;
import java.util.function.LongSupplier;

import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * A real {@link ParkedPass} for the simulation, which models parking with the decisions
 * the re-reader takes: the pass is package-private, and the library reaches it only
 * through {@link Rereader}.
 */
public final class TestParkedPass {

	/** See {@link ParkedPass.Verdict}. */
	public enum Verdict {

		TAKE, LEAVE, STOP

	}

	private final ParkedPass pass;

	private TestParkedPass(ParkedPass pass) {
		this.pass = pass;
	}

	/** See {@link ParkedPass#forDueRecords(long)}. */
	public static TestParkedPass forDueRecords(long lead) {
		return new TestParkedPass(ParkedPass.forDueRecords(lead));
	}

	/** See {@link ParkedPass#forCommands(Set)}. */
	public static TestParkedPass forCommands(Set<Bytes> keys) {
		return new TestParkedPass(ParkedPass.forCommands(keys));
	}

	/** See {@link ParkedPass#next(Bytes, LongSupplier, long)}. */
	public Verdict next(@Nullable Bytes key, LongSupplier due, long now) {
		return Verdict.valueOf(this.pass.next(key, due, now).name());
	}

}
