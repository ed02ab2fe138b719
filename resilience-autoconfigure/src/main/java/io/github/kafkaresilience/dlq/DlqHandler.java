package io.github.kafkaresilience.dlq;

/**
 * Called once for every record that reaches a dead-letter topic, by a consumer of that
 * topic in a group of its own (so one instance handles each dead letter), never on the
 * path of the listener's records. This is the place for an alert, a ticket or a page. The
 * default, {@link IncidentLogDlqHandler}, writes one JSON line per dead letter; declare a
 * bean of this type to replace it.
 * <p>
 * Handling is at least once: after a crash or a rebalance a dead letter can be handled
 * again. An exception is logged with the dead letter's coordinates and counted, and the
 * handler moves on to the next dead letter.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface DlqHandler {

	void handle(DeadLetter deadLetter) throws Exception;

}
