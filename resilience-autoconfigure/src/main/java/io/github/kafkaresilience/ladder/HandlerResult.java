package io.github.kafkaresilience.ladder;

import org.jspecify.annotations.Nullable;

/**
 * What running the user's handler on a record gave.
 *
 * @param outcome success, failure, or a record that could not be deserialized
 * @param failure the exception, {@code null} on success
 * @since 0.1.0
 */
public record HandlerResult(Outcome outcome, @Nullable Throwable failure) {

	public enum Outcome {

		SUCCESS, FAILURE, POISON

	}

	private static final HandlerResult SUCCESS = new HandlerResult(Outcome.SUCCESS, null);

	public static HandlerResult success() {
		return SUCCESS;
	}

	public static HandlerResult failed(Throwable failure) {
		return new HandlerResult(Outcome.FAILURE, failure);
	}

	public static HandlerResult poison(Throwable failure) {
		return new HandlerResult(Outcome.POISON, failure);
	}

}
