package io.github.kafkaresilience.internal.lock;

/**
 * The failure that made a record move, kept with an in-flight move so that a move
 * completed after a crash writes the same error headers.
 *
 * @param errorClass {@code transient} or {@code permanent}
 * @param message the exception message (may be empty)
 * @param exception the exception class name
 * @param timestamp when the failure happened, RFC 3339 UTC with nanos
 * @since 0.1.0
 */
public record FailureInfo(String errorClass, String message, String exception, String timestamp) {
}
