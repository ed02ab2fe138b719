package io.github.kafkaresilience.simulation;

/**
 * An invariant of the protocol was broken. An {@link Error} so that it travels through
 * the router (which only catches {@link RuntimeException}) and stops the run where it
 * happened.
 */
final class SimViolation extends AssertionError {

	private static final long serialVersionUID = 1L;

	SimViolation(String message) {
		super(message);
	}

}
