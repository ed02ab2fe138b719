/**
 * Internal, not API: may change in any release (see docs/API.md).
 * <p>
 * Micrometer meters of the retry engine; only used when Micrometer is on the class path.
 */
@NullMarked
package io.github.kafkaresilience.internal.metrics;

import org.jspecify.annotations.NullMarked;
