/**
 * Internal, not API: may change in any release (see docs/API.md).
 * <p>
 * The topics of the retry ladders: their names from the templates, their creation and
 * checks, and the startup checks that no other consumer group wrote to them.
 */
@NullMarked
package io.github.kafkaresilience.internal.topics;

import org.jspecify.annotations.NullMarked;
