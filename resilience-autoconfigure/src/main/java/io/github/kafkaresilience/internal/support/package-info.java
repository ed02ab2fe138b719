/**
 * What the rest of the library shares: the consumers and producers it reads and writes
 * its own topics with and their settings, sends and futures, back-off, callbacks and
 * escaped text for log lines.
 */
@NullMarked
package io.github.kafkaresilience.internal.support;

import org.jspecify.annotations.NullMarked;
