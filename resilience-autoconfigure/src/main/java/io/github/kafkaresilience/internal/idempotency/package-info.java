/**
 * Internal, not API: may change in any release (see docs/API.md).
 * <p>
 * The idempotency guard: claims a record's idempotency key before its handler runs, skips
 * a record whose key was already completed, and releases the claim when the handler
 * fails.
 */
@NullMarked
package io.github.kafkaresilience.internal.idempotency;

import org.jspecify.annotations.NullMarked;
