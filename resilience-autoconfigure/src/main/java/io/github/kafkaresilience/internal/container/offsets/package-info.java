/**
 * The offsets of a listener's partitions: the records handed out and not done yet, the
 * parked ones, the writes under way, and the offsets that can be committed.
 */
@NullMarked
package io.github.kafkaresilience.internal.container.offsets;

import org.jspecify.annotations.NullMarked;
