/**
 * Micrometer Observation of the retry engine: each attempt of a record and the sends that
 * carry it on, so that every attempt of a record is in one trace.
 */
@NullMarked
package io.github.kafkaresilience.observation;

import org.jspecify.annotations.NullMarked;
