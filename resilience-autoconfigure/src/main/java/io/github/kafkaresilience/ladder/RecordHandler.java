package io.github.kafkaresilience.ladder;

/**
 * Runs the user's handler on a record: deserializes it and invokes the listener method.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface RecordHandler {

	HandlerResult handle(Delivery delivery);

}
