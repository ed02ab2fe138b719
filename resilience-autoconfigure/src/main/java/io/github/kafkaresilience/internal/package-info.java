/**
 * The library's implementation. Nothing under {@code io.github.kafkaresilience.internal}
 * is API: its types may change or go away in any release, without notice. See
 * docs/API.md.
 */
@NullMarked
package io.github.kafkaresilience.internal;

import org.jspecify.annotations.NullMarked;
