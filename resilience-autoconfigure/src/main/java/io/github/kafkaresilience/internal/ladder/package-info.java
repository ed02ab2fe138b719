/**
 * Internal, not API: may change in any release (see docs/API.md).
 * <p>
 * The retry ladder at run time: the routing rules that keep a key's order, the moves that
 * carry a record up its stages to the dead-letter topic, the protocol headers, failure
 * classification and the publisher. Naming, creating and checking the ladder's topics is
 * {@code io.github.kafkaresilience.internal.topics}'s.
 */
@NullMarked
package io.github.kafkaresilience.internal.ladder;

import org.jspecify.annotations.NullMarked;
