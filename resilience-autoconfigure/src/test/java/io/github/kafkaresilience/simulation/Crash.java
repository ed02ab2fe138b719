package io.github.kafkaresilience.simulation;

/**
 * A simulated process death. Every port of a dead incarnation throws it. It is an
 * {@link Error} on purpose: the router's compensation paths catch
 * {@link RuntimeException}, and a dead process must not get to run them.
 */
final class Crash extends Error {

	private static final long serialVersionUID = 1L;

	Crash(String message) {
		super(message, null, false, false);
	}

}
