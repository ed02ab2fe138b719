/**
 * The dead-letter lifecycle: a handler called for every dead letter, off the hot path,
 * and its default that writes one incident line per dead letter.
 */
@NullMarked
package io.github.kafkaresilience.dlq;

import org.jspecify.annotations.NullMarked;
