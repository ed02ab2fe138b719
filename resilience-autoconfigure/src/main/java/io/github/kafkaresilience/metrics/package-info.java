/**
 * Micrometer meters of the retry engine; only used when Micrometer is on the class path.
 */
@NullMarked
package io.github.kafkaresilience.metrics;

import org.jspecify.annotations.NullMarked;
