/**
 * The user-facing API of ordered non-blocking retries: the {@code @OrderedRetryListener}
 * annotation and {@code PermanentFailureException}. The engine lives in the sub-packages.
 */
@NullMarked
package io.github.kafkaresilience;

import org.jspecify.annotations.NullMarked;
