/**
 * Internal, not API: may change in any release (see docs/API.md).
 * <p>
 * Micrometer Observation of the retry engine: each attempt of a record and the sends that
 * carry it on, so that every attempt of a record is in one trace.
 */
@NullMarked
package io.github.kafkaresilience.internal.observation;

import org.jspecify.annotations.NullMarked;
