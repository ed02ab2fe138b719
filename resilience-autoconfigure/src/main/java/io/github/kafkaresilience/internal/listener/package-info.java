/**
 * Internal, not API: may change in any release (see docs/API.md).
 * <p>
 * The listener side: annotation processing, the endpoints it finds, the invocation of
 * listener methods through spring-kafka's messaging infrastructure, and the registry that
 * creates and runs a container for each listener.
 */
@NullMarked
package io.github.kafkaresilience.internal.listener;

import org.jspecify.annotations.NullMarked;
