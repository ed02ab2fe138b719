/**
 * Internal, not API: may change in any release (see docs/API.md).
 * <p>
 * The operator's console: a page served by the application over the
 * {@code kafkaresilience} endpoint.
 */
@NullMarked
package io.github.kafkaresilience.internal.console;

import org.jspecify.annotations.NullMarked;
