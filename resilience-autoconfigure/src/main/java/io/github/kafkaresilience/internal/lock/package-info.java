/**
 * Internal, not API: may change in any release (see docs/API.md).
 * <p>
 * The lock registry: lock records and their codec, the in-memory lock table, the tailer
 * that keeps it current from the compacted lock topic, and the coordinator that owns
 * them.
 */
@NullMarked
package io.github.kafkaresilience.internal.lock;

import org.jspecify.annotations.NullMarked;
