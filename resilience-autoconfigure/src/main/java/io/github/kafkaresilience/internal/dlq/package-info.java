/**
 * Internal, not API: may change in any release (see docs/API.md).
 * <p>
 * The dead-letter lifecycle: a handler called for every dead letter, off the hot path,
 * and its default that writes one incident line per dead letter.
 */
@NullMarked
package io.github.kafkaresilience.internal.dlq;

import org.jspecify.annotations.NullMarked;
