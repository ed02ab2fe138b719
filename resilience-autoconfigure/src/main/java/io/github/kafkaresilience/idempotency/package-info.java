/**
 * The idempotency guard: claims a record's idempotency key before its handler runs, skips
 * a record whose key was already completed, and releases the claim when the handler
 * fails.
 */
@NullMarked
package io.github.kafkaresilience.idempotency;

import org.jspecify.annotations.NullMarked;
