/**
 * The listener side: annotation processing, the consumer container with per-key dispatch and
 * contiguous offset commits, and the sync barrier applied on partition assignment.
 */
@NullMarked
package io.github.kafkaresilience.listener;

import org.jspecify.annotations.NullMarked;
