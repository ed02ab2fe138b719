/**
 * Internal, not API: may change in any release (see docs/API.md).
 * <p>
 * Outage mode: a breaker per listener that tells a dependency down for every key from
 * failures of some keys, so that the listener holds its records instead of moving every
 * key into the ladder, and resumes when a probe succeeds.
 */
@NullMarked
package io.github.kafkaresilience.internal.outage;

import org.jspecify.annotations.NullMarked;
