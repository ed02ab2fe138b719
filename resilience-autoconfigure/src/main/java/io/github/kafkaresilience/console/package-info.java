/**
 * The operator's console: a page served by the application over the
 * {@code kafkaresilience} endpoint.
 */
@NullMarked
package io.github.kafkaresilience.console;

import org.jspecify.annotations.NullMarked;
