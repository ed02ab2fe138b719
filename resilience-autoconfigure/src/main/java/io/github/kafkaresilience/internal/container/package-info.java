/**
 * Internal, not API: may change in any release (see docs/API.md).
 * <p>
 * The container that runs one ordered-retry listener: its poll loop, per-key queues over
 * worker threads, parking and reading again of far-off retries, the sync barrier and the
 * rebalance callbacks behind it, offset commits (by the consumer or in transactions), and
 * the figures that metrics and the actuator endpoint read.
 */
@NullMarked
package io.github.kafkaresilience.internal.container;

import org.jspecify.annotations.NullMarked;
